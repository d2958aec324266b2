# Two commands do all the set-up on a fresh machine (see README):
#   make run    tracebot's main job (local console when no Slack credentials are set)
#   make test   the full test suite (installs and starts everything it needs)
.PHONY: run test lint bench

run:
	scripts/run.sh

test:
	scripts/test.sh

lint:
	scripts/bootstrap.sh --test && .venv/bin/ruff check . && .venv/bin/tracebot kb lint

bench:
	scripts/bootstrap.sh --test && .venv/bin/python bench/bench_matcher.py
