# skillwire: `make serve` serves the bundled example skills; `make test` runs every check;
# `make docs` builds the documentation site into build/docs (`make test` builds it too);
# `make fuzz` runs the property tests (tests/property) with many more generated examples (~minutes).
# Each sets up what it needs: a virtual environment in .venv and the Node.js test tools in tools/node.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
NICE ?=
HOST ?= 127.0.0.1
PORT ?= 8000
SKILLS ?= 10000
NODE_TOOLS := tools/node/node_modules/.package-lock.json
DOCS_DEPS := $(VENV)/.docs-deps

.PHONY: serve test docs fuzz bench interop-peers lint typecheck pytest tools venv peers chromium nginx promtool clean

serve: $(BIN)/skillwire
	$(BIN)/skillwire serve examples/skills --http $(HOST):$(PORT)

# One make with three jobs: the venv, the Node tools and the system packages are set up side by side, then pytest
# starts while the interop peer's venv is made and lint, the type check and the site's build run beside it, at the
# lowest CPU priority (NICE): pytest leaves about a quarter of the two cores idle while its tests wait on servers,
# and those checks fill that instead of slowing the tests. Each job's lines stay whole.
test:
	$(MAKE) --no-print-directory -j 3 --output-sync=line NICE="nice -n 19" pytest peers lint typecheck docs

# The documentation site (docs/): Sphinx with MyST-Parser, Furo and sphinx-argparse rather than MkDocs, Material and
# mkdocstrings (MkDocs 1.x is unmaintained, Material is in maintenance mode, Zensical's releases do not install
# here; docs/conf.py says more). -W: every warning fails the build, a broken page link or heading anchor included;
# then docs/linkcheck.py checks every internal href, src and #anchor of the built HTML. About 10 s from clean.
docs: $(DOCS_DEPS)
	$(NICE) $(BIN)/sphinx-build -q -W --keep-going -b html -d build/doctrees docs build/docs
	$(NICE) $(BIN)/python docs/linkcheck.py build/docs

# The property tests under hypothesis's `long` profile (tests/conftest.py): random, 5,000 examples each.
fuzz: $(BIN)/skillwire
	SKILLWIRE_HYPOTHESIS=long $(BIN)/pytest tests/property -q

# Every benchmark on 10,000 generated skills, skillwire beside its peers (installs the peers on first use; ~25 min).
bench: $(BIN)/skillwire
	$(BIN)/python -m bench --skills $(SKILLS)

# skillwire's host against agentskills-mcp-server 0.7 (tests/interop/test_agentskills.py), which needs Python 3.12
# (from pyenv, or python3.12 on PATH): not part of `make test`. Installs the peer on first use, as `make bench` does.
interop-peers: $(BIN)/skillwire
	SKILLWIRE_INTEROP_PEERS=1 $(BIN)/pytest tests/interop/test_agentskills.py -q -p no:xdist

lint: $(BIN)/skillwire
	$(NICE) $(BIN)/ruff check .
	$(NICE) $(BIN)/ruff format --check .

typecheck: $(BIN)/skillwire
	$(NICE) $(BIN)/mypy

# pytest exits 5 when it collected no test; make treats that, like any non-zero status, as a failure.
# Three worker processes, each taking whole files (module fixtures start once): most tests wait on real servers.
# Bytecode is cached for this run even where PYTHONDONTWRITEBYTECODE is set: the suite starts hundreds of Python
# processes, and without the cache each compiles every module it imports and pytest re-rewrites every test file.
pytest: $(BIN)/skillwire $(NODE_TOOLS) chromium nginx promtool
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n 3 --dist loadfile

# The interop tests' FastMCP runs from a venv of its own in .cache/peers, over .venv's packages (about 3 s to make, then
# reused): made here while pytest runs, not before it (`make test`); an interop test that needs it first waits on
# the venv's lock.
peers: $(BIN)/skillwire
	$(BIN)/python -c 'from bench.peers import ensure_peer_venv; from tests.interop.conftest import FASTMCP; ensure_peer_venv(FASTMCP)'

# `/metrics` is checked by Prometheus's own linter (tests/service/test_ops.py): promtool, from Debian's `prometheus`
# package (--no-install-recommends keeps the install to the package itself; the tests run only promtool, but where
# apt starts services Debian starts the Prometheus server too: docs/install.md says how to stop it).
# The three apt targets run one after another (order-only prerequisites), so a parallel make never runs two apt-gets.
promtool: | nginx
	command -v promtool >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus)

# The catalog page's browser tests drive Debian's headless Chromium (tests/browser). Its recommends (fonts, upower,
# udev, a notification daemon, the printer tool that brings avahi-daemon) are not needed headless: the browser tests
# pass on a bookworm with Chromium installed without them, so none of their daemons is installed or started.
chromium:
	command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium)

# The reverse-proxy tests run their own nginx (Debian's, not its service) in front of `skillwire serve`
# (tests/service/test_reverse_proxy.py). Debian puts it in /usr/sbin.
nginx: | chromium
	PATH="$$PATH:/usr/sbin" command -v nginx >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx)

venv: $(BIN)/skillwire

# --no-compile: modules are byte-compiled when first imported, so the thousands never imported cost nothing (~4 s).
$(BIN)/skillwire: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(BIN)/pip install --quiet --no-compile -e '.[dev]'
	touch $@

# The site's tools (pyproject's `docs` extra) go into .venv after the rest, so that pytest does not wait for them.
# `make test` installs them while the tests run, so they may only add packages: what is installed already is a
# constraint, and a docs tool that wants another version of one fails here, loudly, instead of changing it under
# the tests.
$(DOCS_DEPS): $(BIN)/skillwire
	$(BIN)/pip freeze --exclude-editable --disable-pip-version-check > $(VENV)/installed.txt
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs']))" > $(VENV)/docs-requirements.txt
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(NICE) $(BIN)/pip install --quiet --no-compile -c $(VENV)/installed.txt -r $(VENV)/docs-requirements.txt
	touch $@

tools: $(NODE_TOOLS)

$(NODE_TOOLS): tools/node/package.json tools/node/package-lock.json
	cd tools/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

clean:
	rm -rf $(VENV) tools/node/node_modules .mypy_cache .ruff_cache .pytest_cache test-artifacts build .cache
