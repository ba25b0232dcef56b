"""Kernels people already have, as TeIL programs (issue 12): einsum strings (``einsum``), ONNX
graphs (``onnx``) and the paper's operator language (``ops``, paper 000, section 5)."""
