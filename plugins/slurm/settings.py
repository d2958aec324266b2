"""The ``slurm:`` section of TRACEBOT_CONFIG: set by admins, never from a user's words.

```yaml
slurm:
  bin_dir: /usr/bin                 # where scontrol/sacct/srun live (default: PATH)
  command_timeout_s: 10             # per SLURM client call
  anyone_may_trace: false           # true: any mapped user may trace any job
  as_owner: ["sudo", "-n", "/usr/local/libexec/tracebot-as-owner"]  # the privilege (README "Deploying")
  gpus:
    allow: {U0123ABCD: ["gpu-*"], "@mlops": ["*"]}  # who sees others' command lines on which nodes
  node_python: /shared/tracebot/.venv/bin/python   # on the compute nodes; imports tracebot.plugins.slurm
  node_pyspy: /shared/tracebot/.venv/bin/py-spy    # default: beside node_python, else PATH
  node_timeout_s: 30                # per node, for the whole dump of that node
  pyspy_timeout_s: 10               # per process
  srun_extra: ["--gres=gpu:0"]      # extra srun options for the dump step (GPU clusters)
  log_budget_s: 20                  # time to search a job's log
  node_exec: ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5"]  # /trace gpus on other nodes
  nvidia_smi: nvidia-smi
```
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SlurmSettings:
    bin_dir: str | None = None
    command_timeout_s: float = 10.0
    anyone_may_trace: bool = False
    # argv of the privilege that acts on another user's job as that user; [] = none: only our own jobs
    as_owner: list[str] = field(default_factory=list)
    # /trace gpus: Slack user id, cluster user or "@unix-group" -> node patterns where it sees every command line
    gpus_allow: dict[str, list[str]] = field(default_factory=dict)
    node_python: str = sys.executable
    node_pyspy: str | None = None
    node_timeout_s: float = 30.0
    pyspy_timeout_s: float = 10.0
    srun_extra: list[str] = field(default_factory=list)
    log_budget_s: float = 20.0
    node_exec: list[str] = field(default_factory=list)
    nvidia_smi: str = "nvidia-smi"

    @classmethod
    def from_config(cls, section: dict[str, Any] | None) -> SlurmSettings:
        section = section or {}
        s = cls()
        s.bin_dir = str(section["bin_dir"]) if section.get("bin_dir") else None
        s.command_timeout_s = float(section.get("command_timeout_s", s.command_timeout_s))
        s.anyone_may_trace = bool(section.get("anyone_may_trace", False))
        s.as_owner = [str(a) for a in section.get("as_owner", []) or []]
        gpus = section.get("gpus") or {}
        allow = gpus.get("allow") if isinstance(gpus, dict) else None
        s.gpus_allow = {str(k): [str(n) for n in (v if isinstance(v, list) else [v])]
                        for k, v in (allow or {}).items()} if isinstance(allow, dict) else {}
        s.node_python = str(section.get("node_python") or s.node_python)
        s.node_pyspy = str(section["node_pyspy"]) if section.get("node_pyspy") else None
        s.node_timeout_s = float(section.get("node_timeout_s", s.node_timeout_s))
        s.pyspy_timeout_s = float(section.get("pyspy_timeout_s", s.pyspy_timeout_s))
        s.srun_extra = [str(a) for a in section.get("srun_extra", []) or []]
        s.log_budget_s = float(section.get("log_budget_s", s.log_budget_s))
        s.node_exec = [str(a) for a in section.get("node_exec", []) or []]
        s.nvidia_smi = str(section.get("nvidia_smi") or s.nvidia_smi)
        return s
