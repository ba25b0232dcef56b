# The two set-up-free entry points are `make verify` and `make test`; both
# create .venv and install the package (with its Cython extension) first,
# from the exact versions of requirements.lock (docs/decisions.md, "The lock").
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per build flavour, so that `CORE_TEIL_NATIVE_ARCH=1 make install` rebuilds.
STAMP := $(VENV)/.installed-$(if $(CORE_TEIL_NATIVE_ARCH),native-arch,portable)
LOCK := requirements.lock
PIP := $(BIN)/python -m pip --disable-pip-version-check
# The one tool that writes the lock, itself pinned; it lives in a throwaway venv.
UV_VERSION := 0.13.9

.PHONY: install test verify verify-latest bench bench-scale lint lock clean

install: $(STAMP)

# Every package, build tools included, comes from the lock with its hash; the
# package itself is then built from those (no build isolation, so no unpinned
# setuptools or Cython is fetched behind the lock's back) and installed
# without resolving anything more.
$(STAMP): pyproject.toml setup.py $(LOCK) $(wildcard native/*.pyx native/*.pxd native/*.h)
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(PIP) install -q --require-hashes -r $(LOCK)
	$(PIP) install -q --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

test: install
	$(BIN)/python -m pytest -x -p no:cacheprovider

verify: install
	$(BIN)/python -m proofs

# Not part of CI: the newest z3-solver and cvc5 from the registry, in a
# throwaway venv, against the locked run, lemma by lemma.
# `make verify-latest Z3=z3-solver==5.4.0` compares a chosen release instead.
Z3 ?= z3-solver
CVC5 ?= cvc5
verify-latest: install
	$(BIN)/python -m proofs.latest --z3 '$(Z3)' --cvc5 '$(CVC5)'

bench: install
	$(BIN)/python -m bench

# Not part of make test (issue 17): 1,000 generated kernels proved cold and warm, --jobs 1 and 2,
# and interp at E = 2x10^6 through dask (5.5 GB in, 5.5 GB out on disk, about 10 minutes).
bench-scale: install
	$(BIN)/python -m bench.scale

lint: install
	$(BIN)/ruff check core_teil proofs tests bench

# Rewrite requirements.lock from pyproject.toml (every extra) and
# requirements/build.in: exact versions, every file's hash, for every platform.
lock:
	rm -rf build/lock-venv
	$(PY) -m venv build/lock-venv
	build/lock-venv/bin/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	build/lock-venv/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	    --extra dev --extra bench --extra onnx --extra scale --no-header pyproject.toml requirements/build.in -o $(LOCK)
	rm -rf build/lock-venv

clean:
	rm -rf $(VENV) build *.egg-info core_teil/*.so core_teil/*/*.so native/*.c
