"""A gzip bomb (zeros compress about a thousandfold) is unpacked only up to a limit and a deadline that
are checked while it inflates, not after: reading it costs bounded time whatever it inflates to."""

from __future__ import annotations

import gzip
import io
import itertools
import re

from tracebot.matcher.scan import INFLATE_PIECE, BoundedInflate

OOM = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def _bomb(tmp_path, inflated_mb: int):
    path = tmp_path / "bomb.log.gz"
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(OOM)
        zeros = b"\0" * (1 << 20)
        for _ in range(inflated_mb):
            out.write(zeros)
    return path


def test_a_bomb_is_read_up_to_the_inflate_limit_and_the_note_says_so(tmp_path, matcher):
    path = _bomb(tmp_path, 512)
    assert path.stat().st_size < 1 << 20

    found = matcher.diagnose_file(path, max_inflated_bytes=16 << 20)

    assert found.bytes_read <= 16 << 20
    assert found.truncated and "unpacks to more than 16 MB; only the first 16 MB were read" in found.notes
    assert found.matches and found.matches[0].entry_id == "cuda-oom"


def test_the_deadline_is_checked_between_pieces_of_one_read():
    ticks = itertools.count()  # a clock that moves one second per look
    stream = BoundedInflate(
        gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(b"\0" * (64 << 20)))), deadline=2.5, clock=lambda: next(ticks)
    )

    data = stream.read(32 << 20)  # one read call, as the log scanner makes

    assert len(data) == 3 * INFLATE_PIECE
    assert stream.stopped.startswith("time limit reached after 3 MB unpacked")
    assert stream.read(1) == b""


def test_a_deadline_in_the_past_reads_nothing_of_the_file(tmp_path, matcher):
    import time

    found = matcher.diagnose_file(_bomb(tmp_path, 8), deadline=time.monotonic() - 1)

    assert found.bytes_read == 0 and found.truncated
    assert any(n.startswith("time limit reached") for n in found.notes)


# Written here (review12): an upload cut short, a damaged archive. What could be unpacked is read; the rest is
# named in a note, never a crash (gzip raises EOFError and zlib.error, neither an OSError).
def _damaged(tmp_path, how: str):
    steps = b"".join(b"step %d loss 0.%d lr 3e-4\n" % (i, i % 97) for i in range(40_000))
    data = gzip.compress(OOM + steps, compresslevel=6)
    path = tmp_path / f"{how}.log.gz"
    if how == "cut":
        path.write_bytes(data[: len(data) // 2])
    else:
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :])
    return path


def test_a_gzip_cut_short_or_damaged_is_read_up_to_the_damage(tmp_path, matcher):
    for how in ("cut", "damaged"):
        found = matcher.diagnose_file(_damaged(tmp_path, how))
        assert found.matches and found.matches[0].entry_id == "cuda-oom", how
        damaged = [n for n in found.notes if "damaged or cut short" in n]
        assert found.truncated and damaged, (how, found.notes)
        # how much came out before the damage, in a unit that shows it: "after 0 MB unpacked" said 500 KB
        said = {"cut": r"after [1-9]\d{2} KB unpacked", "damaged": r"after 1\.\d MB unpacked"}[how]
        assert re.search(said, damaged[0]), damaged


def test_gzip_bytes_diagnosed_in_memory_say_where_they_were_cut_in_english_and_japanese(tmp_path, matcher,
                                                                                       monkeypatch):
    """Gzip handed over as bytes (standard input, a paste of bytes) was unpacked up to the in-memory cap, or up
    to its damage, and the answer said nothing: it read as the whole log. Each cut is a note, as for a file."""
    from tracebot.matcher import scan
    from tracebot.render.messages import say_note

    monkeypatch.setattr(scan, "MAX_INFLATED", 4 << 20)
    bomb = _bomb(tmp_path, 16).read_bytes()
    found = matcher.diagnose(bomb)
    said = "unpacks to more than 4 MB; only the first 4 MB were read"
    assert found.truncated and said in found.notes, found.notes
    assert say_note(said, "ja") == "展開すると 4 MB を超えるため、先頭の 4 MB だけを読みました"
    cut = matcher.diagnose(_damaged(tmp_path, "cut").read_bytes())
    assert cut.matches[0].entry_id == "cuda-oom"
    assert cut.truncated and any("damaged or cut short" in n for n in cut.notes), cut.notes


def test_closing_a_gzipped_log_closes_its_file(tmp_path):
    """GzipFile does not close a file it was handed: every gzipped log a reader opened and closed kept its
    descriptor until the garbage collector found it (a bot reading many attachments runs out of them)."""
    import os

    from tracebot.matcher.scan import open_log

    path = tmp_path / "train.log.gz"
    path.write_bytes(gzip.compress(OOM))
    before = len(os.listdir("/proc/self/fd"))
    opened = []
    for _ in range(5):
        stream, _size = open_log(path)
        with stream:
            assert stream.read() == OOM
        opened.append(stream)  # kept alive: only closing may release the descriptor
    assert len(os.listdir("/proc/self/fd")) == before
