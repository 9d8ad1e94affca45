# evidence-dashboard: one command each for set-up, the demo site, the tests and the linters.
#
#   make site    create .venv, install the project (no extras), build the demo site into site/
#   make serve   preview the demo site on 127.0.0.1:8000, rebuilt and reloaded on every change
#   make test    install Debian's chromium + docker-registry if missing, run the suite with coverage
#   make lint    ruff check + mypy --strict on generator/
#   make demo    regenerate the signed demo tree under recipes/ from recipes/demo/scenario.yaml
#   make lock    re-resolve the dependencies and rewrite constraints.txt (the lock)
#
# Every path below is a variable, so a caller can point the targets elsewhere
# (for example `make site RECIPES=../aicr/recipes OCI_LAYOUT=...`).

PYTHON ?= python3
VENV ?= .venv
VENV_BIN := $(VENV)/bin
# Written after a successful install; older than pyproject.toml or constraints.txt means reinstall.
STAMP := $(VENV)/.install-stamp
EXTRAS ?= test,lint,authority
# pyproject's [build-system] backend, also in the venv so that wheels build offline (tests/infra).
BUILD_BACKEND ?= setuptools>=77
CONSTRAINTS ?= constraints.txt
PIP_INSTALL := $(VENV_BIN)/python -m pip install --disable-pip-version-check

# The demo evidence tree's layout (produced by the demo seam).
RECIPES ?= recipes
SITE_OUT ?= site
OCI_LAYOUT ?= $(RECIPES)/bundles
TRUST_ROOT ?= $(RECIPES)/trust/trusted_root.json
SCENARIO ?= $(RECIPES)/demo/scenario.yaml

# Branch coverage of generator/ (CLI included) measured 92.8%; the floor leaves a small margin.
COV_MIN ?= 92
PYTEST_ARGS ?=
SYSTEM_DEPS := scripts/install-system-deps.sh
LOCK_VENV := build/lock-venv

# MkDocs 1.x prints a banner about MkDocs 2 unless told not to (style-and-site.md 7.1).
export NO_MKDOCS_2_WARNING := 1
export DISABLE_MKDOCS_2_WARNING := true

.DEFAULT_GOAL := help
.PHONY: help venv venv-build site serve demo test system-deps lint bench lock clean distclean mutation mutation-ci

help:
	@echo "targets: venv site serve demo test lint bench lock clean distclean mutation mutation-ci"
	@echo "  make site   build the demo site into $(SITE_OUT)/ (creates $(VENV) first)"
	@echo "  make serve  preview the demo site with live reload (PORT=$(PORT))"
	@echo "  make test   system deps + the whole pytest suite, coverage >= $(COV_MIN)%"
	@echo "  make mutation  mutation testing of the trust core (long; mutation-ci: a sample)"

venv: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@test -x $(VENV_BIN)/python || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PIP_INSTALL) -c $(CONSTRAINTS) -e '.[$(EXTRAS)]' '$(BUILD_BACKEND)'
	@touch $@

# `make site` and `make serve` install only what a build needs (no test, lint or authority
# extras: those come with `make venv`, which test, lint, demo and bench depend on).
BUILD_STAMP := $(VENV)/.install-stamp-build

venv-build: $(BUILD_STAMP)

$(BUILD_STAMP): pyproject.toml $(CONSTRAINTS)
	@test -x $(VENV_BIN)/python || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PIP_INSTALL) -c $(CONSTRAINTS) -e . '$(BUILD_BACKEND)'
	@touch $@

site: venv-build
	$(VENV_BIN)/evidence-dashboard build --recipes $(RECIPES) --out $(SITE_OUT) --offline \
		--oci-layout $(OCI_LAYOUT) --trust-root $(TRUST_ROOT)

# A live preview: the site is rebuilt (from the caches) and the browser reloads on every change.
PORT ?= 8000
serve: venv-build
	$(VENV_BIN)/evidence-dashboard serve --recipes $(RECIPES) --offline \
		--oci-layout $(OCI_LAYOUT) --trust-root $(TRUST_ROOT) --port $(PORT)

demo: venv
	$(VENV_BIN)/python -m generator.testing.demo $(SCENARIO) --out $(RECIPES)

system-deps:
	bash $(SYSTEM_DEPS)

# Coverage options live here, not in addopts, so that running a subset of the tests stays quiet.
# pytest's exit code 5 means "no tests ran": it fails the target like any other non-zero code.
test: system-deps venv
	@rc=0; $(VENV_BIN)/python -m pytest --cov=generator --cov-report=term \
		--cov-fail-under=$(COV_MIN) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5); failing" >&2; fi; \
	exit $$rc

# The formatter check, both linters and the import contract (tests/architecture) always run,
# so one report shows every finding.
lint: venv
	@rc=0; \
	echo "$(VENV_BIN)/ruff format --check ."; $(VENV_BIN)/ruff format --check . || rc=1; \
	echo "$(VENV_BIN)/ruff check ."; $(VENV_BIN)/ruff check . || rc=1; \
	echo "$(VENV_BIN)/mypy generator"; $(VENV_BIN)/mypy generator || rc=1; \
	echo "$(VENV_BIN)/python -m pytest -q tests/architecture"; \
	$(VENV_BIN)/python -m pytest -q -p no:cacheprovider tests/architecture || rc=1; \
	exit $$rc

# The benchmark (issue "scale and hostile input"): synthetic signed trees at three sizes, cold and
# warm builds against the sigstore verify_dsse floor. Trees are cached under build/bench/.
BENCH_SIZES ?= 100,1000,10000
BENCH_LOOP_ROUNDS ?= 3
BENCH_COLD_ROUNDS ?= 3
bench: venv
	$(VENV_BIN)/python -m bench.run --sizes $(BENCH_SIZES) --loop-rounds $(BENCH_LOOP_ROUNDS) \
		--cold-rounds $(BENCH_COLD_ROUNDS)

# Mutation testing of the trust core (tests/mutation/README.md): small seeded bugs in the modules
# where a bug changes a verdict, each run against that module's tests; fails under 90% killed.
# `mutation` runs every mutant (long); `mutation-ci` runs the modules a change touches since
# MUTATION_BASE, else every module, a fixed-seed sample of MUTATION_CI_BUDGET mutants in all
# within MUTATION_CI_SECONDS: at that deadline the runner is stopped (SIGTERM), reports the
# mutants it ran and fails, so CI's time stays bounded whatever the number of modules.
MUTATION_ARGS ?=
MUTATION_CI_BUDGET ?= 120
MUTATION_CI_SECONDS ?= 300
MUTATION_BASE ?= origin/main
mutation: venv
	$(VENV_BIN)/python -m tests.mutation.mutate $(MUTATION_ARGS)

mutation-ci: venv
	timeout --signal=TERM --kill-after=30 $(MUTATION_CI_SECONDS) \
		$(VENV_BIN)/python -m tests.mutation.mutate --changed $(MUTATION_BASE) \
		--budget $(MUTATION_CI_BUDGET) --seed 1 $(MUTATION_ARGS)

# Resolve [project] dependencies afresh (no constraints) in a throw-away venv and pin the result.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --disable-pip-version-check -e '.[$(EXTRAS)]'
	{ echo "# The lock: exact pins of every third-party package in .venv (project extras $(EXTRAS))."; \
	  echo "# Regenerate with \`make lock\` after changing [project] dependencies in pyproject.toml."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable | grep -viE '^evidence[-_]dashboard=='; \
	} > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(SITE_OUT) build tests/artifacts .coverage .coverage.* coverage.xml htmlcov \
		.pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
