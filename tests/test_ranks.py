"""How rank, host and node lists read in every answer."""

import json

from tracebot.ranks import first_few, format_ranks, ranks_phrase
from tracebot.render.slack import match_blocks
from tracebot.result import Match


def test_numeric_ranks_become_ranges_and_long_lists_say_how_many_are_left():
    assert format_ranks(["0", "2", "3", "4", "5", "9"]) == "0, 2–5, 9"
    assert format_ranks(["4", "5"]) == "4, 5"
    assert format_ranks([str(r) for r in range(0, 60, 2)], limit=3) == "0, 2, 4 and 27 more"
    assert ranks_phrase(["7"]) == "rank 7" and ranks_phrase(["pid 4242"]) == "pid 4242"


def test_first_few_names_how_many_it_left_out():
    assert first_few(["a", "b"], 3) == "a, b"
    assert first_few(["a", "b", "c", "d", "e"], 3) == "a, b, c (+2 more)"
    assert first_few(["n1 (down)", "n2 (down)"], 1, sep="; ") == "n1 (down) (+1 more)"


def test_an_answer_on_many_hosts_names_five_and_counts_the_rest():
    hosts = [f"gpu-{i:02d}" for i in range(8)]
    m = Match("cuda-oom", "CUDA out of memory", 90.0, True, line_no=12, hosts=hosts, ranks=["3"])
    text = json.dumps(match_blocks(m))
    assert "gpu-04 (+3 more)" in text and "gpu-05" not in text


def test_a_rank_label_that_is_a_jobs_own_text_and_no_number_is_listed_as_text_never_a_crash():
    # RANK=² (a digit to str.isdigit, no number to int) or a 5,000-digit RANK on the job's own process: /trace pid
    # and /trace job ended in "ValueError: invalid literal for int()" (or "Exceeds the limit (4300 digits)")
    from tracebot.plugins.pyspy.group import rank_sort_key
    from tracebot.plugins.pyspy.procs import rank_variable

    huge = "9" * 5000
    assert format_ranks(["0", "1", "²", "٣"]) == "0, 1, ², ٣"
    assert format_ranks(["2", huge], limit=12).startswith("2, 999")
    assert ranks_phrase(["²"]) == "²" and ranks_phrase(["3"]) == "rank 3"
    assert sorted(["10", "²", "2", huge, "pid 12", "pid 9"], key=rank_sort_key)[:2] == ["2", "10"]
    assert rank_variable({"RANK": "²", "SLURM_PROCID": "3"}) == ("SLURM_PROCID", "3")
    assert rank_variable({"RANK": huge}) is None
