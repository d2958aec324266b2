#!/usr/bin/env bash
# Create .venv at the repository root with tracebot installed (editable). Idempotent and quick when
# nothing changed. Usage: scripts/bootstrap.sh [--test]   (--test adds the test tools and torch)
set -euo pipefail
cd "$(dirname "$0")/.."
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

py=${PYTHON:-}
if [ -z "$py" ]; then
  for c in python3.11 python3; do command -v "$c" >/dev/null && { py=$c; break; }; done
fi
[ -n "$py" ] || { echo "bootstrap: Python 3.11 is required" >&2; exit 1; }

if ! command -v uv >/dev/null 2>&1 && ! "$py" -m uv --version >/dev/null 2>&1; then
  echo "bootstrap: installing uv (fast installer) with pip" >&2
  "$py" -m pip install --quiet --disable-pip-version-check uv || true
fi
uv() { if command -v uv >/dev/null 2>&1; then command uv "$@"; else "$py" -m uv "$@"; fi; }

if [ ! -x .venv/bin/python ]; then
  if uv --version >/dev/null 2>&1; then uv venv --quiet --seed --python "$py" .venv
  else "$py" -m venv .venv; fi
fi

extras=""
[ $want_test = 1 ] && extras="[test]"
stamp=".venv/.tracebot-installed${extras:+-test}"
sum=$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
  echo "bootstrap: installing tracebot${extras} into .venv" >&2
  if uv --version >/dev/null 2>&1; then
    VIRTUAL_ENV="$PWD/.venv" uv pip install --quiet -e ".${extras}"
  else
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}"
  fi
  echo "$sum" > "$stamp"
fi

if [ $want_test = 1 ] && ! .venv/bin/python -c 'import torch' >/dev/null 2>&1; then
  # pip (not uv) finds the CPU build of torch 2.13.0 on this machine's local disk; the hang tests use it.
  echo "bootstrap: installing torch 2.13.0 (CPU) for the distributed-hang tests" >&2
  .venv/bin/python -m ensurepip --upgrade >/dev/null 2>&1 || true
  .venv/bin/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
fi
