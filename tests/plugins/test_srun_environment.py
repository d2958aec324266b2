"""What tracebot's own environment gives the step it starts on a job's nodes (``srun … node_dump``): the
step runs on another host, under slurmstepd and the cluster's prolog and SPANK plugins, so tracebot's
Slack tokens and cloud keys must not travel with it. Run through the real ``run_node`` with a real child
process standing in for srun; no cluster needed (tests/plugins/slurm run the real srun)."""

from __future__ import annotations

import sys

import pytest

from tracebot.plugins.slurm.hang import run_node

PRINT_ENV = [sys.executable, "-c", "import json, os; print(json.dumps({'env': dict(os.environ)}))"]


def test_the_dump_step_gets_no_secret_of_tracebots_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "SLACK_BOT_TOKEN": "xoxb-1111-2222-abcdefghijklmnop",
        "SLACK_APP_TOKEN": "xapp-1-A111-222-abcdef",
        "SLACK_SIGNING_SECRET": "0123456789abcdef0123456789abcdef",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    }
    for name, value in {**secrets, "SLURM_JOB_ID": "77", "SLURM_CONF": "/etc/slurm/slurm.conf",
                        "TRACEBOT_TEST_PLAIN": "kept"}.items():
        monkeypatch.setenv(name, value)
    doc, why = run_node(PRINT_ENV, 30)
    assert why is None and doc is not None
    env = doc["env"]
    assert not set(secrets) & set(env), "a secret of tracebot's environment reached the step"
    assert not any(v in env.values() for v in secrets.values())
    # what srun itself needs stays: where the cluster's configuration is, the command path, plain settings
    assert env["SLURM_CONF"] == "/etc/slurm/slurm.conf" and env["TRACEBOT_TEST_PLAIN"] == "kept"
    assert "PATH" in env and "SLURM_JOB_ID" not in env
