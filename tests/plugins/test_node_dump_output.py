"""What tracebot makes of a node's dump output (``srun … node_dump``). The step runs as the job's owner on the
job's node, so any process of the job can write into its output (``/proc/<pid>/fd/1`` of the step is the
owner's to open): the output is read as hostile, bounded in memory, and never trusted for its shape. Run
through the real ``run_node`` with a real child process standing in for srun; no cluster needed."""

from __future__ import annotations

import json
import sys
import tracemalloc

from tracebot.plugins.pyspy.group import group_stacks
from tracebot.plugins.slurm.hang import MAX_FRAMES, MAX_RANKS_PER_NODE, HangTrace, _merge, run_node


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_job_flooding_the_dump_steps_output_costs_tracebot_a_bounded_amount_of_memory():
    # 96 MB then a forged document: communicate() held all of it (twice, as bytes and as text)
    flood = _child("import sys\nfor _ in range(96): sys.stdout.write('x' * (1 << 20) + '\\n')\n"
                   "print('{\"ranks\": {}}')")
    tracemalloc.start()
    try:
        doc, why = run_node(flood, 60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc is None and why is not None and "printed more than 32 MB" in why
    assert peak < 48 << 20, f"held {peak >> 20} MB of the step's output"


def test_a_document_nested_deeper_than_the_parser_goes_is_no_dump_not_a_crash():
    # json.loads raises RecursionError (not a ValueError) past ~1,000 levels: the whole /trace failed with it
    doc, why = run_node(_child("print('{\"a\": ' * 200000)"), 60)
    assert doc is None and why is not None


def test_a_forged_document_of_the_wrong_shapes_is_read_as_far_as_it_makes_sense():
    trace = HangTrace()
    _merge(trace, "n1", {"error": ["not", "text"], "notes": "abc", "ranks": {
        "0": {"pid": "7", "frames": [{"function": "f" * 10_000, "filename": 3, "line": "12"}, "junk"]},
        "1": "not an entry",
        "2": {"pid": 9, "frames": {"not": "a list"}, "error": None},
    }})
    assert trace.node_errors["n1"] == "['not', 'text']" and trace.notes == []
    frames = trace.dumps["0"]
    assert isinstance(frames, list) and len(frames) == 1
    assert len(frames[0].function) <= 500 and frames[0].filename == "3" and frames[0].line is None
    assert trace.pids["0"] is None
    assert trace.dumps["1"] == "n1: unreadable" and trace.dumps["2"] == "pid 9 on n1: unreadable"
    assert group_stacks(trace.dumps, trace.hosts)  # and the rest of the trace goes on from it


def test_a_document_claiming_a_million_ranks_or_frames_is_cut_and_says_so():
    frames = [{"function": "spin", "filename": "a.py", "line": 1}] * (MAX_FRAMES * 5)
    trace = HangTrace()
    _merge(trace, "n1", {"ranks": {str(i): {"pid": i + 1, "frames": frames} for i in range(1_000_000)}})
    assert len(trace.dumps) == MAX_RANKS_PER_NODE
    assert all(isinstance(d, list) and len(d) == MAX_FRAMES for d in trace.dumps.values())
    assert any("1000000 ranks reported" in n for n in trace.notes)


def test_the_real_node_dump_document_still_reads_whole():
    doc = {"node": "vm", "job": "6", "notes": ["one"], "ranks": {
        "0": {"pid": 7905, "frames": [{"function": "all_reduce", "filename": "/x/d.py", "line": 9}], "thread": "MainThread"},
        "1": {"pid": 7906, "error": "py-spy timed out after 10s"}}}
    found, why = run_node(_child(f"print('srun noise'); print({json.dumps(json.dumps(doc))})"), 60)
    assert why is None and found == doc
    trace = HangTrace()
    _merge(trace, "vm", found)
    assert trace.notes == ["vm: one"] and trace.pids == {"0": 7905, "1": 7906}
    assert trace.dumps["1"] == "pid 7906 on vm: py-spy timed out after 10s"
