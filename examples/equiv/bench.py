"""Decision times of ``ct.equiv`` on the pairs of this folder (issue 13: each under 2 s).

Run from the repository root:  .venv/bin/python examples/equiv/bench.py [REPEATS] [--cli] [NAME ...]
The same as ``python -m bench equiv`` (see bench/equiv.py): every pair here, the CFD interpolation
and the hidden-like pairs of review/, with the verdict, the expected one, and median and maximum
wall-clock times.  Not a test: no timing is asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from bench.equiv import main

if __name__ == "__main__":
    sys.exit(main())
