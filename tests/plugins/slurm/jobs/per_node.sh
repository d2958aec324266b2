#!/bin/bash
# One task of a multi-node job, its output prefixed with this node's host name ("tbnode2: Traceback ..."),
# as multi-node launch wrappers do so that one log tells the nodes apart. Exits with the command's status.
set -o pipefail
host=$(hostname)
"$@" 2>&1 | sed -u "s/^/$host: /"
