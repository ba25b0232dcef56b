"""``python -m bench [kernel-name-substring ...]``: see :mod:`bench`;
``python -m bench equiv [REPEATS] [--cli] [NAME ...]``: see :mod:`bench.equiv`."""

import sys

if sys.argv[1:2] == ["equiv"]:
    from bench.equiv import main as equiv_main

    sys.exit(equiv_main(sys.argv[2:]))

from bench import main

sys.exit(main())
