#!/usr/bin/env bash
# Install tracebot's one privilege (README "Deploying"): a root-owned wrapper that acts on a SLURM job as
# the job's owner, and a sudoers drop-in that lets the service user run exactly that wrapper.
#
#   sudo scripts/deploy/install-privilege.sh --python /opt/tracebot/venv/bin/python \
#        [--pyspy /opt/tracebot/venv/bin/py-spy] [--user tracebot] [--slurm-bin /usr/bin]
#
# --python is the interpreter the job's owner runs on the compute nodes (it must import tracebot); it
# and py-spy must not be writable by the service user, or the privilege would let that user run code
# of its choosing as every job owner. The dump runs an execute-only copy of it, python-tracebot-dump in
# the same directory (written here). Idempotent: files are replaced only when they changed.
set -euo pipefail

WRAPPER=/usr/local/libexec/tracebot-as-owner
SUDOERS=/etc/sudoers.d/tracebot
service_user=tracebot
python=""
pyspy=""
slurm_bin=/usr/bin

die() { echo "install-privilege: $*" >&2; exit 1; }
while (($#)); do
    case $1 in
        --python) python=${2:?}; shift 2 ;;
        --pyspy) pyspy=${2:?}; shift 2 ;;
        --user) service_user=${2:?}; shift 2 ;;
        --slurm-bin) slurm_bin=${2:?}; shift 2 ;;
        *) die "unknown option $1" ;;
    esac
done
[[ $(id -u) -eq 0 ]] || die "must run as root"
[[ -n $python ]] || die "--python is required"
pyspy=${pyspy:-$(dirname "$python")/py-spy}
[[ $service_user =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || die "bad user name $service_user"
id -u "$service_user" >/dev/null 2>&1 || die "no user $service_user (create the service user first)"
command -v visudo >/dev/null || die "sudo is not installed"
for path in "$python" "$pyspy" "$slurm_bin/srun" "$slurm_bin/scontrol" "$slurm_bin/sacct"; do
    [[ $path == /* && $path != *[[:space:]\"\\]* ]] || die "$path: give an absolute path without spaces or quotes"
    [[ -x $path ]] || die "$path is not executable"
    # What the job's owner runs must not be changeable by the service user.
    if runuser -u "$service_user" -- test -w "$path" || runuser -u "$service_user" -- test -w "$(dirname "$path")"; then
        die "$path (or its directory) is writable by $service_user"
    fi
done
runuser -u "$service_user" -- "$python" -I -c 'import tracebot.plugins.slurm.node_dump' \
    || die "$python cannot import tracebot as $service_user (check the permissions of its path)"

# The dump step runs an execute-only copy of that interpreter, beside it (so it finds the same venv): Linux makes a
# process whose program its user may not read undumpable from its first instruction, so the job's processes (its
# owner's) can never open the dump's descriptors, read its memory or ptrace it, not even in the instant before
# node_dump locks itself (plugins/slurm/signed.py). A copy: rerun this script after upgrading that Python.
locked=$(dirname "$python")/python-tracebot-dump
real=$(readlink -f "$python")
[[ -f $real && $real != *[[:space:]\"\\]* ]] || die "$python does not resolve to an interpreter file"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s|@NODE_PYTHON@|$locked|" -e "s|@NODE_PYSPY@|$pyspy|" -e "s|@SLURM_BIN@|$slurm_bin|" \
    "$here/tracebot-as-owner" >"$tmp/wrapper"
cat >"$tmp/sudoers" <<EOF
# Written by tracebot scripts/deploy/install-privilege.sh: the service user may run exactly the
# wrapper, as root, which acts on a SLURM job only as that job's owner (README "Deploying").
Defaults!$WRAPPER env_reset, !requiretty
$service_user ALL=(root) NOPASSWD: $WRAPPER
EOF
visudo -cqf "$tmp/sudoers" || die "the sudoers drop-in does not validate"

install_if_changed() {  # source, target, mode
    if ! cmp -s "$1" "$2"; then
        install -o root -g root -m "$3" "$1" "$2.new"
        mv -f "$2.new" "$2"
        echo "install-privilege: wrote $2"
    fi
}
mkdir -p "$(dirname "$WRAPPER")" /etc/sudoers.d
install_if_changed "$real" "$locked" 0711
runuser -u "$service_user" -- "$locked" -I -c 'import tracebot.plugins.slurm.node_dump' \
    || die "$locked (the execute-only copy of $python) cannot import tracebot as $service_user"
install_if_changed "$tmp/wrapper" "$WRAPPER" 0755
install_if_changed "$tmp/sudoers" "$SUDOERS" 0440
