"""What tracebot makes of py-spy's output for ``/trace pid``: the traced program decides how deep its stacks
go and how many threads it has, so the dump's size is its to choose. A stand-in py-spy (a real child process
printing what py-spy would) stands for the real one; tests/plugins/pyspy run the real py-spy."""

from __future__ import annotations

import json
import sys
import tracemalloc

from tracebot.plugins.pyspy.dump import MAX_FRAMES, ProcessDump, dump_pid


def _pyspy_printing(code: str) -> list[str]:
    return [sys.executable, "-c", code]  # py-spy's own arguments follow, and are ignored


def _frames_json(n: int) -> str:
    frame = '{"name": "recurse", "filename": "/home/bob/deep.py", "line": 3, "short_filename": "deep.py"}'
    return ("import sys\nsys.stdout.write('[{\"thread_id\": 1, \"thread_name\": \"MainThread\", \"owns_gil\": true, "
            f"\"active\": true, \"frames\": [' + ', '.join([{frame!r}] * {n}) + ']}}]')")


def test_a_program_a_million_frames_deep_costs_tracebot_a_bounded_amount_of_memory():
    # ~90 MB of JSON held as text by subprocess.run, then parsed into a million dicts: 16 such ranks at once
    tracemalloc.start()
    try:
        found = dump_pid(4242, pyspy=_pyspy_printing(_frames_json(1_000_000)), timeout=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(found, str) and "larger than 16 MB" in found
    assert peak < 24 << 20, f"held {peak >> 20} MB of py-spy's output"


def test_a_deep_stack_under_the_cap_keeps_its_innermost_frames():
    found = dump_pid(4242, pyspy=_pyspy_printing(_frames_json(MAX_FRAMES * 3)), timeout=60)
    assert isinstance(found, ProcessDump) and len(found.frames) == MAX_FRAMES
    assert found.frames[0].function == "recurse"


def test_output_nested_deeper_than_the_parser_goes_is_unreadable_not_a_crash():
    found = dump_pid(4242, pyspy=_pyspy_printing("print('[' * 200000)"), timeout=60)
    assert isinstance(found, str) and found.startswith("unreadable py-spy output")


def test_py_spys_own_failure_and_a_normal_dump_read_as_before():
    failed = dump_pid(4242, pyspy=_pyspy_printing("import sys; sys.stderr.write('Error: Permission Denied\\n'); sys.exit(1)"),
                      timeout=60)
    assert isinstance(failed, str) and failed.startswith("permission denied")
    dump = [{"thread_id": 1, "thread_name": "MainThread", "os_thread_id": 4242, "owns_gil": False, "active": True,
             "frames": [{"name": "all_reduce", "filename": "/t/d.py", "line": 9}]}]
    found = dump_pid(4242, pyspy=_pyspy_printing(f"print({json.dumps(json.dumps(dump))})"), timeout=60)
    assert isinstance(found, ProcessDump) and [f.function for f in found.frames] == ["all_reduce"]
    slow = dump_pid(4242, pyspy=_pyspy_printing("import time; time.sleep(30)"), timeout=1)
    assert isinstance(slow, str) and "timed out after 1s" in slow
