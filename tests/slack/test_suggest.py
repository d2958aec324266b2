"""The suggested /trace command names the job the pasted log is about."""

from __future__ import annotations

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.tiny_kb import OOM_LINE
from tracebot.matcher.suggest import fill, placeholders


def test_a_slurmstepd_line_fills_the_job_id():
    log = "slurmstepd: error: *** JOB 4411 ON gpu-node-07 CANCELLED AT 2026-11-20T10:00:00 ***"
    assert fill("/trace job <jobid>", placeholders(log)) == "/trace job 4411"


def test_two_different_job_ids_leave_the_placeholder():
    assert placeholders("job 4411 failed, then job 4412 failed") == {}


def test_the_answer_in_slack_suggests_the_filled_command(slack):
    slack.event(payloads.message(f"job 98765 died:\n{OOM_LINE}"))
    post = slack.fake.wait_for(lambda: slack.fake.posts())[0]
    assert "`/trace job 98765`" in texts(post["blocks"])
