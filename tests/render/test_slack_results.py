"""A /trace result as Slack shows it: what a reader of the thread would take from it."""

from __future__ import annotations

from tests.slack.blocks import texts
from tracebot.render.slack import result
from tracebot.result import Frame, Result, StackGroup


def test_a_stack_group_spread_over_many_nodes_says_so_rather_than_naming_four_as_if_they_were_all():
    stuck = Frame("train_step", "/srv/train.py", 99)
    hosts = [f"node-{i:03d}" for i in range(64)]
    group = StackGroup([str(r) for r in range(0, 512, 4)], [stuck], where=stuck, hosts=hosts)
    shown = texts(result(Result("job 4242", "512 ranks on 64 nodes", stack_groups=[group]))[1])
    assert "node-000, node-001, node-002, node-003 (+60 more)" in shown
