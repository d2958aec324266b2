#!/usr/bin/env bash
# Stop the test cluster started by scripts/slurm/start.sh, by pid file.
#   stop.sh                  stop every node's slurmd, slurmctld, slurmdbd, mariadbd, munged, and remove the
#                            namespace nodes' network (namespaces, veth pairs, the bridge)
#   stop.sh slurmctld        stop only the named daemon(s): slurmd (this host's), slurmd@tbnode3,
#                            slurmctld, ... (the fault tests stop one alone; start.sh brings it back)
set -euo pipefail
SCRIPT_NAME=stop
# shellcheck source=scripts/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || die "must run as root"
daemons=("$@")
everything=0
if ((${#daemons[@]} == 0)); then
    everything=1
    mapfile -t daemons < <(node_daemons)
    daemons+=(slurmd slurmctld slurmdbd mariadbd munged)
fi
for d in "${daemons[@]}"; do
    stop_daemon "$d"
done
if ((everything)); then
    for ns in $(ip netns list | cut -d' ' -f1 | grep -E "^${NODE_PREFIX}[0-9]+$" || true); do
        ip netns del "$ns"
    done
    ip link del "$BRIDGE" 2>/dev/null || true
fi
