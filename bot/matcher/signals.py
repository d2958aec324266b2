"""Which line of a text states the error: shared by the draft author (``kb new --from``) and the
store's list of unanswered errors, so both pick the same line and mask it the same way."""

from __future__ import annotations

import re
from typing import Any

import re2

from tracebot.matcher.normalize import clean, mask, to_text

# Lines that say what went wrong, strongest first. A line's score is the sum of the weights that hit.
SIGNALS: list[tuple[re.Pattern[str], int]] = [
    (re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Failure|Interrupt)\b\s*:"), 6),
    (re.compile(r"\bNCCL WARN\b"), 6),
    (re.compile(r"^nccl[A-Z]\w*:"), 5),  # NCCL result codes: ncclInvalidUsage:, ncclRemoteError:
    (re.compile(r"\b(?:Watchdog caught|watchdog thread terminated)\b", re.I), 5),
    (re.compile(r"\b[a-z]*(?:Error|Exception)\b\s*:"), 4),
    (re.compile(r"\berror\b|エラー|例外|失敗", re.I), 3),
    (
        re.compile(
            r"\b(?:failed|failure|fatal|timed? ?out|timeout|killed|abort(?:ed|ing)?|denied|not found)\b", re.I
        ),
        2,
    ),
    (re.compile(r"\b(?:cannot|could not|unable to|no such|unhandled|invalid|missing)\b", re.I), 1),
]
# Lines that never make a good signature: traceback frames and headers, C++ frames, INFO/DEBUG chatter,
# progress bars and blank-ish lines.
NOISE = [
    re.compile(r"^Traceback \(most recent call last\)"),
    re.compile(r'^File "[^"]*", line \d+'),
    re.compile(r"^frame #\d+:"),
    re.compile(
        r"^Thread (?:0x[0-9A-Fa-f]+|\d+) \("
    ),  # py-spy thread header; its first frame is the signature
    re.compile(r"^Exception raised from \S+ at "),
    # a log level, not a setting's name or value: PyTorch's NCCL errors say "(run with NCCL_DEBUG=INFO for
    # details)", and that error line is no INFO chatter
    re.compile(r"(?<![A-Z0-9_]=)\b(?:INFO|DEBUG|TRACE)\b(?!=)"),
    re.compile(r"^\s*[-=_*#|+~.]{3,}"),
    re.compile(r"^\W*$"),
]
# glog / c10 prefixes ("[E ProcessGroupNCCL.cpp:523] ", "E1128 12:00:01.123 4567 file.cc:12] ") carry a
# source line number that changes between releases: the signature starts after them.
GLOG_PREFIX = re.compile(
    r"^(?:\[[EWIF] [\w.-]+:\d+\]\s*|\[?[EWIF]\d{3,4} \d\d:\d\d:\d\d\.\d+(?:\s+\d+)? [\w.-]+:\d+\]\s*)+"
)
ERROR_LINE_SCORE = 3  # at least "error" in so many words: chatter that merely says "failed" is not a paste
SIGNATURE_CHARS = 200


def _re2_signals() -> Any:
    """Every signal in one RE2 pattern, which finds a match in an ASCII line exactly where one of
    :data:`SIGNALS` does: there RE2's ``\\w`` and ``\\b`` are ``re``'s, and its ``\\s`` is widened to the
    ASCII characters ``re`` counts as white space (RE2 leaves out ``\\x0b`` and ``\\x1c``-``\\x1f``). One pass
    over a line that states nothing, where ``re`` searched it once per signal and noise pattern (most of
    a traceback's or a log's lines)."""
    parts = []
    for pattern, _ in SIGNALS:
        source = pattern.pattern.replace(r"\s", r"[\t\n\x0b\x0c\r\x1c-\x1f ]")
        parts.append(f"(?i:{source})" if pattern.flags & re.IGNORECASE else f"(?:{source})")
    return re2.compile("|".join(parts))


_ANY_SIGNAL = _re2_signals()


def _signalless(text: str) -> bool:
    """Whether no signal is in ``text`` (asked of ASCII text only: see :func:`_re2_signals`)."""
    return text.isascii() and not _ANY_SIGNAL.search(text)


def _states_nothing(text: str) -> bool:
    """Too short, no signal at all, or noise (an INFO line, a frame): scores 0 whatever its words."""
    return len(text) < 12 or _signalless(text) or any(p.search(text) for p in NOISE)


def line_score(text: str) -> int:
    """How much a cleaned line looks like the statement of an error (0: noise or nothing)."""
    if _states_nothing(text):
        return 0
    return sum(weight for pattern, weight in SIGNALS if pattern.search(text))


def scores_at_least(text: str, score: int) -> bool:
    """``line_score(text) >= score`` (``score`` ≥ 1), the signals searched only until they add up to it: every
    line of a pasted text is asked whether it states an error, and an error line is told by its first
    signal (an exception's ``FooError:``)."""
    if _states_nothing(text):
        return False
    total = 0
    for pattern, weight in SIGNALS:
        if pattern.search(text):
            total += weight
            if total >= score:
                return True
    return False


def error_signature(text: str, min_score: int = ERROR_LINE_SCORE) -> str | None:
    """The masked form of the line that most looks like an error (the first of equals), or None when no
    line looks enough like one: the same error from another rank, PID or path has the same signature."""
    best: tuple[int, str] | None = None
    for raw in to_text(text).splitlines():
        line = GLOG_PREFIX.sub("", clean(raw).text)
        score = line_score(line)
        if score >= min_score and (best is None or score > best[0]):
            best = (score, line)
    return mask(best[1])[:SIGNATURE_CHARS] if best else None
