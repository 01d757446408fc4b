# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SHARED ?= ../shared
DEMO_DIR := .demo

.PHONY: install demo test lint clean train-data train-prepare

# llama-cpp-python is built from source on first install (about 7 minutes on 2 cores); pip
# keeps the wheel in its cache, so never pass --no-cache-dir here.
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[default-model,dev]'
	touch $@

# Cards for typer's 0.27.1 release when ../shared has its history, else for prsum's own history.
demo: install
	@if [ -f $(SHARED)/fixtures/typer.bundle ]; then \
		rm -rf $(DEMO_DIR) && git clone -q $(SHARED)/fixtures/typer.bundle $(DEMO_DIR)/typer && \
		$(BIN)/prsum range 0.27.0..0.27.1 --repo $(DEMO_DIR)/typer; \
	else \
		$(BIN)/prsum range HEAD~3..HEAD --repo . ; \
	fi

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check prsum tests bench training
	$(BIN)/ruff format --check prsum tests bench training
	$(BIN)/mypy prsum

# Training (training/README.md): the inputs from local clones of the corpus's repositories
# (CLONES: a folder of owner+name bare clones), then what the GPU machine needs.
CLONES ?= $(error set CLONES=DIR, a folder of bare clones named owner+name)
train-data: install
	$(BIN)/python -m training.check --partial
	$(BIN)/python -m training.build --clones $(CLONES)

train-prepare: train-data
	bash training/prepare.sh

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .mypy_cache .ruff_cache
