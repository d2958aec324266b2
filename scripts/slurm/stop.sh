#!/usr/bin/env bash
# Stop the test cluster started by scripts/slurm/start.sh, by pid file.
#   stop.sh               stop slurmd, slurmctld, slurmdbd, mariadbd, munged
#   stop.sh slurmctld     stop only the named daemon(s) (the fault tests stop the controller alone;
#                         start.sh brings it back)
set -euo pipefail
SCRIPT_NAME=stop
# shellcheck source=scripts/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || die "must run as root"
daemons=("$@")
((${#daemons[@]})) || daemons=(slurmd slurmctld slurmdbd mariadbd munged)
for d in "${daemons[@]}"; do
    stop_daemon "$d"
done
