# The two set-up-free entry points are `make verify` and `make test`; both
# create .venv and install the package (with its Cython extension) first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test verify bench lint clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py $(wildcard native/*.pyx native/*.pxd native/*.h)
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

test: install
	$(BIN)/python -m pytest -x -p no:cacheprovider

verify: install
	$(BIN)/python -m proofs

# the `bench` extra of pyproject.toml (matplotlib for the chart), without rebuilding the package
bench: install
	$(BIN)/python -m pip install -q 'opt_einsum>=3.3' 'matplotlib>=3.7' || echo "matplotlib unavailable: plain chart"
	$(BIN)/python -m bench

lint: install
	$(BIN)/ruff check core_teil proofs tests bench

clean:
	rm -rf $(VENV) build *.egg-info core_teil/*.so native/*.c
