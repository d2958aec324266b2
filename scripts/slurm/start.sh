#!/usr/bin/env bash
# Start a SLURM test cluster with accounting on this one machine, from Debian's packages.
#
#   start.sh [--nodes N]     N (0..16) namespace compute nodes (default: as configured now, else 4)
#
# The cluster:
#   - this host (`hostname -s`, e.g. vm) runs slurmctld, slurmdbd, mariadbd, munged and its own slurmd;
#     it is the only node of partition `debug` (the default), as in the one-node cluster before.
#   - tbnode1..tbnodeN: one slurmd each, in its own network namespace (`ip netns`, named like the node)
#     and its own UTS namespace (hostname tbnodeK), addressed 10.77.0.K on the bridge tbbr0 this script
#     creates (the controller is 10.77.0.254 there). Partition `multi` holds them. Nothing leaves the
#     machine: the bridge has no uplink and the namespaces no other interface.
#   Debian's slurmd is not built with multiple-slurmd mode, hence namespaces (`slurmd -N tbnodeK`); the
#   PID namespace and the file system are shared, so munge's socket and the per-node spool directories
#   (%n) are the same files everywhere, as a shared file system would make them on a real cluster.
#
# Idempotent: installs missing packages (apt-get), writes configs under /etc/slurm only when they
# changed, creates only the missing namespaces, starts only the daemons that are not running, and
# returns in a few seconds when the cluster is already up. There is no systemd here, so the daemons
# are started directly: munged (as munge) -> mariadbd -> slurmdbd -> slurmctld -> slurmd (each node)
# Exit status 0 means: `sinfo` shows every node idle/mixed/allocated and sacctmgr knows the cluster.
#
# Environment knobs (all optional):
#   TRACEBOT_SLURM_CLUSTER   cluster name (default: tracebot)
#   TRACEBOT_SLURM_DB_PASS   password of the slurm DB user (default: a fixed local-only value;
#                            mariadb listens on the unix socket only)
set -euo pipefail

CLUSTER="${TRACEBOT_SLURM_CLUSTER:-tracebot}"
# slurmctld, slurmdbd and this host's slurmd each check that their configured host name is this machine's.
NODE="$(hostname -s)"
DB_PASS="${TRACEBOT_SLURM_DB_PASS:-tracebot-local-slurmdbd}"
CONF_DIR=/etc/slurm
LOG_DIR=/var/log/slurm
STATE_DIR=/var/lib/slurm
PACKAGES=(slurmctld slurmd slurm-client munge slurmdbd mariadb-server iproute2 util-linux)

SCRIPT_NAME=start
# shellcheck source=scripts/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || die "must run as root (starts system daemons)"

NODES=""
while (($#)); do
    case $1 in
        --nodes) NODES=${2:-}; shift; shift || true ;;
        --nodes=*) NODES=${1#--nodes=}; shift ;;
        *) die "unknown argument $1 (usage: start.sh [--nodes N])" ;;
    esac
done
# No --nodes: keep the cluster as configured (the fault tests restart daemons with a bare start.sh).
[[ -n $NODES ]] || NODES=$(configured_nodes) || NODES=4
[[ $NODES =~ ^[0-9]{1,2}$ ]] && ((NODES <= MAX_NODES)) || die "--nodes must be 0..$MAX_NODES"

install_packages() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    command -v slurmdbd >/dev/null || missing+=(slurmdbd)
    command -v mariadbd >/dev/null || missing+=(mariadb-server)
    command -v ip >/dev/null || missing+=(iproute2)  # the namespace nodes' network
    command -v nsenter >/dev/null || missing+=(util-linux)
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
# Written by tracebot scripts/slurm/start.sh: a test cluster with accounting.
# nodes: ${NODES}
ClusterName=${CLUSTER}
SlurmctldHost=${NODE}(${CONTROLLER_ADDR})
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=${STATE_DIR}/slurmctld
# %n: each node's slurmd has its own (the nodes share this machine's file system)
SlurmdSpoolDir=${STATE_DIR}/slurmd-%n
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
SlurmctldLogFile=${LOG_DIR}/slurmctld.log
SlurmdLogFile=${LOG_DIR}/slurmd-%n.log
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
    local k
    for ((k = 1; k <= NODES; k++)); do
        echo "NodeName=${NODE_PREFIX}$k NodeAddr=$(node_addr "$k") CPUs=8 RealMemory=8000 State=UNKNOWN"
    done
    if ((NODES > 0)); then
        echo "PartitionName=multi Nodes=${NODE_PREFIX}[1-$NODES] MaxTime=INFINITE State=UP"
    fi
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

# The bridge and node K's namespace with its end of a veth pair (eth0, 10.77.0.K/24).
setup_bridge() {
    ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
    # Captured, then matched: under pipefail, `ip … | grep -q` fails whenever grep's early exit SIGPIPEs ip.
    [[ "$(ip -o addr show dev "$BRIDGE")" == *" $CONTROLLER_ADDR/24 "* ]] || ip addr add "$CONTROLLER_ADDR/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
}

setup_node_net() {
    local k=$1 ns=$NODE_PREFIX$1 veth=tbv$1
    if [[ ! -e /run/netns/$ns ]]; then
        ip link del "$veth" >/dev/null 2>&1 || true  # a pair left from an earlier namespace of that name
        ip netns add "$ns"
    fi
    ip link show "$veth" >/dev/null 2>&1 || ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip link set "$veth" master "$BRIDGE" up
    ip -n "$ns" link set lo up
    [[ "$(ip -n "$ns" -o addr show dev eth0)" == *" $(node_addr "$k")/24 "* ]] || ip -n "$ns" addr add "$(node_addr "$k")/24" dev eth0
    ip -n "$ns" link set eth0 up
}

# Node K's slurmd: inside its network namespace, in a new UTS namespace whose host name is the node's
# (jobs, `scontrol listpids` and the dump step on that node see that name, as on a real node).
start_node_slurmd() {
    local node=$NODE_PREFIX$1
    daemon_running "slurmd@$node" && return 0
    log "starting slurmd on $node ($(node_addr "$1"))"
    mkdir -p "$STATE_DIR/slurmd-$node"
    nsenter --net="/run/netns/$node" -- unshare --uts -- \
        /bin/sh -c 'hostname "$1" && exec setsid /usr/sbin/slurmd -N "$1"' sh "$node"
    wait_for 30 daemon_running "slurmd@$node" || die "slurmd on $node did not come up (see $LOG_DIR/slurmd-$node.log)"
}

# Namespace nodes beyond NODES (a smaller --nodes than before): their slurmd and namespace go.
remove_extra_nodes() {
    local d node k
    for d in $(node_daemons); do
        node=${d#slurmd@}; k=${node#"$NODE_PREFIX"}
        ((k > NODES)) || continue
        stop_daemon "$d"
        rm -f "/run/slurmd-$node.pid"
        ip netns del "$node" 2>/dev/null || true
    done
}

all_nodes_ready() {
    local states
    states=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null) || return 1
    (($(grep -cE ' (idle|mixed|allocated)[*~#!%$@^-]*$' <<<"$states") == NODES + 1))
}

not_ready_nodes() {
    timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | grep -vE ' (idle|mixed|allocated)$' | cut -d' ' -f1 | sort -u
}

cluster_known() {
    local clusters
    clusters=$(timeout 5 sacctmgr -n -P list cluster format=cluster 2>/dev/null) || return 1
    grep -qx "$CLUSTER" <<<"$clusters"
}

main() {
    install_packages
    mkdir -p "$CONF_DIR" "$LOG_DIR" "$STATE_DIR/slurmctld" "$STATE_DIR/slurmd-$NODE"
    chown slurm:slurm "$LOG_DIR" "$STATE_DIR/slurmctld"

    local conf_changed dbd_changed d k
    conf_changed=$(write_if_changed "$CONF_DIR/slurm.conf" "$(slurm_conf)" 644 root:root)
    dbd_changed=$(write_if_changed "$CONF_DIR/slurmdbd.conf" "$(slurmdbd_conf)" 600 slurm:slurm)
    if [[ -n $dbd_changed ]]; then stop_daemon slurmdbd; fi
    if [[ -n $conf_changed ]]; then
        for d in $(node_daemons) slurmd slurmctld; do stop_daemon "$d"; done
        # The one-node cluster's slurmd used /run/slurmd.pid.
        if [[ -r /run/slurmd.pid ]] && [[ "$(cat "/proc/$(tr -dc '0-9' </run/slurmd.pid)/comm" 2>/dev/null)" == slurmd ]]; then
            kill -TERM "$(tr -dc '0-9' </run/slurmd.pid)"
            wait_for 20 bash -c '! kill -0 "$(tr -dc 0-9 </run/slurmd.pid)"' || die "the old slurmd did not stop"
        fi
    fi
    remove_extra_nodes

    setup_bridge
    for ((k = 1; k <= NODES; k++)); do setup_node_net "$k"; done
    start_munge
    start_mariadb
    ensure_db_user
    start_daemon slurmdbd bash -c 'timeout 3 sacctmgr -n list cluster'
    if ! cluster_known; then
        log "registering cluster $CLUSTER in accounting"
        timeout 10 sacctmgr -i add cluster "$CLUSTER" >/dev/null
    fi
    start_daemon slurmctld bash -c 'timeout 3 scontrol ping | grep -q UP'
    start_daemon slurmd daemon_running slurmd
    for ((k = 1; k <= NODES; k++)); do start_node_slurmd "$k"; done
    if ! wait_for 30 all_nodes_ready; then
        # Nodes left DOWN/DRAIN by an earlier unclean stop (or a stopped slurmd): bring them back.
        for d in $(not_ready_nodes); do
            timeout 5 scontrol update nodename="$d" state=resume >/dev/null 2>&1 || true
        done
        wait_for 90 all_nodes_ready || die "nodes not idle: $(sinfo -h -N -o '%N %T %E' | tr '\n' ';')"
    fi
    wait_for 15 cluster_known || die "sacctmgr does not list cluster $CLUSTER"
    log "up: cluster $CLUSTER, nodes $(sinfo -h -N -o '%N:%T' | sort -u | tr '\n' ' ')"
}

main
