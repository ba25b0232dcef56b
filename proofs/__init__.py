"""The meta-theory of Core-TeIL, re-checked with Z3 (``make verify``)."""
