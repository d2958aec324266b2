"""How the console groups typed or piped lines into turns."""

from __future__ import annotations

from tracebot.console import turns


def test_piped_messages_are_separated_by_dashes_and_keep_their_blank_lines():
    lines = ["/trace help\n", "Traceback:\n", "\n", "  File x\n", "---\n", "@tracebot why\n", "/quit\n"]
    assert list(turns(lines, interactive=False)) == [
        "/trace help",
        "Traceback:\n\n  File x",
        "@tracebot why",
        "/quit",
    ]


def test_a_log_line_starting_with_a_path_is_text_not_a_command():
    line = "/opt/conda/lib/python3.11/site-packages/torch/cuda.py:12: UserWarning: CUDA out of memory"
    assert list(turns([line + "\n", "more\n"], interactive=False)) == [f"{line}\nmore"]


def test_at_a_terminal_an_empty_line_sends_the_message():
    lines = ["CUDA out of memory\n", "\n", "/click helpful\n"]
    assert list(turns(lines, interactive=True)) == ["CUDA out of memory", "/click helpful"]
