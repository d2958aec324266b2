"""The real SLURM cluster (scripts/slurm/start.sh) and real jobs submitted to it with sbatch: these go to
partition `debug`, this host's own node (the multi-node tests submit to partition `multi`).

The cluster fixture fails loudly when CI=true and the cluster cannot be started; outside CI it skips
(e.g. a laptop without root). Every job is submitted once per session, all at the start, so their
waits overlap; tests then wait (bounded polling) for the state they need.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from tests.plugins.slurm.cluster import (
    DEPLOY_SETUP,
    PYTHON,
    START,
    Jobs,
    run,
    sbatch,
    start_cluster,
    train_cmd,
)
from tests.support import require
from tracebot.config import Config
from tracebot.matcher import Matcher
from tracebot.plugin_api import Caller, CommandContext
from tracebot.result import Result
from tracebot.service.plugin_host import PluginHost


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    require(os.geteuid() == 0, "the SLURM test cluster needs root (it starts munged, mariadbd, slurm daemons)")
    require(START.exists(), f"{START} is missing")
    try:
        start_cluster()
    except (AssertionError, subprocess.TimeoutExpired) as exc:
        require(False, f"scripts/slurm/start.sh could not start the cluster: {exc}")
    require(shutil.which("sbatch") is not None, "sbatch is not on PATH after start.sh")


@pytest.fixture(scope="session")
def deploy_users(slurm_cluster: None) -> None:
    """The users tracebot, alice and bob and the tracebot-as-owner privilege (scripts/deploy/test-setup.sh)."""
    require(DEPLOY_SETUP.exists(), f"{DEPLOY_SETUP} is missing")
    try:
        run(["bash", str(DEPLOY_SETUP)], timeout=600)
    except (AssertionError, subprocess.TimeoutExpired) as exc:
        require(False, f"scripts/deploy/test-setup.sh failed: {exc}")


@pytest.fixture(scope="session")
def jobs(slurm_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jobs]:
    logs = tmp_path_factory.mktemp("slurm-logs")
    logs.chmod(0o755)
    j = Jobs(logs)
    out = str(logs / "%x-%j.out")
    j.ids["completes"] = sbatch("-J", "completes", "-o", out, "--wrap", "echo epoch 1 done; echo training finished")
    j.ids["fails"] = sbatch("-J", "fails", "-o", out, "--wrap", f"{PYTHON} -c 'import sys; print(\"step 1\"); sys.exit(3)'")
    j.ids["port"] = sbatch("-J", "port", "-o", out, "--wrap", train_cmd("port_in_use.py"))
    j.ids["later"] = sbatch("-J", "later", "-o", out, "--begin=now+1hour", "--wrap", "true")
    j.ids["held"] = sbatch("-J", "held", "-o", out, "--hold", "--wrap", "true")
    j.ids["after"] = sbatch("-J", "after", "-o", out, f"--dependency=afterok:{j.ids['held']}", "--wrap", "true")
    j.ids["timeout"] = sbatch("-J", "timeout", "-o", out, "--time=1", "--wrap", "sleep 600")
    j.ids["hang"] = sbatch("-J", "hang", "-o", out, "-n", "2", "--export=ALL,HANG_MASTER_PORT=29611",
                           "--wrap", f"srun {train_cmd('hang_train.py')}")
    try:
        yield j
    finally:
        run(["scancel", *j.ids.values()], check=False)


@pytest.fixture
def trace_as(matcher: Matcher):
    """Run a /trace command in-process as a given caller (the Slack path: plugin host, same Result)."""
    host = PluginHost(entry_points=False)

    def call(words: list[str], cluster_user: str | None = "root", admin: bool = False,
             config: Config | None = None) -> Result:
        ctx = CommandContext(caller=Caller("U-test", cluster_user, admin),
                             settings=(config or Config()).plugin_settings("slurm"), matcher=matcher)
        return host.run_command(words[0], ctx, words[1:])

    return call
