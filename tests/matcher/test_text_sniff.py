"""Which attachments are read as logs: text, even when a crash left it padded with NULs; not compressed,
random or executable bytes, whose noise would read as error lines."""

from __future__ import annotations

import codecs
import gzip
import io
import random
import zlib
from pathlib import Path

import pytest

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


# A French cluster's log: accents on most lines, and in the line the answer quotes.
FRENCH = ("2024-05-02 10:00:01 node3: [rank0]: étape 100, perte élevée, durée écoulée, mémoire réservée à côté\n" * 60
          + "2024-05-02 10:00:04 node3: [rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            "2.00 GiB (étape 101, mémoire réservée)\n")
QUOTED = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (étape 101, mémoire réservée)"
ENCODED = {
    "utf-16-le, no mark": FRENCH.encode("utf-16-le"),
    "utf-16-be, no mark": FRENCH.encode("utf-16-be"),
    "latin-1": FRENCH.encode("latin-1"),
    "gzipped utf-16 with its mark": gzip.compress(FRENCH.encode("utf-16")),
    "gzipped utf-16-le, no mark": gzip.compress(FRENCH.encode("utf-16-le")),
    "gzipped latin-1": gzip.compress(FRENCH.encode("latin-1")),
}


@pytest.mark.parametrize("name", ENCODED)
def test_a_log_in_another_encoding_is_read_and_its_line_quoted_as_written(tmp_path: Path, matcher, name):
    """UTF-16 without a byte-order mark was read as bytes (every other one a NUL: no match); Latin-1 dense
    with accents was refused as binary; gzip around either, the same. Each is read in its encoding, as an
    attachment (the sniff, then the file), as a paste of bytes, and by /trace job's log scan."""
    from tracebot.matcher.logscan import scan_log

    log = tmp_path / ("train.log.gz" if name.startswith("gzip") else "train.log")
    log.write_bytes(ENCODED[name])
    assert file_is_text(log)
    for found in (matcher.diagnose_file(log), matcher.diagnose(ENCODED[name])):
        assert found.confident and found.confident[0].entry_id == "cuda-oom", name
        assert found.confident[0].line.endswith(QUOTED) and found.confident[0].line_no == 61, found.confident[0].line
    scanned = scan_log(log, matcher.trigger)
    assert not scanned.unreadable and [e.message for e in scanned.errors] == [QUOTED]


def test_utf8_with_a_stray_byte_stays_utf8_and_nul_padding_is_not_utf16():
    """The guesses stay narrow: one broken byte does not turn a UTF-8 log's '│' and 'é' into 'â”‚' and
    'Ã©', and a log padded with NULs by a crash (NULs on both sides of every pair) is not UTF-16."""
    from tracebot.matcher.encodings import sniff_encoding
    from tracebot.matcher.normalize import to_text

    utf8 = b"\xff" + "│ étape 1 │\n".encode() * 100
    assert sniff_encoding(utf8) == "utf-8" and "│ étape 1 │" in to_text(utf8)
    assert sniff_encoding(OOM + b"\0" * 8000) == "utf-8"
    assert sniff_encoding(random.Random(6).randbytes(8192)) == "utf-8"
    assert not looks_like_text(random.Random(6).randbytes(8192))


def test_a_gzipped_job_log_cut_by_the_time_limit_says_so_once_without_comparing_unpacked_to_packed(tmp_path: Path):
    """/trace job's scan of a gzipped log at its time limit: one note, and not "after 4 MB of 60 KB"."""
    from tracebot.matcher.logscan import scan_log

    log = tmp_path / "slurm-7.out.gz"
    log.write_bytes(gzip.compress(b"[rank1]: iteration 7 | lm loss 2.43 | grad norm 0.81\n" * 400_000))
    scanned = scan_log(log, budget_s=0.0005)
    limits = [n for n in scanned.notes if "time limit" in n]
    assert scanned.truncated and len(limits) == 1, scanned.notes
    assert " of " not in limits[0].split(";")[0], limits[0]


def test_a_utf8_log_with_a_few_binary_bytes_near_its_start_stays_utf8():
    """A stretch of binary bytes among a log's first lines (a dumped buffer, a torn write) is undecodable as
    UTF-8 and mostly printable as Windows-1252, but it is not a Latin-1 log: its control characters are a
    large share of its high bytes, where accented text has next to none. Read as Latin-1, every later line's
    Japanese and box drawing came out as 'ã‚¨ãƒ©ãƒ¼' and 'â”‚'."""
    from tracebot.matcher.encodings import sniff_encoding
    from tracebot.matcher.normalize import to_text

    lines = b"".join(f"2024-05-02 10:00:{i % 60:02d} node3: [rank0]: step {i} loss 2.31\n".encode() for i in range(200))
    later = "[rank1] エラー: CUDA のメモリ不足 │ see above\n".encode()
    flipped = 0
    for seed in range(40):
        rng = random.Random(seed)
        blob = bytes(rng.choice(range(1, 256)) for _ in range(64))
        log = lines[:1500] + b"[rank0] dumped: " + blob + b"\n" + lines + later
        flipped += sniff_encoding(log[:8192]) != "utf-8"
        assert later.decode() in to_text(log), seed
    assert flipped == 0
    assert sniff_encoding(FRENCH.encode("latin-1")[:8192]) == "cp1252"


def test_binary_whose_nuls_fall_on_odd_offsets_is_not_taken_for_utf16_and_is_refused(tmp_path: Path):
    """Random bytes with a NUL at every odd offset, and a tensor of small 16-bit integers (a checkpoint's
    payload, a core dump's counters), sniff like ASCII in UTF-16: the sniff called them text, and the reader
    turned them into control characters and stray letters that were matched as lines. What the bytes
    decode to is judged too, so they are refused as binary; a real UTF-16 log still reads."""
    rng = random.Random(7)
    odd_nuls = bytes(b for _ in range(4096) for b in (rng.randrange(256), 0))
    small_ints = b"".join(rng.randrange(1024).to_bytes(2, "little") for _ in range(4096))
    for name, data in (("odd-nuls.bin", odd_nuls), ("tensor.pt", small_ints), ("be.bin", odd_nuls[1:] + b"\0")):
        path = tmp_path / name
        path.write_bytes(data)
        assert not looks_like_text(data[:8192]), name
        assert not file_is_text(path), name
    assert looks_like_text(FRENCH.encode("utf-16-le")[:8192])
    torn = "step 1\n".encode("utf-16-le") + b"\x00\xd8" + FRENCH.encode("utf-16-le")
    assert looks_like_text(torn[:8192])


class _JobStillWriting(io.RawIOBase):
    """The log as /trace job opens it while the job writes: the first read finds ``later`` appended since
    the open (the size was taken at the open)."""

    def __init__(self, path: Path, later: bytes) -> None:
        self.path, self.later = path, later
        self.file = path.open("rb", buffering=0)

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self.later:
            with self.path.open("ab") as log:
                log.write(self.later)
            self.later = b""
        return self.file.readinto(buffer)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.file.seek(offset, whence)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.file.fileno()

    def close(self) -> None:
        self.file.close()
        super().close()


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le"])
def test_a_log_the_job_is_still_writing_is_read_as_it_was_when_the_read_began(tmp_path: Path, encoding: str):
    """UTF-16 is recoded as it is read, so the size taken at the open did not bound it and what the job
    wrote meanwhile was read and reported; UTF-8 read up to a block past it too. Both stop at that size."""
    from tracebot.matcher.logscan import scan_log

    before = "epoch 3 step 120 loss 2.31\n" * 40 + "[rank2]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp\n"
    after = "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    log = tmp_path / "slurm-9.out"
    log.write_bytes(before.encode(encoding))
    grown = after.encode(encoding).removeprefix(codecs.BOM_UTF16_LE).removeprefix(codecs.BOM_UTF16_BE)
    scanned = scan_log(log, opener=lambda p: io.BufferedReader(_JobStillWriting(p, grown)))
    assert [e.rank for e in scanned.errors] == ["2"], [e.message for e in scanned.errors]
    assert scanned.size == len(before.encode(encoding))


@pytest.mark.parametrize("accents_in_head", [0, 1, 2])
def test_a_latin1_log_with_few_accents_in_its_head_is_read_with_its_accents_not_replacement_marks(
        tmp_path: Path, matcher, accents_in_head: int):
    """The Latin-1 guess needs 3 undecodable bytes in the head; with fewer (or none: the accents come later)
    the log stayed UTF-8 and every accent became U+FFFD in the line the answer quotes. Each line that is
    not UTF-8 is now judged on its own: one that reads as clean Windows-1252 is Latin-1, wherever it is."""
    from tracebot.matcher.logscan import scan_log

    head = "".join(("2024-05-02 10:00:01 node3: [rank0]: " + ("étape 1" if i < accents_in_head else "step 1") + "\n")
                   for i in range(300))
    text = head + ("2024-05-02 10:00:04 node3: [rank1]: torch.OutOfMemoryError: CUDA out of memory. "
                   "Tried to allocate 2.00 GiB (étape 101, mémoire réservée)\n")
    log = tmp_path / "train.log"
    log.write_bytes(text.encode("latin-1"))
    for found in (matcher.diagnose_file(log), matcher.diagnose(text.encode("latin-1"))):
        assert found.confident and found.confident[0].entry_id == "cuda-oom"
        assert found.confident[0].line.endswith(QUOTED), found.confident[0].line
    assert [e.message for e in scan_log(log, matcher.trigger).errors] == [QUOTED]
    utf8 = "│ étape 1 │ " + OOM.decode()
    assert matcher.diagnose(utf8.encode()).confident[0].line.startswith("│ étape 1 │")  # UTF-8 stays UTF-8
    junk = b"\xff\x01\xfe\x02" + OOM  # binary before a line (control bytes among it) is not read as letters
    assert matcher.diagnose(junk).confident[0].line.startswith("\ufffd")
