"""A cache folder tracebot will not use says so: an operator who warmed ``TRACEBOT_CACHE`` as root in an
image, or points it at a shared folder, otherwise sees only every start build and train again."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from tracebot.knowledge import cache


def test_a_cache_folder_of_another_user_is_named_once_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o755)
    os.chown(folder, 65534, 65534)  # nobody's (the tests run as root): warmed by another user
    monkeypatch.setenv("TRACEBOT_CACHE", str(folder))
    monkeypatch.setattr(cache, "_said_not_private", set())
    with caplog.at_level(logging.WARNING, logger="tracebot.knowledge.cache"):
        assert cache.cached("t", "k1", lambda: {"v": 1}) == {"v": 1}
        assert cache.cached("t", "k1", lambda: {"v": 1}) == {"v": 1}
    said = [r.getMessage() for r in caplog.records if r.name == "tracebot.knowledge.cache"]
    assert len(said) == 1, said
    assert str(folder) in said[0] and "not used" in said[0] and "TRACEBOT_CACHE" in said[0]
    assert not list(folder.glob("t-*.pkl"))


def test_a_folder_others_may_write_is_named_and_a_private_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    shared, mine = tmp_path / "shared", tmp_path / "mine"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setattr(cache, "_said_not_private", set())
    with caplog.at_level(logging.WARNING, logger="tracebot.knowledge.cache"):
        monkeypatch.setenv("TRACEBOT_CACHE", str(shared))
        cache.cached("t", "k2", lambda: 2)
        monkeypatch.setenv("TRACEBOT_CACHE", str(mine))
        cache.cached("t", "k2", lambda: 2)
        assert cache.lookup("t", "k2") == 2
    said = [r.getMessage() for r in caplog.records if r.name == "tracebot.knowledge.cache"]
    assert len(said) == 1 and str(shared) in said[0] and "writable by others" in said[0]


def test_a_cache_folder_that_cannot_be_made_is_named_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # a Debian system user's home is /nonexistent: ~/.cache/tracebot can never be made
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("TRACEBOT_CACHE", str(blocked / "tracebot"))
    monkeypatch.setattr(cache, "_said_not_private", set())
    with caplog.at_level(logging.WARNING, logger="tracebot.knowledge.cache"):
        assert cache.cached("t", "k3", lambda: 3) == 3
        assert cache.cached("t", "k3", lambda: 3) == 3
    said = [r.getMessage() for r in caplog.records if r.name == "tracebot.knowledge.cache"]
    assert len(said) == 1 and "cannot be made" in said[0] and str(blocked / "tracebot") in said[0]


def test_the_default_cache_folder_and_the_folders_made_above_it_are_this_user_s_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/.cache`` was made with the umask's mode (0777 under umask 000): anyone could rename
    ``~/.cache/tracebot`` away and put a folder of theirs in its place."""
    home = tmp_path / "home" / "svc"  # a new service user's home, not made yet either
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("TRACEBOT_CACHE", raising=False)
    old = os.umask(0)
    try:
        assert cache.cached("t", "k4", lambda: 4) == 4
    finally:
        os.umask(old)
    made = [home.parent, home, home / ".cache", home / ".cache" / "tracebot"]
    assert {str(p): oct(p.stat().st_mode & 0o777) for p in made} == dict.fromkeys(map(str, made), "0o700")
    assert cache.lookup("t", "k4") == 4
