"""Build the Cython kernels of ``native/`` as part of ``pip install`` (issue 5).

The default build is portable: ``-O3`` for the compiler's baseline of this
architecture (x86-64: SSE2), so a wheel built here runs on any CPU of the
kind.  ``CORE_TEIL_NATIVE_ARCH=1`` opts in to ``-march=native`` (AVX2 or
AVX-512 for the unit-stride inner loops of ``native/teil_kernels.h``); such
a build dies with SIGILL on an older CPU, so it is never the default, and
``make bench`` prints which build it measured (``core_teil.native._native.BUILD``).
OpenMP runs a batch program on every core.  No ``-ffast-math``: the kernels
must keep NaN (the undefined value •) and IEEE division exactly as the
reference engine does.  ``CORE_TEIL_NO_OPENMP=1`` builds without OpenMP.
"""

import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = [] if os.environ.get("CORE_TEIL_NO_OPENMP") else ["-fopenmp"]
native_arch = bool(os.environ.get("CORE_TEIL_NATIVE_ARCH"))
arch = ["-march=native", "-mprefer-vector-width=512"] if native_arch else []
build = ("native-arch" if native_arch else "portable") + ("" if openmp else ", no OpenMP")

extensions = [
    Extension(
        "core_teil.native._native",
        ["native/_native.pyx"],
        include_dirs=[numpy.get_include(), "native"],
        depends=["native/teil_kernels.h"],
        extra_compile_args=["-O3", *arch, "-fno-math-errno", "-fno-trapping-math", *openmp],
        extra_link_args=openmp,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"), ("CORE_TEIL_BUILD", f'"{build}"')],
    )
]

setup(ext_modules=cythonize(extensions, language_level=3, quiet=True))
