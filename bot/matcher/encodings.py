"""What a log's bytes are written in, so that every reader decodes it as the person's editor would.

UTF-8 is the default. Besides it, logs arrive as UTF-16 with a byte-order mark (Windows PowerShell 5's
``>``), UTF-16 without one (``Out-File -Encoding Unicode`` cut by a tool that dropped the mark, Windows
services' own logs) and Latin-1 / Windows-1252 (systems with a European locale: ``étape``, ``Größe``).
The encoding is decided once, from the head of the file; bytes that are none of these stay UTF-8 and
:func:`tracebot.matcher.scan.looks_like_text` judges them. A log judged UTF-8 is still read line by line
(:func:`decode_line`): the head may hold too few accents to tell Latin-1 (or none: the first comes later).
"""

from __future__ import annotations

import codecs
import re
import unicodedata

SNIFF_BYTES = 8192  # what is read of a file to tell its encoding, and text from binary
UTF8 = "utf-8"
LATIN = "cp1252"  # Latin-1's printable characters, plus the quotes and dashes Windows puts in 0x80-0x9f
_TEXT_CONTROLS = "\t\n\r\f\v\b\x1b"  # control characters a text log may hold (tabs, colours, backspaces)


def sniff_encoding(head: bytes) -> str:
    """The encoding ``head`` (a file's first few kilobytes) is written in, as a codec name."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # the codec reads the mark and takes its byte order
        return "utf-16" if _reads_as_utf16(head, "utf-16") else UTF8
    if head.startswith(codecs.BOM_UTF8):
        return UTF8
    pairs = len(head) // 2
    if pairs >= 8:
        # ASCII in UTF-16 is every other byte a NUL, on one side only. A log padded with NUL runs (a node's
        # crash) has them on both sides, so it stays UTF-8.
        even, odd = head[0 : 2 * pairs : 2].count(0), head[1 : 2 * pairs : 2].count(0)
        if odd >= pairs * 0.6 and even <= pairs * 0.02 + 1:
            return "utf-16-le" if _reads_as_utf16(head, "utf-16-le") else UTF8
        if even >= pairs * 0.6 and odd <= pairs * 0.02 + 1:
            return "utf-16-be" if _reads_as_utf16(head, "utf-16-be") else UTF8
    return LATIN if _reads_as_latin(head) else UTF8


def _reads_as_utf16(head: bytes, codec: str) -> bool:
    """The NULs say UTF-16; the characters must agree. Binary whose NULs merely fall on one side (16-bit
    integers below 256 or 1024: a checkpoint's tensor, a core dump's counters, random bytes with NULs between)
    decodes to control characters, unassigned code points and lone surrogates; a log in UTF-16 to hardly
    any. NUL itself is not counted: a UTF-16 log a crash padded with NULs is still a log."""
    text = codecs.getincrementaldecoder(codec)(errors="replace").decode(head, final=False)
    noise = sum(1 for c in text if c != "\x00" and _is_noise(c))
    return noise <= len(text) // 100 + 2  # +2: a torn write's lone surrogate


def _is_noise(c: str) -> bool:
    """A character no text log holds: a control other than tab, newline and the like, a C1 control, the
    replacement of an undecodable byte, a lone surrogate, a private-use or unassigned code point."""
    if c < " ":
        return c not in _TEXT_CONTROLS
    if c < "\x7f":
        return False
    return c <= "\x9f" or c == "\ufffd" or unicodedata.category(c) in ("Cs", "Co", "Cn")


# What no text holds, as Windows-1252 (or Latin-1) reads bytes: the controls but _TEXT_CONTROLS, DEL, the C1
# controls and the replacement of Windows-1252's five undefined bytes. :func:`_is_noise` over every character
# either decoding gives, as one regex for speed on whole lines.
_LATIN_NOISE = re.compile("[" + "".join(
    re.escape(c) for c in sorted({*map(chr, range(256)), *bytes(range(256)).decode(LATIN, errors="replace")}) if _is_noise(c)
) + "]")


def _reads_as_latin(head: bytes) -> bool:
    """Not UTF-8 (several undecodable bytes, hardly any multi-byte character), and clean text as
    Windows-1252: random, compressed and executable bytes are full of control characters there."""
    if head.isascii() or 0 in head:
        return False
    # A character cut at the end of the head is not an undecodable byte: the incremental decoder keeps it.
    as_utf8 = codecs.getincrementaldecoder(UTF8)(errors="replace").decode(head, final=False)
    undecodable = as_utf8.count("\ufffd")
    multibyte = sum(1 for c in as_utf8 if c > "\x7f") - undecodable
    if undecodable < 3 or multibyte * 20 > undecodable:
        return False  # UTF-8 with a stray byte or two: a later 'é' or '│' must not turn into 'Ã©' or 'â”‚'
    as_latin = head.decode(LATIN, errors="replace")
    noise = len(_LATIN_NOISE.findall(as_latin))
    # Judged against the high bytes too, not the head alone: a short binary stretch among a UTF-8 log's
    # ASCII lines (a dumped buffer, a torn write) has about one control character for every five high
    # bytes, and those few were well under the head's share; accented text has next to none.
    high = sum(1 for b in head if b > 0x7F)
    return noise <= len(as_latin) // 200 and noise * 20 <= high


def decode_line(raw: bytes) -> str:
    """One line of a log judged UTF-8. A line that is not UTF-8, holds no UTF-8 character of more than one
    byte, and reads as clean Windows-1252 (no control character, no undefined byte) is a Latin-1 line:
    ``m\xe9moire`` is "mémoire", where U+FFFD hid the accent. Otherwise (a stray byte in UTF-8 text, binary
    junk, which has control characters) undecodable bytes are U+FFFD, as before."""
    try:
        return raw.decode(UTF8)
    except UnicodeDecodeError:
        pass
    as_utf8 = raw.decode(UTF8, errors="replace")
    if as_utf8.replace("\ufffd", "").isascii():
        as_latin = raw.decode(LATIN, errors="replace")
        if not _LATIN_NOISE.search(as_latin):
            return as_latin
    return as_utf8


def decode(data: bytes) -> str:
    """``data`` as text, in the encoding its head is written in (line by line when that is UTF-8 and
    some line is not: :func:`decode_line`)."""
    enc = sniff_encoding(data[:SNIFF_BYTES])
    if enc != UTF8:
        return data.decode(enc, errors="replace")
    try:
        return data.decode(UTF8)
    except UnicodeDecodeError:
        return "".join(decode_line(line) for line in data.splitlines(keepends=True))
