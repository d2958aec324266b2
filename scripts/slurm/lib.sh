# Shared helpers for scripts/slurm/*.sh (sourced, not run).
# Daemons are found and stopped by their pid files, never by process name, so nothing else on the
# machine that happens to be called "slurmd" is touched.

log() { printf 'slurm/%s: %s\n' "${SCRIPT_NAME:-lib}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The multi-node part of the test cluster (start.sh): nodes tbnode1..N, node K at 10.77.0.K in network
# namespace tbnodeK, all on bridge tbbr0 where the controller answers at 10.77.0.254.
NODE_PREFIX=tbnode
MAX_NODES=16
BRIDGE=tbbr0
SUBNET=10.77.0
CONTROLLER_ADDR=$SUBNET.254
SLURM_CONF_FILE=/etc/slurm/slurm.conf

node_addr() { echo "$SUBNET.$1"; }

# The number of namespace nodes the current slurm.conf declares (fails if there is none yet).
configured_nodes() {
    local n
    n=$(sed -n 's/^# nodes: \([0-9]\{1,2\}\)$/\1/p' "$SLURM_CONF_FILE" 2>/dev/null | head -n1)
    [[ -n $n ]] && echo "$n"
}

# Daemons: munged, mariadbd, slurmdbd, slurmctld, slurmd (this host's node) and slurmd@tbnodeK.
pidfile_of() {
    case $1 in
        munged) echo /run/munge/munged.pid ;;
        mariadbd) echo /run/mysqld/mysqld.pid ;;
        slurmdbd | slurmctld) echo "/run/$1.pid" ;;
        slurmd) echo "/run/slurmd-$(hostname -s).pid" ;;
        slurmd@"$NODE_PREFIX"[0-9]*) echo "/run/slurmd-${1#slurmd@}.pid" ;;
        *) die "unknown daemon $1" ;;
    esac
}

# The pid of daemon $1 if its pid file names a live process with that name.
daemon_pid() {
    local file pid
    file=$(pidfile_of "$1")
    [[ -r $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid ]] || return 1
    [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "${1%%@*}" ]] || return 1
    echo "$pid"
}

# slurmd@tbnodeK for every namespace node that has a pid file (running or not).
node_daemons() {
    local file
    for file in /run/slurmd-"$NODE_PREFIX"*.pid; do
        [[ -e $file ]] || continue
        file=${file#/run/slurmd-}
        echo "slurmd@${file%.pid}"
    done
}

daemon_running() { daemon_pid "$1" >/dev/null; }

# Wait up to $1 seconds for command "${@:2}" to succeed.
wait_for() {
    local limit=$1; shift
    local end=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || return 1
        sleep 0.2
    done
}

stop_daemon() {
    local pid
    pid=$(daemon_pid "$1") || return 0
    log "stopping $1 (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for 20 bash -c "! kill -0 $pid"; then
        log "$1 ignored SIGTERM for 20 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_for 5 bash -c "! kill -0 $pid" || true
    fi
}
