"""What tracebot makes of a node's dump output (``srun … node_dump``). The step runs as the job's owner on the
job's node, so any process of the job can write into its output (``/proc/<pid>/fd/1`` of the step is the
owner's to open until the dumper locks itself): the output is read as hostile, bounded in memory, never trusted
for its shape, and only the line signed with the key tracebot wrote to the step's stdin is the dump. Run
through the real ``run_node`` with a real child process standing in for srun; no cluster needed
(tests/plugins/slurm/test_slurm_security.py runs a real hostile job)."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from tracebot.plugins.pyspy.group import group_stacks
from tracebot.plugins.slurm import signed
from tracebot.plugins.slurm.hang import MAX_FRAMES, MAX_RANKS_PER_NODE, HangTrace, _merge, run_node

REAL = {"node": "vm", "job": "6", "notes": ["one"], "ranks": {
    "0": {"pid": 7905, "frames": [{"function": "all_reduce", "filename": "/x/d.py", "line": 9}], "thread": "MainThread"},
    "1": {"pid": 7906, "error": "py-spy timed out after 10s"}}}
FORGED = {"node": "vm", "job": "6", "notes": [], "ranks": {
    "0": {"pid": 1, "frames": [{"function": "all_fine", "filename": "f.py", "line": 1}]},
    "99": {"pid": 2, "frames": [{"function": "invented", "filename": "f.py", "line": 2}]}}}


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _dumper(*prints: str) -> list[str]:
    """srun standing in: reads the key from its stdin like the dumper; ``sign(doc)`` in a print is the dumper's
    signed line, anything else is what a process of the job wrote into the step's output."""
    body = "\n".join(f"print({p})" for p in prints)
    return _child("import sys, json\nfrom tracebot.plugins.slurm import signed\n"
                  "key = signed.read_key(sys.stdin.buffer)\n"
                  f"def sign(doc): return signed.sign(key, doc)\n{body}")


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
    found, why = run_node(_dumper(f"sign({REAL!r})"), 60)
    assert why is None and found == REAL
    trace = HangTrace()
    _merge(trace, "vm", found)
    assert trace.notes == ["vm: one"] and trace.pids == {"0": 7905, "1": 7906}
    assert trace.dumps["1"] == "pid 7906 on vm: py-spy timed out after 10s"


def test_a_forged_document_written_after_the_dumpers_is_ignored_and_said_to_be():
    # last round the last JSON line won: a job wrote "rank 0 all fine" and a rank 99 after the dumper's line
    forged = json.dumps(FORGED)
    found, why = run_node(_dumper(f"sign({REAL!r})", repr(forged), repr(f"{signed.WORD} {'0' * 64} {forged}")), 60)
    assert why is None and found is not None
    trace = HangTrace()
    _merge(trace, "vm", found)
    assert set(trace.dumps) == {"0", "1"} and trace.pids["0"] == 7905
    assert trace.notes[0] == ("vm: 2 line(s) in the dump step's output were not the dumper's (a process of the job "
                              "wrote them into it); they were ignored")


def test_a_forged_document_alone_is_no_dump():
    # the job killed the dumper, or wrote before it signed: its document has no valid signature
    forged = json.dumps(FORGED)
    found, why = run_node(_dumper(repr(forged), repr(f"{signed.WORD} {'0' * 64} {forged}")), 60)
    assert found is None and why is not None and "nothing of it was used" in why


def test_two_signed_documents_show_neither():
    # only a process that read the key could sign: the dumper prints one document, so two means one is forged
    found, why = run_node(_dumper(f"sign({REAL!r})", f"sign({FORGED!r})"), 60)
    assert found is None and why is not None and "2 signed dumps came back" in why


def test_the_key_reaches_the_step_on_its_stdin_only(monkeypatch: pytest.MonkeyPatch):
    # the job's processes read a step's command line and environment in /proc; its stdin they cannot read back
    key = "ab" * 32
    monkeypatch.setattr(signed, "new_key", lambda: key)
    found, why = run_node(_dumper("sign({'argv': sys.argv, 'env': dict(__import__('os').environ)})"), 60)
    assert why is None and found is not None
    assert key not in json.dumps(found)


def test_a_dump_signed_with_another_key_or_edited_after_signing_does_not_verify():
    line = signed.sign("cd" * 32, REAL)
    assert signed.read_signed("ab" * 32, line).docs == []
    edited = line.replace("all_reduce", "all_fine")
    assert signed.read_signed("cd" * 32, edited).docs == [] and signed.read_signed("cd" * 32, line).docs == [REAL]


def test_the_dumper_locks_itself_before_it_reads_the_key(tmp_path: Path):
    # undumpable: the job's processes (its own user) can no longer open its descriptors, read its memory or
    # environment, or ptrace it; PR_GET_DUMPABLE (3) says so
    code = ("import ctypes; from tracebot.plugins.slurm import signed; signed.lock(); "
            "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "0"
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nTracerPid:\t4242\nUid:\t1\n")
    assert signed.tracer_pid(status) == 4242


def test_the_dumper_without_a_key_signs_nothing_and_says_why():
    done = subprocess.run([sys.executable, "-m", "tracebot.plugins.slurm.node_dump", "--job", "1"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "no signing key arrived on stdin" in done.stderr
