"""Build the Cython kernels of ``native/`` as part of ``pip install`` (issue 5)."""

import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = [] if os.environ.get("CORE_TEIL_NO_OPENMP") else ["-fopenmp"]

extensions = [
    Extension(
        "core_teil._native",
        ["native/_native.pyx"],
        include_dirs=[numpy.get_include()],
        extra_compile_args=["-O3", "-march=native", "-ffast-math", "-fno-finite-math-only", *openmp],
        extra_link_args=openmp,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
]

setup(ext_modules=cythonize(extensions, language_level=3, quiet=True))
