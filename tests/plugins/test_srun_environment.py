"""What tracebot's own environment gives the step it starts on a job's nodes (``srun … node_dump``): the
step runs on another host, under slurmstepd and the cluster's prolog and SPANK plugins, so tracebot's
Slack tokens and cloud keys must not travel with it. Run through the real ``run_node`` with a real child
process standing in for srun; no cluster needed (tests/plugins/slurm run the real srun)."""

from __future__ import annotations

import sys

import pytest

from tracebot.plugins.slurm.hang import run_node

# srun standing in: the dumper's signed line (the key is what tracebot writes to its stdin), of its environment
PRINT_ENV = [sys.executable, "-c", "import os, sys; from tracebot.plugins.slurm import signed; "
             "print(signed.sign(signed.read_key(sys.stdin.buffer), {'env': dict(os.environ)}))"]


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


# What srun prints on a host without munged (the lines dun/munge issue #118 shows for sbatch, as srun's).
NO_MUNGE = [sys.executable, "-c", (
    "import sys; sys.stderr.write("
    "'srun: error: If munged is up, restart with --num-threads=10\\n'"
    "'srun: error: Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file or directory\\n'"
    "'srun: error: slurm_send_node_msg: auth_g_create: REQUEST_JOB_STEP_CREATE has authentication error\\n'"
    "); sys.exit(1)")]


def test_slurm_jwt_stays_off_the_step_and_a_host_without_munge_is_told_what_is_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SLURM_JWT is tracebot's credential (the step would carry it to the job's node), and Slurm does not
    support srun with JWT: it stays out. Where tracebot's host has only JWT (no munged), srun's first line,
    "If munged is up, restart with --num-threads=10", was the whole answer; the reason now says what the
    dump step needs and why SLURM_JWT is not given to it."""
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJ0cmFjZWJvdCJ9.c2lnbmF0dXJl"
    monkeypatch.setenv("SLURM_JWT", jwt)
    doc, why = run_node(PRINT_ENV, 30)
    assert why is None and doc is not None
    assert "SLURM_JWT" not in doc["env"] and jwt not in doc["env"].values()
    doc, why = run_node(NO_MUNGE, 30)
    assert doc is None and why is not None
    assert "needs munged running here" in why and "SLURM_JWT is not passed to srun" in why, why
    assert 'README "Configuration"' in why
