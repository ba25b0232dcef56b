"""Kernels people already have, as TeIL programs: einsum strings (issue 12)."""
