# Two commands: `make run` and `make test` (and `make demo`, the RPC
# demo). Each creates .venv when it is missing and installs what it needs;
# nothing else has to be set up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-gantt
STATE := .state

.PHONY: run demo test lint install clean sample-config

# Every extra: the simulator's (make run), the tests' tools (ruff,
# mypy, pytest, ...) and the database and Redis drivers.
EXTRAS := simulate,test,postgres,mysql,redis
$(STAMP): setup.py pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

# The main job: the example simulation on the embedded default. It
# replays etc/examples/simulation/workload.yaml (6,000 servers) on the
# example cloud (160 hosts, a compact template) with gantt's real
# scheduler and placement code, writes the report (report.html,
# report.json, plots) to $(STATE)/simulation-report and prints its
# summary.
SIM := etc/examples/simulation
run: $(STAMP)
	$(BIN)/gantt-simulate run --cloud $(SIM)/cloud.yaml \
		--workload $(SIM)/workload.yaml --config-file $(SIM)/spread.conf \
		--out $(STATE)/simulation-report

# The RPC demo: load the example cloud into the database of
# etc/examples/demo.conf (.state/placement.sqlite; including a few
# allocations made through the atomic claim path), print providers,
# capacity and usage; then start gantt-scheduler in the background, send
# it a handful of select_destinations calls through the conductor client,
# print the Selections with their alternates and stop it cleanly. Every
# command names the config: nothing is set behind the user's back.
DEMO_CONF := etc/examples/demo.conf
demo: $(STAMP)
	rm -f $(STATE)/placement.sqlite*
	$(BIN)/gantt-manage --config-file $(DEMO_CONF) db sync
	$(BIN)/gantt-manage --config-file $(DEMO_CONF) cloud load etc/examples/cluster.yaml
	$(BIN)/gantt-manage --config-file $(DEMO_CONF) cloud show
	$(BIN)/python -m rpc.demo --config-file $(DEMO_CONF)

# mypy checks the modules listed in pyproject.toml ([tool.mypy] files:
# the public interfaces, as their type hints are completed).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# Two phases: the tests that share the machine well, two at a time (one
# pytest-xdist worker per core, a test file to a worker); then, alone,
# those marked serial (tests/conftest.py: each keeps both cores busy by
# itself, or restarts a server the others use).
test: lint
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not serial"
	$(BIN)/python -m pytest -m serial

sample-config: $(STAMP)
	$(BIN)/oslo-config-generator --config-file etc/gantt-config-generator.conf
	$(BIN)/oslopolicy-sample-generator --namespace gantt \
		--output-file etc/policy.yaml.sample

clean:
	rm -rf $(VENV) $(STATE) *.egg-info
