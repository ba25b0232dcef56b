"""Build the Cython kernels of ``native/`` as part of ``pip install`` (issue 5).

``-O3`` and ``-march=native`` let GCC vectorise the unit-stride inner loops
of ``native/teil_kernels.h``; OpenMP runs a batch program on every core.
No ``-ffast-math``: the kernels must keep NaN (the undefined value •) and
IEEE division exactly as the reference engine does.  Set
``CORE_TEIL_NO_OPENMP=1`` to build without OpenMP, or
``CORE_TEIL_PORTABLE=1`` to build without ``-march=native``.
"""

import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = [] if os.environ.get("CORE_TEIL_NO_OPENMP") else ["-fopenmp"]
arch = [] if os.environ.get("CORE_TEIL_PORTABLE") else ["-march=native", "-mprefer-vector-width=512"]

extensions = [
    Extension(
        "core_teil._native",
        ["native/_native.pyx"],
        include_dirs=[numpy.get_include(), "native"],
        depends=["native/teil_kernels.h"],
        extra_compile_args=["-O3", *arch, "-fno-math-errno", "-fno-trapping-math", *openmp],
        extra_link_args=openmp,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
]

setup(ext_modules=cythonize(extensions, language_level=3, quiet=True))
