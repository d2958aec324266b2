"""Stack grouping, "where", the one-line summary, the PNG and the matcher text, on real py-spy output."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from tracebot.plugins.pyspy.dump import classify_failure, parse_dump_json
from tracebot.plugins.pyspy.group import group_stacks, rank_sort_key, where_frame
from tracebot.plugins.pyspy.render import UNREADABLE_RGB, cell_box, group_colours, ranks_png, summarise_groups
from tracebot.plugins.pyspy.stacks_text import stacks_text
from tracebot.result import Frame

FIXTURES = Path(__file__).parent / "fixtures"
SITE = "/opt/venv/lib/python3.11/site-packages"


def fixture_frames(name: str) -> list[Frame]:
    return parse_dump_json((FIXTURES / name).read_text(), pid=None).frames


def collective(line: int = 3252) -> list[Frame]:
    return [Frame("all_reduce", f"{SITE}/torch/distributed/distributed_c10d.py", line),
            Frame("_exception_logger.<locals>.wrapper", f"{SITE}/torch/distributed/c10d_logger.py", 83),
            Frame("train_step", "/home/ml/train.py", 40), Frame("<module>", "/home/ml/train.py", 90)]


def waiting_for_data() -> list[Frame]:
    return [Frame("Condition.wait", "/usr/lib/python3.11/threading.py", 327),
            Frame("Event.wait", "/usr/lib/python3.11/threading.py", 629),
            Frame("_next_data", f"{SITE}/torch/utils/data/dataloader.py", 1285),
            Frame("load_next_batch", "/home/ml/train.py", 21), Frame("<module>", "/home/ml/train.py", 88)]


def test_real_dump_of_a_rank_in_all_reduce_points_at_torch_distributed():
    frames = fixture_frames("gloo_rank0.json")
    where = where_frame(frames)
    assert (where.function, where.line) == ("all_reduce", 3252)
    assert where.filename.endswith("site-packages/torch/distributed/distributed_c10d.py")


def test_real_dump_of_a_rank_waiting_for_data_skips_threading_frames():
    where = where_frame(fixture_frames("gloo_rank1.json"))
    assert (where.function, where.filename, where.line) == ("load_next_batch", "/tmp/gl/train.py", 12)


def test_library_frames_other_than_torch_distributed_are_not_where_a_rank_is_stuck():
    assert where_frame(waiting_for_data()).function == "load_next_batch"


def test_native_frames_are_passed_over_for_the_python_frame_that_called_them():
    native = [Frame("gloo::transport::tcp::Pair::waitUntil", "/opt/venv/lib/libtorch_cpu.so"), *collective()]
    assert where_frame(native).function == "all_reduce"


def test_the_issue_example_one_rank_waits_for_data_while_63_sit_in_all_reduce():
    dumps: dict[str, list[Frame] | str] = {str(r): collective() for r in range(64)}
    dumps["1"] = waiting_for_data()
    groups = group_stacks(dumps)
    assert summarise_groups(groups) == ("rank 1: load_next_batch (train.py:21) — "
                                        "ranks 0, 2–63: all_reduce (distributed_c10d.py:3252)")
    assert [g.odd_one_out for g in groups] == [True, False]


def test_ranks_a_few_lines_apart_in_the_same_functions_are_one_group_without_a_line():
    groups = group_stacks({"0": collective(3252), "1": collective(3260), "2": collective(3252)})
    assert len(groups) == 1 and groups[0].ranks == ["0", "1", "2"]
    assert groups[0].where.line is None and groups[0].where.function == "all_reduce"


def test_two_equal_groups_outside_any_collective_have_no_odd_one_out():
    other = [Frame("save_checkpoint", "/home/ml/train.py", 70), Frame("<module>", "/home/ml/train.py", 91)]
    groups = group_stacks({"0": waiting_for_data(), "1": other})
    assert [g.odd_one_out for g in groups] == [False, False]


def test_three_large_groups_are_not_called_odd():
    dumps: dict[str, list[Frame] | str] = {str(r): collective() for r in range(24)}
    dumps |= {str(r): waiting_for_data() for r in range(24, 44)}
    dumps |= {str(r): collective()[2:] for r in range(44, 64)}
    assert not any(g.odd_one_out for g in group_stacks(dumps))


def test_unreadable_ranks_are_named_in_the_summary_and_grey_in_the_png():
    dumps: dict[str, list[Frame] | str] = {str(r): collective() for r in range(12)}
    dumps["5"] = "no such process (it exited)"
    unreadable = {"5": "no such process (it exited)"}
    groups = group_stacks(dumps)
    assert summarise_groups(groups, unreadable).endswith(" — unreadable: rank 5")
    image = Image.open(io.BytesIO(ranks_png(groups, unreadable))).convert("RGB")
    x0, y0, x1, y1 = cell_box(5, 12)
    assert image.getpixel((x1 - 2, y1 - 2)) == UNREADABLE_RGB
    x0, y0, x1, y1 = cell_box(4, 12)
    assert image.getpixel((x1 - 2, y1 - 2)) == group_colours(groups)[0]


def test_a_png_of_many_ranks_wraps_into_rows_and_colours_every_cell():
    dumps: dict[str, list[Frame] | str] = {str(r): collective() for r in range(100)}
    dumps["77"] = waiting_for_data()
    groups = group_stacks(dumps)
    image = Image.open(io.BytesIO(ranks_png(groups))).convert("RGB")
    colours = group_colours(groups)
    for rank in range(100):
        x0, y0, x1, y1 = cell_box(rank, 100)
        expected = colours[0] if rank == 77 else colours[1]
        assert image.getpixel((x1 - 2, y1 - 2)) == expected, rank
    assert cell_box(32, 100)[1] > cell_box(0, 100)[1]


def test_many_groups_are_summarised_with_a_count_of_the_rest():
    dumps: dict[str, list[Frame] | str] = {
        str(r): [Frame(f"step_{r}", "/home/ml/train.py", r + 1)] for r in range(9)}
    summary = summarise_groups(group_stacks(dumps))
    assert summary.endswith("3 more groups (3 ranks)") and summary.count(" — ") == 6


def test_matcher_text_names_where_each_group_is_stuck_and_the_odd_one_out():
    dumps: dict[str, list[Frame] | str] = {"0": collective(), "1": waiting_for_data(), "2": collective()}
    text = stacks_text(group_stacks(dumps), {"3": "not a Python process"})
    assert "py-spy: ranks 0, 2 stuck in all_reduce (torch/distributed/distributed_c10d.py)" in text
    assert "py-spy: rank 1 stuck in load_next_batch (/home/ml/train.py) (odd one out" in text
    assert "    all_reduce (torch/distributed/distributed_c10d.py:3252)" in text
    assert "    Condition.wait (threading.py:327)" in text
    assert "py-spy could not read rank 3: not a Python process" in text


def test_the_main_thread_is_chosen_even_when_py_spy_lists_another_thread_first():
    threads = [
        {"pid": 7, "thread_name": "pin_memory", "os_thread_id": 9, "active": True, "owns_gil": True,
         "frames": [{"name": "_pin_memory_loop", "filename": f"{SITE}/torch/utils/data/_utils/pin_memory.py",
                     "line": 30}]},
        {"pid": 7, "thread_name": "MainThread", "os_thread_id": 7, "active": False, "owns_gil": False,
         "frames": [{"name": "all_reduce", "filename": f"{SITE}/torch/distributed/distributed_c10d.py",
                     "line": 3252}]},
    ]
    dump = parse_dump_json(json.dumps(threads), pid=7)
    assert dump.thread_name == "MainThread" and dump.frames[0].function == "all_reduce" and dump.threads == 2


@pytest.mark.parametrize("text", ["", "Error: something", '{"pid": 1}', "[]"])
def test_output_that_is_not_a_py_spy_dump_is_refused_with_a_reason(text):
    with pytest.raises(ValueError):
        parse_dump_json(text, pid=1)


@pytest.mark.parametrize(("stderr", "reason"), [
    ("Permission Denied: Try running again with elevated permissions by going 'sudo env \"PATH=$PATH\" !!'",
     "permission denied"),
    ("Error: Failed to get process executable name. Check that the process is running.", "no such process"),
    ("Error: Failed to find python version from target process", "not a Python process"),
    ("Error: some new failure\nmore", "py-spy failed: some new failure"),
])
def test_py_spy_errors_become_short_reasons(stderr, reason):
    assert classify_failure(stderr).startswith(reason)


def test_ranks_sort_numerically_and_pid_labels_naturally():
    labels = ["pid 12", "10", "pid 9", "2", "node1:3"]
    assert sorted(labels, key=rank_sort_key) == ["2", "10", "node1:3", "pid 9", "pid 12"]
