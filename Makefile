# Two commands for newcomers (see README.md):
#   make lab    set everything up and open the course in JupyterLab
#   make test   set everything up and run the whole test suite
# Both are idempotent: the virtual environment is rebuilt only when
# pyproject.toml or requirements/constraints.txt change.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.course-installed
CONSTRAINTS := requirements/constraints.txt
TORCH  := torch==2.13.0
export OMP_NUM_THREADS ?= 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: lab test setup build lint unit nbval browser bench gpu-check lock doctor clean

# The server's root is the repository (not notebooks/), so the links from lessons to
# ../exercises/ and ../solutions/ and the README's course map all open in JupyterLab.
# JUPYTER_CONFIG_PATH adds .jupyter/ to Jupyter's config folders (yours still count): its
# labconfig/default_setting_overrides.json makes JupyterLab save widget state with the
# notebook (see docs/learner-journey.md); a setting you choose yourself still wins.
lab: setup
	$(BIN)/python -m course_helpers doctor || true
	env JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" notebooks/00_start_here.ipynb $(LAB_ARGS)

# build --check runs as tests/authoring/test_build.py::test_repository_build_is_up_to_date
# --no-loadscope-reorder: files start in collection order (tests/ first, the browser files
# among them), not most-tests-first, which left the long browser files for the end.
test: setup lint
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder -p no:cacheprovider -rs \
		--nbval tests notebooks solutions $(PYTEST_ARGS)

setup: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed (found " + sys.version.split()[0] + ")")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@if $(BIN)/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then \
		$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[test]'; \
	else \
		echo "note: the lock file was made on Python 3.11; installing from pyproject ranges with $(TORCH)"; \
		$(BIN)/python -m pip install --quiet '$(TORCH)' -e '.[test]'; \
	fi
	touch $(STAMP)

build: setup
	$(BIN)/python -m course_helpers build

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider -m "not browser" tests $(PYTEST_ARGS)

nbval: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider --nbval notebooks solutions $(PYTEST_ARGS)

browser: setup
	$(BIN)/python -m pytest -p no:cacheprovider -m browser tests $(PYTEST_ARGS)

bench: setup
	$(BIN)/python benchmarks/run_all.py

# On a CUDA machine (docs/gpu.md): nbval, unit tests and the lesson 11/13 demonstrations with
# the GPU, and one table of the results. Without a CUDA device it says so and runs nothing.
gpu-check: setup
	$(BIN)/python benchmarks/gpu_check.py $(GPU_CHECK_ARGS)

doctor: setup
	$(BIN)/python -m course_helpers doctor

# Re-pin: install from pyproject ranges into a scratch venv and freeze it.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet '$(TORCH)' -e '.[test]'
	echo "# Pinned, tested versions for 'make lab' / 'make test' (Python 3.11). Regenerate with 'make lock'." > $(CONSTRAINTS)
	.lock-venv/bin/pip freeze --exclude-editable | grep -v '^-e' | sed 's/+cpu//' >> $(CONSTRAINTS)
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache
