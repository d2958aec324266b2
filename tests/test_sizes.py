"""Sizes as a person reads them in tracebot's notes ("skipped, larger than 512 KB")."""

from tracebot.sizes import size_text


def test_sizes_read_as_a_person_would_say_them():
    assert size_text(371 * 1024) == "371 KB"  # not "0 MB"
    assert size_text(1536 << 10) == "1.5 MB"
    assert size_text(50 << 20) == "50 MB"
    assert size_text(1_048_575) == "1.0 MB"  # review16: one byte under a megabyte read "1,024 KB"
    assert size_text(1) == "1 byte" and size_text(900) == "900 bytes"
