"""Which attachments are read as logs: text, even when a crash left it padded with NULs; not compressed,
random or executable bytes, whose noise would read as error lines."""

from __future__ import annotations

import codecs
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


def test_a_utf16_log_as_windows_powershell_writes_it_is_diagnosed(tmp_path: Path, matcher):
    """PowerShell 5's ``python train.py > train.log`` writes UTF-16 with a byte-order mark: the sniff
    called it text (its NULs are not counted), then the scanner read every other byte as a NUL and said
    'No known problem matched' about a plain CUDA OOM. Big-endian and a large file (read in blocks) too."""
    text = "epoch 3 step 120 loss 2.31\n" * 40 + OOM.decode()
    for encoding in ("utf-16", "utf-16-be"):
        for repeat in (1, 4000):
            log = tmp_path / f"train-{encoding}-{repeat}.log"
            data = (("epoch 1 step 1 loss 9.0\n" * repeat) + text).encode(encoding)
            log.write_bytes(data if encoding == "utf-16" else b"\xfe\xff" + data)
            assert file_is_text(log)
            found = matcher.diagnose_file(log)
            assert found.matches and found.matches[0].entry_id == "cuda-oom", (encoding, repeat)
            assert found.matches[0].line_no == repeat + 41, (encoding, repeat)
    torn = tmp_path / "torn.log"  # a lone surrogate (a torn write) is read past, not a UnicodeDecodeError
    torn.write_bytes(codecs.BOM_UTF16_LE + "step 1\n".encode("utf-16-le") + b"\x00\xd8" + text.encode("utf-16-le"))
    assert matcher.diagnose_file(torn).matches[0].entry_id == "cuda-oom"
