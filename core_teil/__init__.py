"""core-teil: a mechanized semantics and proof checker for Core-TeIL."""

__version__ = "0.1.0"
