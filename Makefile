# Two commands: `make run` and `make test`. Each creates .venv when it is
# missing and installs what it needs; nothing else has to be set up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-gantt
STATE ?= .state
export OS_DEFAULT__STATE_PATH ?= $(abspath $(STATE))

.PHONY: run test lint install clean sample-config

$(STAMP): setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,postgres,mysql,redis]'
	touch $(STAMP)

install: $(STAMP)

# The main job on the embedded default (an SQLite file in $(STATE), the
# in-process message transport): load the example cloud, including a few
# allocations made through the atomic claim path, print providers,
# capacity and usage; then start gantt-scheduler in the background, send
# it a handful of select_destinations calls through the conductor client,
# print the Selections with their alternates and stop it cleanly.
run: $(STAMP)
	rm -f $(STATE)/placement.sqlite*
	$(BIN)/gantt-manage db sync
	$(BIN)/gantt-manage cloud load etc/examples/cluster.yaml
	$(BIN)/gantt-manage cloud show
	$(BIN)/python -m rpc.demo

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest

sample-config: $(STAMP)
	$(BIN)/oslo-config-generator --config-file etc/gantt-config-generator.conf
	$(BIN)/oslopolicy-sample-generator --namespace gantt \
		--output-file etc/policy.yaml.sample

clean:
	rm -rf $(VENV) $(STATE) *.egg-info
