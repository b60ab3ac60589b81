# Two commands for newcomers (see README.md):
#   make lab    set everything up and open the course in JupyterLab
#   make update bring the course up to date (your work in work/ is kept)
#   make test   set everything up and run the whole test suite
# Both are idempotent: the virtual environment is rebuilt only when
# pyproject.toml or requirements/constraints.txt change.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.course-installed
CONSTRAINTS := requirements/constraints.txt
# The oldest Python the README allows (pyproject.toml: requires-python >=3.11). Every pin of the
# lock must install there: `make lock` resolves for it and `make check-lock` (CI) checks it.
# Debian 12's own Python is 3.11.2; soupsieve 3.0.2 and later need 3.11.5, so it is pinned lower.
OLDEST_PYTHON := 3.11.0
# The pinned torch of .venv/ (and of the lock file).
TORCH_PIN := torch==2.13.0
# The compatibility lane's torch: `make test-compat TORCH=2.14.1` (any version in pyproject's range).
TORCH  ?= 2.14.1
COMPAT_VENV ?= .venv-compat-$(TORCH)
space := $(subst ,, )
export OMP_NUM_THREADS ?= 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: lab update test test-compat setup-compat test-colab setup-colab test-slurm setup build lint unit nbval browser bench profile gpu-check lock check-lock doctor clean

# The server's root is the repository (not notebooks/), so the links from lessons to
# ../exercises/ and ../solutions/ and the README's course map all open in JupyterLab.
# JUPYTER_CONFIG_PATH adds .jupyter/ to Jupyter's config folders (yours still count): its
# labconfig/default_setting_overrides.json makes JupyterLab save widget state with the
# notebook (see docs/learner-journey.md); a setting you choose yourself still wins.
# work/ (not tracked by git) holds the learner's copies of the lessons, exercises and solutions,
# named so that they never look alike (05_lesson_..., 05_exercises_..., 05_solutions_...): make
# lab copies the ones it lacks, never overwriting, and opens lesson 00 there; a problem with one
# file (printed, with its fix) does not keep JupyterLab from starting. `make update` pulls the
# course and refreshes the copies the learner did not change, or only answered in
# (docs/learner-journey.md).
lab: setup
	$(BIN)/python -m course_helpers doctor || true
	$(BIN)/python -m course_helpers workspace || echo "make lab: starting JupyterLab anyway; the files named above are left as they are"
	env JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter" $(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" work/notebooks/00_lesson_start_here.ipynb $(LAB_ARGS)

# Update the course: git pull (fast-forward), then bring work/ up to date, keeping your answers.
update:
	@test -x $(BIN)/python || $(MAKE) setup
	$(BIN)/python -m course_helpers workspace --update

# build --check runs as tests/authoring/test_build.py::test_repository_build_is_up_to_date
# --no-loadscope-reorder: files start in collection order (tests/ first, the browser files
# among them), not most-tests-first, which left the long browser files for the end.
# -m "not colab": tests/colab/ needs ipywidgets 7 and runs in its own venv (`make test-colab`).
# -n 3 on two cores: the browser and grading tests spend much of their time waiting (a page,
# a sandboxed kernel, a grader held to half a processor), which a third worker fills
# (docs/benchmarks.md, "A third worker": pytest 455 s against 502 s, quiet, headless shell).
test: setup lint
	$(BIN)/python -m pytest -n 3 --dist loadfile --no-loadscope-reorder -p no:cacheprovider -rs \
		-m "not colab" --nbval tests notebooks solutions $(PYTEST_ARGS)

setup: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= tuple(map(int, "$(OLDEST_PYTHON)".split("."))) else "Python $(OLDEST_PYTHON) or newer is needed (found " + sys.version.split()[0] + ")")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@if $(BIN)/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then \
		$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[test]'; \
	else \
		echo "note: the lock file was made on Python 3.11; installing from pyproject ranges with $(TORCH_PIN)"; \
		$(BIN)/python -m pip install --quiet '$(TORCH_PIN)' -e '.[test]'; \
	fi
	touch $(STAMP)

build: setup
	$(BIN)/python -m course_helpers build

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider -m "not browser and not colab" tests $(PYTEST_ARGS)

nbval: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -p no:cacheprovider --nbval notebooks solutions $(PYTEST_ARGS)

browser: setup
	$(BIN)/python -m pytest -p no:cacheprovider -m browser tests $(PYTEST_ARGS)

bench: setup
	$(BIN)/python benchmarks/run_all.py

# Where a test command's time goes (benchmarks/profile_tests.py, docs/benchmarks.md): CPU of
# the whole process tree, tests per lane, kernel starts, the slowest files. Profiles
# `make test` unless PROFILE_COMMAND names another (`.ci/run`, `make test-compat TORCH=2.11.0`).
PROFILE_COMMAND ?= make test
PROFILE_DIR ?= build/profile
profile: setup
	rm -rf $(PROFILE_DIR)
	$(BIN)/python benchmarks/profile_tests.py --out $(PROFILE_DIR) -- $(PROFILE_COMMAND)

# On a CUDA machine (docs/gpu.md): nbval, unit tests and the lesson 11/13 demonstrations with
# the GPU, and one table of the results. Without a CUDA device it says so and runs nothing.
gpu-check: setup
	$(BIN)/python benchmarks/gpu_check.py $(GPU_CHECK_ARGS)

doctor: setup
	$(BIN)/python -m course_helpers doctor

# The SLURM lane (docs/grading.md, "SLURM"): installs slurm-wlm and munge from Debian if they
# are missing, starts a one-node cluster, grades a small class as a job array with the afterok
# merge and compares it with one process; a grader-wide failure must fail the array. Needs
# root (CI runs it as root; elsewhere `make test-slurm SUDO=sudo`). It stops its daemons.
SUDO ?=
test-slurm: setup
	$(SUDO) deploy/slurm/ci-lane.sh

# Compatibility lanes (README, "Tested versions"): under another torch, in a virtual environment
# of its own (COMPAT_VENV, default .venv-compat-<version>/, made once and kept), nbval over every
# lesson and solution and every test whose outcome can depend on torch: all of tests/ but the
# browser tests, the Colab-like lane and the tests marked torch_independent (tests/conftest.py
# says which and why; `make test` runs them). Every other package is the lock file's pin (on
# Python 3.11; elsewhere pyproject's ranges), except what torch's own requirements bound per
# release (COMPAT_UNPINNED: 2.11 asks setuptools<82, 2.13 and 2.14 >=77.0.3), so only torch
# and those differ from `make test`. CI runs TORCH=2.11.0 (Colab's) and TORCH=2.14.1 (the
# newest supported); instructors can name any version in pyproject's range.
COMPAT_UNPINNED := torch setuptools
# setup-compat: only the lane's venv (CI makes each venv first, one at a time, as each pip run
# builds the course in this checkout, then runs the lanes side by side)
setup-compat: $(COMPAT_VENV)/.course-installed
test-compat: $(COMPAT_VENV)/.course-installed
	$(COMPAT_VENV)/bin/python -c 'import sys, torch; v = torch.__version__; sys.exit(0 if "$(TORCH)" in (v, v.split("+")[0]) else f"$(COMPAT_VENV) has torch {v}, not $(TORCH)")'
	$(COMPAT_VENV)/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder -p no:cacheprovider -rs \
		-m "not browser and not colab and not torch_independent" --nbval tests notebooks solutions $(PYTEST_ARGS)

$(COMPAT_VENV)/.course-installed: pyproject.toml $(CONSTRAINTS)
	test -x $(COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install --quiet --upgrade pip
	grep -v -i -E '^($(subst $(space),|,$(COMPAT_UNPINNED)))==' $(CONSTRAINTS) > $(COMPAT_VENV)/constraints-compat.txt
	@if $(COMPAT_VENV)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then \
		$(COMPAT_VENV)/bin/python -m pip install --quiet -c $(COMPAT_VENV)/constraints-compat.txt 'torch==$(TORCH)' -e '.[test]'; \
	else \
		$(COMPAT_VENV)/bin/python -m pip install --quiet 'torch==$(TORCH)' -e '.[test]'; \
	fi
	touch $@

# Colab-like lane: Colab's kernel-side widget stack (ipywidgets 7.7.1, widgetsnbextension
# 3.6.10, ipykernel 6.17.1, IPython 7.34.0; requirements/colab.txt) with torch 2.13.0, in
# .venv-colab/, made once and kept. Every other package is the lock file's pin. The course is
# then installed as a learner installs it on Colab, with its dependencies and no pin on the
# widget stack, and the recipe fails if pip changed Colab's versions (pyproject's ranges must
# accept them). tests/colab/ then runs every lesson and exercise notebook headless in that
# venv's kernel (docs/learner-journey.md).
COLAB_VENV ?= .venv-colab
COLAB_PINS := requirements/colab.txt
# Two workers, each notebook's tests on one of them (tests/conftest.py groups them: the
# notebook runs once per worker), kernels forked from a template as in `make test`.
setup-colab: $(COLAB_VENV)/.course-installed
test-colab: $(COLAB_VENV)/.course-installed
	$(COLAB_VENV)/bin/python -m pytest -n 2 --dist loadgroup -p no:cacheprovider -rs -m colab tests/colab $(PYTEST_ARGS)

$(COLAB_VENV)/.course-installed: pyproject.toml $(CONSTRAINTS) $(COLAB_PINS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "the Colab-like lane is pinned for Python 3.11 (found " + sys.version.split()[0] + ")")'
	test -x $(COLAB_VENV)/bin/python || $(PYTHON) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install --quiet --upgrade pip
	grep -v -i -E '^(ipywidgets|widgetsnbextension|jupyterlab_widgets|ipykernel|ipython|ipython_pygments_lexers|comm)==' \
		$(CONSTRAINTS) > $(COLAB_VENV)/constraints-colab.txt
	$(COLAB_VENV)/bin/python -m pip install --quiet -c $(COLAB_VENV)/constraints-colab.txt -r $(COLAB_PINS)
	$(COLAB_VENV)/bin/python -m pip install --quiet -c $(COLAB_VENV)/constraints-colab.txt -e .
	$(COLAB_VENV)/bin/python -c "$$COLAB_VERSIONS_KEPT" $(COLAB_PINS)
	touch $@

# Fails, naming the package, when the venv's ipywidgets, widgetsnbextension, ipykernel or
# ipython is not the version requirements/colab.txt (the file named as argv[1]) pins.
define COLAB_VERSIONS_KEPT
import re, sys
from importlib.metadata import version
pins = re.findall(r"^(ipywidgets|widgetsnbextension|ipykernel|ipython)==(\S+)$$", open(sys.argv[1]).read(), re.M)
moved = [f"{name} {version(name)} (Colab has {pin})" for name, pin in pins if version(name) != pin]
assert len(pins) == 4, "requirements/colab.txt must pin the widget stack"
sys.exit(f"installing the course changed Colab's versions: {', '.join(moved)}" if moved else 0)
endef
export COLAB_VERSIONS_KEPT

# Re-pin: resolve pyproject's ranges for the oldest Python the README allows (so no pin needs a
# newer one), install that set into a scratch venv, freeze it (setuptools too: the test extra
# asks for it, and pip freeze leaves it out unless --all), then check the result as CI does.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --dry-run --quiet --ignore-installed --only-binary=:all: \
		--python-version $(OLDEST_PYTHON) --report .lock-venv/oldest.json '$(TORCH_PIN)' '.[test]'
	.lock-venv/bin/python -c "$$PINS_OF_REPORT" .lock-venv/oldest.json > .lock-venv/oldest.txt
	.lock-venv/bin/python -m pip install --quiet -c .lock-venv/oldest.txt '$(TORCH_PIN)' -e '.[test]'
	echo "# Pinned, tested versions for 'make lab' / 'make test' (Python 3.11; they install on $(OLDEST_PYTHON)). Regenerate with 'make lock'." > $(CONSTRAINTS)
	.lock-venv/bin/python -m pip freeze --all --exclude pip --exclude-editable | grep -v '^-e' | sed 's/+cpu//' >> $(CONSTRAINTS)
	$(call check_lock,.lock-venv/bin/python)
	rm -rf .lock-venv

# name==version of every distribution a pip --report (argv[1]) would install, but the course
define PINS_OF_REPORT
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    if not item.get("is_direct"):
        print(f"{item['metadata']['name']}=={item['metadata']['version']}")
endef
export PINS_OF_REPORT

# The lock installs on the oldest Python the README allows: pip resolves every pin (its
# Requires-Python and a wheel for it) for $(OLDEST_PYTHON) without installing anything. With
# LOCK_PYTHON=/usr/bin/python3.11 (CI: Debian 12's own Python, 3.11.2) it also resolves the
# lock with that very interpreter, in a scratch venv made from it.
check-lock: setup
	$(call check_lock,$(BIN)/python)

# $(call check_lock,PYTHON): the check, with the pip of PYTHON (pip 22.3 or newer)
define check_lock
	$(1) -m pip install --dry-run --quiet --ignore-installed --only-binary=:all: \
		--python-version $(OLDEST_PYTHON) -r $(CONSTRAINTS)
	@echo "the lock installs on Python $(OLDEST_PYTHON) (pip --dry-run --python-version)"
	@if [ -n "$(LOCK_PYTHON)" ]; then \
		scratch=$$(mktemp -d) && $(LOCK_PYTHON) -m venv --without-pip $$scratch/venv && \
		$(1) -m pip --python $$scratch/venv/bin/python install --dry-run --quiet \
			--ignore-installed --only-binary=:all: -r $(CONSTRAINTS); status=$$?; \
		version=$$($$scratch/venv/bin/python -c 'import sys; print(sys.version.split()[0])'); \
		rm -rf $$scratch; test $$status = 0 || exit $$status; \
		echo "the lock installs on $(LOCK_PYTHON), Python $$version (pip --dry-run --python)"; \
	fi
endef

clean:
	rm -rf $(VENV) .venv-compat-* $(COLAB_VENV) build .pytest_cache .ruff_cache
