# Shared helpers for scripts/slurm/*.sh (sourced, not run).
# Daemons are found and stopped by their pid files, never by process name, so nothing else on the
# machine that happens to be called "slurmd" is touched.

log() { printf 'slurm/%s: %s\n' "${SCRIPT_NAME:-lib}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

pidfile_of() {
    case $1 in
        munged) echo /run/munge/munged.pid ;;
        mariadbd) echo /run/mysqld/mysqld.pid ;;
        slurmdbd | slurmctld | slurmd) echo "/run/$1.pid" ;;
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
    [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$1" ]] || return 1
    echo "$pid"
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
