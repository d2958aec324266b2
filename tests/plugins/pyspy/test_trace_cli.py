"""``tracebot trace ...`` in a terminal: the same result as Slack, as text or JSON, attachments to files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[3]


def tracebot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracebot.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "TRACEBOT_LOAD_ENTRYPOINTS": "0"})


def test_trace_pid_json_lists_groups_and_writes_the_png_into_out_dir(launcher, tmp_path):
    parent, ranks = launcher(9, 4)
    done = tracebot("trace", "pid", str(parent), "--json", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr

    result = json.loads(done.stdout)
    assert [g["ranks"] for g in result["stack_groups"]] == [["4"], ["0", "1", "2", "3", "5", "6", "7", "8"]]
    assert result["stack_groups"][0]["odd_one_out"] is True
    assert result["summary"].startswith("rank 4: load_next_batch (worker.py:")
    [png] = result["attachments"]
    assert png["path"] == str(tmp_path / "out" / "ranks.png")
    assert Image.open(png["path"]).format == "PNG"


def test_trace_pid_as_text_shows_the_summary_and_where_the_png_would_go(hung):
    pid = hung("wait")
    done = tracebot("trace", "pid", str(pid))
    assert done.returncode == 0, done.stderr
    assert f"pid {pid}: all_reduce_wait (worker.py:" in done.stdout
    assert "Traceback" not in done.stderr


def test_bad_arguments_exit_2_with_the_usage():
    done = tracebot("trace", "pid", "$(id)")
    assert done.returncode == 2
    # in a terminal the usage names the command a shell runs (the plugin's own result, in Slack, says /trace)
    assert "Usage: `tracebot trace pid <pid> [--host H] [--native]`" in done.stdout


def test_trace_help_lists_the_commands():
    done = tracebot("trace", "help")
    # in a terminal the help names each command as a shell runs it (mend13: usage per transport)
    assert done.returncode == 0 and "`tracebot trace pid <pid> [--host H] [--native]`" in done.stdout
    assert "`/trace pid" not in done.stdout
