#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need, starts the real services
# (a SLURM cluster with accounting: this host plus 4 compute nodes in network namespaces; moto and the
# fake Slack are started by the tests), then
# runs ruff, the knowledge-base lint, pytest and the corpus evaluation.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test

echo "== starting SLURM (this host + 4 namespace nodes, with accounting)"
scripts/slurm/start.sh --nodes 4

echo "== deployment for the security tests (users tracebot/alice/bob, the tracebot-as-owner privilege)"
scripts/deploy/test-setup.sh

echo "== Debian packages the tests use (chromium for the HTML answer view, CJK fonts for Japanese answers)"
if ! command -v chromium >/dev/null || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then
    timeout 300 apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q chromium fonts-noto-cjk >/dev/null
fi

echo "== ruff"
.venv/bin/ruff check .

echo "== knowledge base lint"
.venv/bin/tracebot kb lint

echo "== corpus"
.venv/bin/tracebot kb eval tests/corpus/cases.jsonl --min-top1 0.90 --max-fp 0.03

echo "== second held-out set (built without seeing the knowledge base; regression floor only)"
.venv/bin/python tests/holdout/check.py >/dev/null
holdout=$(.venv/bin/tracebot kb eval tests/holdout/cases.jsonl --min-top1 0.85 --max-fp 0.05) || {
  printf '%s\n' "$holdout"; exit 1; }
printf '%s\n' "$holdout" | sed -n '1,4p'

echo "== pytest"
set +e
.venv/bin/pytest -q -p no:cacheprovider "$@"
rc=$?
set -e
# pytest's exit 5 means "no tests ran": that is a failure here, never a pass.
exit $rc
