"""The language: syntax trees, the parser and printer, shapes, the type system (T-* rules) and lowering.

The layer every other one builds on; it imports nothing of theirs (SPEC.md sections 2 and 3;
paper 000, Fig. 5, 6 and 8)."""
