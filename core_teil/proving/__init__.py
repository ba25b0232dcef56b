"""Certificates: proof obligations derived from the semantics, their discharge by Z3, the padding
simulation, counterexamples replayed through the reference engine, and ``equiv`` (issue 13)."""
