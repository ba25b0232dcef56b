"""``python -m bench [kernel-name-substring ...]``: see :mod:`bench`."""

import sys

from bench import main

sys.exit(main())
