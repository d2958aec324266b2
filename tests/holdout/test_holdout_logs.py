"""The held-out set's long logs are exactly what tests/holdout/make_logs.py writes.

Its message text is shared with the corpus generator (tests/loggen.py), so an edit made there for one
set reaches the other set's logs too; this keeps that from passing unnoticed.
"""

from __future__ import annotations

from tests.holdout import make_logs


def test_regenerating_the_held_out_logs_reproduces_the_committed_files_byte_for_byte(tmp_path):
    written = [path for path, _ in make_logs.generate(tmp_path)]
    assert sorted(path.name for path in written) == sorted(
        path.name for path in make_logs.LOG_DIR.glob("*.log")
    )
    for path in written:
        committed = make_logs.LOG_DIR / path.name
        assert path.read_bytes() == committed.read_bytes(), f"{committed} differs from make_logs.py output"
