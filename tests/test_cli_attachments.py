"""``tracebot trace --out DIR``: attachment names come from plugins that carry job-controlled text (a job
name, a py-spy file name), so every attachment lands inside DIR under a safe name, none overwrites
another of the same run, and a renamed one says why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracebot.cli import main
from tracebot.plugin_api import Command, CommandContext, hookimpl
from tracebot.result import Attachment, Result
from tracebot.service.plugin_host import default_host

HOSTILE = ["..", ".", "/x", "a/../../b", "", "nul\0byte.txt", "bell\x07\x1b[31mred.txt", ".bashrc",
           "ranks.png", "ranks.png", "x" * 300 + ".txt"]


class AttachPlugin:
    """``/trace attach``: one attachment per hostile name, each with its own content."""

    @hookimpl
    def register_commands(self) -> list[Command]:
        def run(ctx: CommandContext) -> Result:
            return Result(title="attach", summary="files", attachments=[
                Attachment(name, f"content {i}".encode(), mimetype="image/png" if "png" in name else "text/plain")
                for i, name in enumerate(HOSTILE)])

        return [Command(name="attach", usage="/trace attach", help="Hostile attachment names (tests).",
                        parse=lambda words: {}, run=run)]


@pytest.fixture
def attach_plugin() -> Iterator[None]:
    host = default_host()
    assert host.register(AttachPlugin(), name="attach-test"), host.load_errors()
    try:
        yield
    finally:
        host.unregister(name="attach-test")


def test_every_attachment_lands_inside_out_dir_under_a_safe_name_and_none_is_overwritten(
        attach_plugin: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "deep" / "out"
    out.mkdir(parents=True)
    assert main(["trace", "--json", "--out", str(out), "attach"]) == 0
    doc = json.loads(capsys.readouterr().out)

    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert all(p.parent == out for p in written), written  # nothing beside or above DIR
    assert sorted(p.read_bytes() for p in written) == sorted(f"content {i}".encode() for i in range(len(HOSTILE)))
    for entry in doc["attachments"]:
        path = Path(entry["path"])
        assert path.parent == out and path.read_bytes()  # each names the file that holds it
        assert not path.name.startswith(".") and all(c.isprintable() for c in path.name)
    paths = [entry["path"] for entry in doc["attachments"]]
    assert len(set(paths)) == len(HOSTILE)
    assert paths[8] == str(out / "ranks.png")  # a safe name is kept as the plugin gave it
    assert paths[9] != paths[8] and paths[9].endswith(".png")  # the second ranks.png does not overwrite the first
    notes = {i: entry.get("note", "") for i, entry in enumerate(doc["attachments"])}
    assert "not a plain file name" in notes[0] and "not a plain file name" in notes[1]
    assert "/" in notes[2] and "/" in notes[3]
    assert "empty" in notes[4]
    assert "control or invisible character" in notes[5] and "control or invisible character" in notes[6]
    assert "hidden" in notes[7]
    assert "already" in notes[9]
    assert "too long" in notes[10]


def test_renamed_attachments_are_explained_in_the_text_output(attach_plugin: None, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "attach", "--out", str(tmp_path / "new")]) == 0
    said = capsys.readouterr()
    wrote = [ln for ln in said.out.splitlines() if ln.startswith("wrote ")]
    assert len(wrote) == len(HOSTILE)
    assert "'..' is not a plain file name" in said.err
    assert "\x1b" not in said.out + said.err  # a hostile name never drives the terminal


def test_a_symlink_in_out_dir_is_not_followed(tmp_path: Path, attach_plugin: None,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.write_text("keep me")
    (out / "ranks.png").symlink_to(victim)
    assert main(["trace", "--json", "--out", str(out), "attach"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert victim.read_text() == "keep me"
    assert doc["attachments"][8]["path"] != str(out / "ranks.png")
    assert "symbolic link" in doc["attachments"][8]["note"]


def test_an_out_dir_that_cannot_be_made_says_why_and_still_prints_the_result(
        tmp_path: Path, attach_plugin: None, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["trace", "attach", "--out", str(blocker / "out")]) == 1
    said = capsys.readouterr()
    assert "files" in said.out  # the result itself
    assert "could not create the directory" in said.err and "Not a directory" in said.err
    assert main(["trace", "help", "--out", str(blocker / "out")]) == 0  # nothing to write, nothing to fail


def test_a_fifo_planted_after_the_check_fails_that_attachment_instead_of_hanging(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Written here (review12). The name check runs before the open: something that can write to DIR can put a
    # named pipe under the name in between (the check is made to miss it here, as the race would). Opening a
    # pipe for writing with no reader waits forever, so `tracebot trace --out` would hang.
    import os
    import threading

    from tracebot.render import files

    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "ranks.png")
    monkeypatch.setattr(files, "_occupied", lambda path: False)
    saved: list[files.SavedAttachment] = []
    worker = threading.Thread(target=lambda: saved.extend(files.write_attachments(
        [Attachment("ranks.png", b"png"), Attachment("stacks.txt", b"text")], out)), daemon=True)
    worker.start()
    worker.join(timeout=30)  # a guard against the hang, not a synchronisation: it returns as soon as both are done
    assert not worker.is_alive(), "writing an attachment blocked on a named pipe"
    assert saved[0].path is None and "was not written" in saved[0].note
    assert saved[1].path == out / "stacks.txt" and (out / "stacks.txt").read_bytes() == b"text"


@pytest.mark.parametrize("name", ["a\u2028b.txt", "line\u2029sep.png", "\u00a0.txt", "wide\u3000space.txt",
                                  "   ", " ranks.png", "ranks.png ", "-rf", "--help.txt"])
def test_an_invisible_spacing_or_option_like_name_is_renamed(tmp_path: Path, name: str) -> None:
    # Written here (review12): line and paragraph separators and spaces other than ' ' are not control
    # characters (Unicode's Z, not C), yet they break a printed line or hide in it; a name of spaces or with one
    # at either end looks like another; a leading '-' is read as an option by `rm *` or `ls *` in DIR.
    from tracebot.render.files import write_attachments

    [saved] = write_attachments([Attachment(name, b"x", mimetype="text/plain")], tmp_path)
    assert saved.path is not None and saved.path.name.startswith("attachment-1"), saved
    assert all(c.isprintable() for c in saved.path.name) and saved.note
