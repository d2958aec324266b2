#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need, starts the real services
# (a one-node SLURM cluster with accounting; moto and the fake Slack are started by the tests), then
# runs ruff, the knowledge-base lint, pytest and the corpus evaluation.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test

echo "== starting SLURM (one node, with accounting)"
scripts/slurm/start.sh

echo "== ruff"
.venv/bin/ruff check .

echo "== knowledge base lint"
.venv/bin/tracebot kb lint

echo "== corpus"
.venv/bin/tracebot kb eval tests/corpus/cases.jsonl --min-top1 0.90 --max-fp 0.03

echo "== pytest"
set +e
.venv/bin/pytest -q -p no:cacheprovider "$@"
rc=$?
set -e
# pytest's exit 5 means "no tests ran": that is a failure here, never a pass.
exit $rc
