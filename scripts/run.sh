#!/usr/bin/env bash
# Run tracebot's main job: the Slack app (Socket Mode with SLACK_APP_TOKEN, HTTP with a signing secret),
# or, with no Slack credentials, the local console on the bundled knowledge base and SQLite store.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/tracebot run "$@"
