#!/usr/bin/env bash
# The deployment the security tests run against (called by scripts/test.sh; idempotent):
#   - sudo, and the Unix users tracebot (the service user), alice and bob (job owners);
#   - .deploy-venv: a venv from Debian's /usr/bin/python3.11 with this checkout installed (editable), because
#     .venv's interpreter lives under /root (mode 0700), which other users cannot reach;
#   - every directory on the way to this checkout traversable by others (chmod o+x where it is not);
#   - scripts/deploy/install-privilege.sh with that venv as the nodes' interpreter.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
[[ $(id -u) -eq 0 ]] || { echo "test-setup: must run as root" >&2; exit 1; }

if ! command -v sudo >/dev/null || ! command -v visudo >/dev/null; then
    echo "test-setup: installing sudo" >&2
    timeout 300 apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -q sudo >/dev/null
fi
for user in tracebot alice bob; do
    id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
done

dir=$repo
while [[ $dir != / ]]; do
    [[ $(( 0$(stat -c %a "$dir") & 01 )) -ne 0 ]] || { echo "test-setup: chmod o+x $dir" >&2; chmod o+x "$dir"; }
    dir=$(dirname "$dir")
done

# bootstrap.sh made sure uv is there (a command, or a module of python3.11).
uv() { if command -v uv >/dev/null 2>&1; then command uv "$@"; else python3.11 -m uv "$@"; fi; }
venv=$repo/.deploy-venv
stamp=$venv/.tracebot-installed
sum=$(sha256sum pyproject.toml | cut -c1-16)
if [[ ! -x $venv/bin/python ]] || [[ ! -f $stamp ]] || [[ $(cat "$stamp") != "$sum" ]]; then
    echo "test-setup: installing tracebot into $venv (Debian's python3.11)" >&2
    rm -rf "$venv"
    uv venv --quiet --python /usr/bin/python3.11 "$venv"
    VIRTUAL_ENV=$venv uv pip install --quiet -e .
    echo "$sum" >"$stamp"
fi
# The multi-node tests run alice's torch.distributed job with this interpreter: the torch bootstrap.sh
# --test put in .venv, installed the same way (pip, from this machine's local wheels).
if [[ -x .venv/bin/python ]] && .venv/bin/python -c 'import torch' 2>/dev/null \
        && ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    echo "test-setup: installing torch into $venv" >&2
    torch_version=$(.venv/bin/python -c 'import torch; print(torch.__version__.split("+")[0])')
    .venv/bin/python -m pip --python "$venv/bin/python" install --quiet --disable-pip-version-check \
        "torch==$torch_version"
fi
chmod -R go-w "$venv"

scripts/deploy/install-privilege.sh --python "$venv/bin/python" --user tracebot --slurm-bin "$(dirname "$(command -v srun)")"
