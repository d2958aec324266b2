"""Compressed logs attached in Slack: ``.xz`` and ``.bz2`` are read like ``.gz``; a ``.zip``'s log files
are read, within the same bounds, and what is not read (an archive inside it, a name pointing outside it,
files past the first twenty, a ``.zst``) is named with the reason."""

from __future__ import annotations

import bz2
import io
import lzma
import zipfile

from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.tiny_kb import NCCL_LINE, OOM_LINE

LOG = ("step 100 loss 2.3\n" * 2000 + f"[rank5]: {NCCL_LINE}\n").encode()


def zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return buf.getvalue()


def answer_to(slack, name: str, content: bytes, mimetype: str = "application/octet-stream", filetype: str = "binary") -> str:
    url = slack.fake.add_file(name, content)
    slack.event(payloads.mention("job 4411 died, log attached", files=[payloads.slack_file(name, url, len(content), mimetype, filetype)]))
    slack.idle()
    (post,) = slack.fake.posts()
    return texts(post["blocks"])


def test_an_xz_log_is_unpacked_and_diagnosed(slack):
    shown = answer_to(slack, "train-node7.log.xz", lzma.compress(LOG), "application/x-xz", "xz")
    assert "Test: NCCL watchdog timeout" in shown and "line 2001" in shown, shown


def test_a_bz2_log_is_unpacked_and_diagnosed(slack):
    shown = answer_to(slack, "train-node7.log.bz2", bz2.compress(LOG), "application/x-bzip2", "bzip2")
    assert "Test: NCCL watchdog timeout" in shown and "line 2001" in shown, shown


def test_a_zip_has_its_logs_read_and_names_what_it_did_not_unpack_and_why(slack):
    archive = zipped({
        "node7/train.log": LOG,
        "../../etc/cron.d/evil.log": OOM_LINE.encode(),
        "node3/logs.zip": zipped({"train.log": OOM_LINE.encode()}),
    })
    shown = answer_to(slack, "logs.zip", archive, "application/zip", "zip")
    assert "Test: NCCL watchdog timeout" in shown, shown
    assert "Test: CUDA out of memory" not in shown, "neither the nested archive nor the escaping name was read"
    assert "`logs.zip/../../etc/cron.d/evil.log`: skipped, its name points outside the archive" in shown, shown
    assert "`logs.zip/node3/logs.zip`: skipped, an archive inside an archive is not unpacked" in shown, shown


def test_a_zip_bomb_is_unpacked_only_to_the_limit_and_says_so(slack):
    slack.tracebot.limits.max_inflated_bytes = 1 << 20
    bomb = zipped({"big.log": b"step 1 loss 2.3\n" * (40 << 20 >> 4) + f"[rank5]: {NCCL_LINE}\n".encode()})
    assert len(bomb) < 1 << 20, "40 MB unpacked from well under 1 MB"
    shown = answer_to(slack, "bomb.zip", bomb, "application/zip", "zip")
    assert "`bomb.zip/big.log`: unpacks to more than 1 MB; only the first 1 MB were read" in shown, shown


def test_a_zip_of_many_files_reads_the_first_twenty_and_says_so(slack):
    archive = zipped({f"rank{i:02d}.log": b"step 1 loss 2.3\n" for i in range(24)} | {"rank99.log": LOG})
    shown = answer_to(slack, "ranks.zip", archive, "application/zip", "zip")
    assert "`ranks.zip`: holds 25 files; only the first 20 were read" in shown, shown


def test_a_zst_log_is_named_and_not_read(slack):
    shown = answer_to(slack, "train.log.zst", b"\x28\xb5\x2f\xfd" + b"\x00" * 64, "application/zstd", "binary")
    assert "`train.log.zst`: skipped, Zstandard (.zst) is not unpacked" in shown, shown
