# Sessiondesk: `make run` serves the demo, `make test` runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv
VPY := $(VENV)/bin/python
PG_TEST_URL ?= postgres://root@127.0.0.1:5432/sessiondesk
HOST ?= 127.0.0.1:8000

# Django 6 needs Python >= 3.12: an explicit PYTHON=, else the first interpreter that runs and says so.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.14 \
	$$(ls -d $$(pyenv root 2>/dev/null)/versions/3.1[2-9]*/bin/python3 2>/dev/null) \
	/usr/bin/python3.13 /usr/bin/python3.12 python3; do \
	  "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { command -v "$$p"; break; }; \
	done)

.PHONY: help install lock run serve test test-sqlite test-postgres test-citus lint typecheck demo bench browsers screenshots

help:
	@echo "make run    serve the product with demo data on http://$(HOST)"
	@echo "make serve  the production server (gunicorn + WhiteNoise) on $(HOST)"
	@echo "make test   run ruff, mypy and the whole suite on SQLite and PostgreSQL"

$(VPY):
	@if [ -z "$(PYTHON)" ]; then \
	  echo "No Python >= 3.12 found. Install python3.12 or python3.13 (apt-get install python3.13, or pyenv install 3.12) or pass PYTHON=/path/to/python3.12." >&2; exit 1; fi
	"$(PYTHON)" -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

# constraints.txt pins every package to the versions the suite last passed with, so a release upstream cannot change
# what a fresh clone installs; `make lock` moves them to the newest versions pyproject.toml allows.
install: $(VPY)
	$(VPY) -m pip install -q -c constraints.txt -e '.[test]'

lock:
	rm -rf .venv-lock && "$(PYTHON)" -m venv .venv-lock && .venv-lock/bin/pip install -q -e '.[test]' && \
	{ echo "# Written by make lock: every package make install installs, at the version the suite passes with."; \
	  .venv-lock/bin/pip freeze --exclude-editable; } > constraints.txt; status=$$?; rm -rf .venv-lock; exit $$status

# The demo runs with DEBUG on; everything else (and production) has it off unless set.
run: export DEBUG ?= true
run: install
	$(VPY) manage.py migrate --noinput
	$(VPY) manage.py seed_demo --if-empty
	$(VPY) manage.py runserver $(HOST)

# Production: gunicorn workers, static files collected and served hashed by WhiteNoise. Needs SECRET_KEY,
# ALLOWED_HOSTS and (for PostgreSQL) DATABASE_URL in the environment; see README "Production".
serve: install
	$(VPY) manage.py migrate --noinput
	$(VPY) manage.py serve --bind $(HOST)

test: install
	$(VPY) -m ruff check .
	$(MAKE) --no-print-directory typecheck
	$(MAKE) --no-print-directory test-sqlite
	$(MAKE) --no-print-directory test-postgres

# Browser tests run in a process of their own: Playwright's sync API keeps an event loop in the main thread.
# They need Chromium: .ci/chromium installs it where allowed (root with apt), else they are skipped with a message
# saying how to get them; under CI=true a missing Chromium fails.
BROWSER_TESTS = status=0; .ci/chromium || status=$$?; \
	if [ $$status = 0 ]; then $(1) $(VPY) -m pytest -m browser $(PYTEST_ARGS); \
	elif [ $$status = 2 ]; then exit 1; fi

test-sqlite:
	@echo "== tests on SQLite =="
	env -u DATABASE_URL $(VPY) -m pytest -m "not browser" $(PYTEST_ARGS)
	@$(call BROWSER_TESTS,env -u DATABASE_URL)

test-postgres:
	@echo "== tests on PostgreSQL =="
	@url="$${DATABASE_URL:-$(PG_TEST_URL)}"; \
	if ! $(VPY) tests/ensure_postgres.py "$$url"; then \
	  if [ "$$CI" = "true" ]; then echo "CI requires PostgreSQL at $$url." >&2; exit 1; fi; \
	  echo "SKIPPED: PostgreSQL at $$url is not reachable (set DATABASE_URL or start the server)."; exit 0; fi; \
	DATABASE_URL="$$url" $(VPY) -m pytest -m "not browser" $(PYTEST_ARGS) && \
	{ $(call BROWSER_TESTS,DATABASE_URL="$$url"); }

# The PostgreSQL pass on a Citus cluster (docs/SCALING.md): the test database is made on the coordinator and both
# workers by ../shared/citus/cluster.sh (Citus creates a database on its workers only from template1, so
# pytest-django reuses the one made here), migrated, then distributed by distribute_tenants (tests/conftest.py,
# under SESSIONDESK_CITUS_TESTS). Skipped with a message when Citus is not installed or the script is missing.
CITUS_DIR ?= $(firstword $(wildcard ../shared/citus ../../shared/citus))
CITUS_TEST_URL ?= postgres://root@127.0.0.1:5441/sd_citus
test-citus:
	@echo "== tests on Citus =="
	@if [ -z "$(CITUS_DIR)" ] || ! ls /usr/lib/postgresql/*/lib/citus.so >/dev/null 2>&1; then \
	  if [ "$$CI" = "true" ] && [ -n "$(CITUS_DIR)" ]; then echo "CI requires Citus: run $(CITUS_DIR)/build.sh." >&2; exit 1; fi; \
	  echo "SKIPPED: Citus is not installed (../shared/citus/build.sh builds it, cluster.sh beside it runs it)."; exit 0; fi; \
	"$(CITUS_DIR)/cluster.sh" start >/dev/null && \
	"$(CITUS_DIR)/cluster.sh" reset test_$(notdir $(CITUS_TEST_URL)) >/dev/null && \
	DATABASE_URL="$(CITUS_TEST_URL)" SESSIONDESK_CITUS_TESTS=1 $(VPY) -m pytest -m "not browser" --reuse-db $(PYTEST_ARGS)

lint: install
	$(VPY) -m ruff check .

# mypy --strict with django-stubs over all product code: the packages are listed in pyproject.toml [tool.mypy] files.
typecheck: install
	$(VPY) -m mypy --strict

bench: install
	$(VPY) bench/ingest.py

# PNGs of each main view for the README, taken by the browser tests (needs /usr/bin/chromium).
screenshots: install
	SESSIONDESK_SCREENSHOTS=docs/screenshots env -u DATABASE_URL $(VPY) -m pytest -m browser tests/sessions_app/dashboard/browser
