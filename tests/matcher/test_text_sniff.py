"""Which attachments are read as logs: text, even when a crash left it padded with NULs; not compressed,
random or executable bytes, whose noise would read as error lines."""

from __future__ import annotations

import gzip
import random
import zlib
from pathlib import Path

from tracebot.matcher.scan import file_is_text, looks_like_text

OOM = b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def test_random_and_compressed_bytes_are_not_text_though_they_have_under_one_percent_nuls():
    junk = random.Random(4).randbytes(8192)
    assert junk.count(0) < len(junk) // 100
    assert not looks_like_text(junk)
    assert not looks_like_text(zlib.compress(OOM * 2000 + bytes(range(256)) * 40)[:8192])
    assert not looks_like_text(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 32)


def test_a_log_padded_with_nuls_by_a_crash_and_a_japanese_log_are_text():
    assert looks_like_text(OOM + b"\0" * 8000)
    assert looks_like_text(("学習中にエラー: " + OOM.decode()).encode() * 60)


def test_a_gzipped_log_is_sniffed_unpacked(tmp_path: Path):
    log, junk = tmp_path / "train.log.gz", tmp_path / "core.log.gz"
    log.write_bytes(gzip.compress(OOM * 500))
    junk.write_bytes(gzip.compress(random.Random(5).randbytes(20000)))
    assert file_is_text(log) and not file_is_text(junk)
