"""``python -m proofs`` (``make verify``): re-check the meta-theory of Core-TeIL."""

import sys

from .run import main

if __name__ == "__main__":
    sys.exit(main())
