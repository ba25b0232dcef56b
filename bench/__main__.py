"""``python -m bench [kernel-name-substring ...]``: see :mod:`bench`;
``python -m bench equiv [REPEATS] [--cli] [NAME ...]``: see :mod:`bench.equiv`;
``python -m bench einsum [REPEATS]``: see :mod:`bench.einsum`;
``python -m bench cross-core [SECONDS]``: see :mod:`bench.cross_core`;
``python -m bench team-gemm [ROUNDS] [--force]``: see :mod:`bench.team_gemm`."""

import sys

if sys.argv[1:2] == ["equiv"]:
    from bench.equiv import main as equiv_main

    sys.exit(equiv_main(sys.argv[2:]))

if sys.argv[1:2] == ["einsum"]:
    from bench.einsum import main as einsum_main

    sys.exit(einsum_main(sys.argv[2:]))

if sys.argv[1:2] == ["cross-core"]:
    from bench.cross_core import main as cross_core_main

    sys.exit(cross_core_main(sys.argv[2:]))

if sys.argv[1:2] == ["team-gemm"]:
    from bench.team_gemm import main as team_gemm_main

    sys.exit(team_gemm_main(sys.argv[2:]))

from bench import main

sys.exit(main())
