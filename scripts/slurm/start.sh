#!/usr/bin/env bash
# Start a one-node SLURM cluster with accounting on localhost, from Debian's packages.
#
# Idempotent: installs missing packages (apt-get), writes configs under /etc/slurm only when they
# changed, starts only the daemons that are not running, and returns in well under 5 s when the
# cluster is already up. There is no systemd here, so the daemons are started directly:
#   munged (as munge) -> mariadbd -> slurmdbd -> slurmctld -> slurmd
# Exit status 0 means: `sinfo` shows the node idle/mixed/allocated and sacctmgr knows the cluster.
#
# Environment knobs (all optional):
#   TRACEBOT_SLURM_CLUSTER   cluster name (default: tracebot)
#   TRACEBOT_SLURM_DB_PASS   password of the slurm DB user (default: a fixed local-only value;
#                            mariadb listens on the unix socket only)
set -euo pipefail

CLUSTER="${TRACEBOT_SLURM_CLUSTER:-tracebot}"
# slurmctld, slurmdbd and slurmd each check that their configured host name is this machine's.
NODE="$(hostname -s)"
DB_PASS="${TRACEBOT_SLURM_DB_PASS:-tracebot-local-slurmdbd}"
CONF_DIR=/etc/slurm
LOG_DIR=/var/log/slurm
STATE_DIR=/var/lib/slurm
PACKAGES=(slurmctld slurmd slurm-client munge slurmdbd mariadb-server)

SCRIPT_NAME=start
# shellcheck source=scripts/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || die "must run as root (starts system daemons)"

install_packages() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    command -v slurmdbd >/dev/null || missing+=(slurmdbd)
    command -v mariadbd >/dev/null || missing+=(mariadb-server)
    ((${#missing[@]} == 0)) && return 0
    log "installing ${PACKAGES[*]} (missing: ${missing[*]})"
    timeout 300 apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q "${PACKAGES[@]}" >/dev/null
}

# Write $2 (content) to $1 with mode $3 and owner $4 if it differs; echo "changed" when it did.
write_if_changed() {
    local path=$1 content=$2 mode=$3 owner=$4
    if [[ -f $path ]] && [[ "$(cat "$path")" == "$content" ]]; then
        return 0
    fi
    printf '%s\n' "$content" >"$path.tmp"
    chmod "$mode" "$path.tmp"
    chown "$owner" "$path.tmp"
    mv "$path.tmp" "$path"
    echo changed
}

slurm_conf() {
    cat <<EOF
# Written by tracebot scripts/slurm/start.sh: a one-node test cluster with accounting.
ClusterName=${CLUSTER}
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=${STATE_DIR}/slurmctld
SlurmdSpoolDir=${STATE_DIR}/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${LOG_DIR}/slurmctld.log
SlurmdLogFile=${LOG_DIR}/slurmd.log
# No cgroups in this container: track processes by /proc parentage, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Report 8 CPUs on a 2-core machine so several test jobs (and trace steps) can share it.
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
# Finished jobs stay visible to scontrol for 10 minutes; sacct has them after that.
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
MpiDefault=none
MailProg=/bin/true
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=6819
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=8 RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP
EOF
}

slurmdbd_conf() {
    cat <<EOF
# Written by tracebot scripts/slurm/start.sh.
AuthType=auth/munge
DbdHost=${NODE}
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=slurm
PidFile=/run/slurmdbd.pid
LogFile=${LOG_DIR}/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=${DB_PASS}
StorageLoc=slurm_acct_db
EOF
}

start_munge() {
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
    mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
    [[ -f /etc/munge/munge.key ]] || { /usr/sbin/mungekey --create --force >/dev/null 2>&1 || \
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; }
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged
    wait_for 10 bash -c 'munge -n | unmunge' || die "munged did not come up"
}

start_mariadb() {
    if mariadb-admin --connect-timeout=2 ping >/dev/null 2>&1; then return 0; fi
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    if [[ ! -d /var/lib/mysql/mysql ]]; then
        log "initialising mariadb data directory"
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
    fi
    log "starting mariadbd"
    setsid /usr/sbin/mariadbd --user=mysql --skip-networking=0 --bind-address=127.0.0.1 \
        >>/var/log/mariadbd.log 2>&1 </dev/null &
    wait_for 30 mariadb-admin --connect-timeout=2 ping || die "mariadbd did not come up (see /var/log/mariadbd.log)"
}

ensure_db_user() {
    # Root over the unix socket (Debian's root@localhost uses unix_socket auth). The SQL goes on stdin,
    # not argv, so the password never shows in `ps`.
    timeout 30 mariadb <<SQL
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '${DB_PASS}';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '${DB_PASS}';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL
}

start_daemon() {  # name, readiness check...
    local name=$1; shift
    daemon_running "$name" && return 0
    log "starting $name"
    case $name in
        slurmdbd) setsid /usr/sbin/slurmdbd ;;
        slurmctld) setsid /usr/sbin/slurmctld ;;
        slurmd) setsid /usr/sbin/slurmd ;;
    esac
    wait_for 30 "$@" || die "$name did not come up (see $LOG_DIR/$name.log)"
}

node_ready() {
    local state
    state=$(timeout 5 sinfo -h -n "$NODE" -o '%T' 2>/dev/null | head -n1)
    [[ $state == idle* || $state == mixed* || $state == allocated* ]]
}

cluster_known() {
    timeout 5 sacctmgr -n -P list cluster format=cluster 2>/dev/null | grep -qx "$CLUSTER"
}

main() {
    install_packages
    mkdir -p "$CONF_DIR" "$LOG_DIR" "$STATE_DIR/slurmctld" "$STATE_DIR/slurmd"
    chown slurm:slurm "$LOG_DIR" "$STATE_DIR/slurmctld"

    local conf_changed dbd_changed
    conf_changed=$(write_if_changed "$CONF_DIR/slurm.conf" "$(slurm_conf)" 644 root:root)
    dbd_changed=$(write_if_changed "$CONF_DIR/slurmdbd.conf" "$(slurmdbd_conf)" 600 slurm:slurm)
    if [[ -n $dbd_changed ]]; then stop_daemon slurmdbd; fi
    if [[ -n $conf_changed ]]; then stop_daemon slurmd; stop_daemon slurmctld; fi

    start_munge
    start_mariadb
    ensure_db_user
    start_daemon slurmdbd bash -c 'timeout 3 sacctmgr -n list cluster'
    if ! cluster_known; then
        log "registering cluster $CLUSTER in accounting"
        timeout 10 sacctmgr -i add cluster "$CLUSTER" >/dev/null
    fi
    start_daemon slurmctld bash -c 'timeout 3 scontrol ping | grep -q UP'
    start_daemon slurmd node_ready
    if ! node_ready; then
        # A node left DOWN/DRAIN by an earlier unclean stop: bring it back.
        timeout 5 scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
        wait_for 90 node_ready || die "node $NODE is not idle: $(sinfo -h -n "$NODE" -o '%T %E')"
    fi
    wait_for 15 cluster_known || die "sacctmgr does not list cluster $CLUSTER"
    log "up: cluster $CLUSTER, node $NODE ($(sinfo -h -n "$NODE" -o '%T'))"
}

main "$@"
