# Two entry points: `make demo` and `make test`. Both create .venv on first use and install from the lock file
# (requirements.lock), so a fresh clone gets exactly the versions the suite was run on.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TRAIN_STAMP := $(VENV)/.installed-train
LOCK := requirements.lock

.PHONY: demo test test-fast install install-train lock test-latest lint bench clean

$(STAMP): $(LOCK) pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q 'pip==26.3'
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q --no-deps -r $(LOCK)  # the lock is the whole closure (tools/lock.sh)
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# transformers/peft/trl (LoRA imitator training) and PySCIPOpt, CPU, from their own lock
install-train: $(TRAIN_STAMP)

$(TRAIN_STAMP): $(STAMP) requirements-train.lock
	$(BIN)/pip install -q --no-deps -r requirements-train.lock
	touch $(TRAIN_STAMP)

demo: $(STAMP)
	$(BIN)/askopt demo

# the suite covers the imitator's training path (tiny CPU models), so it runs on the train lock too
test: $(STAMP) $(TRAIN_STAMP)
	$(BIN)/lint-imports --config .importlinter
	$(BIN)/python -m pytest -p no:cacheprovider --durations=25 tests

# the suite without the tests marked slow (RLlib/Tune training, Ray Serve clusters, replica kills): for quick
# local runs; `make test` (and CI) still runs everything
test-fast: $(STAMP) $(TRAIN_STAMP)
	$(BIN)/lint-imports --config .importlinter
	$(BIN)/python -m pytest -p no:cacheprovider -m "not slow" tests

# Re-resolve requirements*.lock from pyproject.toml (after changing a dependency).
lock: $(STAMP)
	bash tools/lock.sh

# The newest releases allowed by pyproject.toml, in a separate venv: run on purpose (or on a schedule) so that a
# breaking release is seen here before a user meets it.
# torch stays pinned (2.13.0, the CPU build) and is installed first, so nothing re-resolves it; the suite needs the
# train and scip extras as `make test` does (the train lock holds both).
test-latest:
	rm -rf .venv-latest && $(PY) -m venv .venv-latest
	.venv-latest/bin/pip install -q --upgrade pip
	.venv-latest/bin/pip install -q torch==2.13.0
	.venv-latest/bin/pip install -q --upgrade --upgrade-strategy eager -e '.[dev,train,scip]' torch==2.13.0
	.venv-latest/bin/python -c "import torch; v = torch.__version__; assert v.startswith('2.13.0') and not torch.cuda.is_available() and torch.version.cuda is None, v"
	.venv-latest/bin/pip list --format=freeze > .venv-latest/resolved.txt
	.venv-latest/bin/lint-imports --config .importlinter
	.venv-latest/bin/python -m pytest -p no:cacheprovider tests

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --config .importlinter

bench: $(STAMP)
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .venv-latest build *.egg-info .pytest_cache
