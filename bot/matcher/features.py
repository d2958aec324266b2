"""What the ranking model knows about a text: its shape, and the texts an entry is known by.

The text side: its kind (log line, traceback, log, question, chat), the exception type and message a
Python traceback ends with, whether it has error content at all, whether it asks something. The entry
side: :func:`entry_parts`, the texts whose TF-IDF vectors (:mod:`tracebot.matcher.tfidf`) are summed per
entry. The rows of numbers the model reads are built in :func:`tracebot.matcher.model.rows`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracebot.knowledge.entry import Entry
from tracebot.matcher import asking
from tracebot.matcher.index import looks_like_error
from tracebot.matcher.platforms import mentioned
from tracebot.matcher.signals import GLOG_PREFIX, scores_at_least

KINDS = ("line", "traceback", "log", "question", "chat")
# A line states an error when it scores this much as one (signals.line_score: "failed", "timed out", "killed",
# "denied" … 2, "error" 3, an exception's "FooError:" 6; INFO and DEBUG chatter, frames and short lines 0).
SHOWN_ERROR_SCORE = 2

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+", re.MULTILINE)
# The last "SomethingError: message" line of a text is what a traceback ends with.
_EXCEPTION = re.compile(
    r"^(?:.*?[\s\]:|>])?(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit|Warning))"
    r"(?::\s*(?P<msg>.*))?$",
    re.MULTILINE,
)
# An exception's name starts where an ASCII word does (a CJK word before it is fine: "报错OSError") and is read
# at most 120 characters on: "[A-Z]\w*Error" tried from every letter of one long word was quadratic (29 s on
# "Aa" * 20,000, a paste anyone can send).
_ERROR_CONTENT = re.compile(
    r"(?<![A-Za-z0-9_])_*[A-Z]\w{0,120}?(?:Error|Exception)\b|\b(?:nccl|cuda|oom|sigkill|sigterm|sigbus|xid|ecc|exit ?code|exitcode|timed? ?out"
    r"|killed|segfault|core dumped|hang|hangs|hung|stuck|deadlock|watchdog|slurm|sagemaker|gpu|rank\d*|errno)\b"
    r"|エラー|落ち|止ま|メモリ|固ま",
    re.IGNORECASE,
)
# A tool's line names the source line that printed it ("[W reducer.cpp:1346] Warning: …", "foo.py:12: UserWarning").
_SOURCE_LOCATION = re.compile(r"[\w-]\.(?:py|pyx|c|cc|cpp|cu|cuh|h|hpp|rs|go|java):\d+")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True)
class TextInfo:
    kind: str
    lines: int
    has_error: bool  # names an error, a tool or a failure at all
    exception: str  # "Type: message" of the last exception line, or ""
    exception_type: str  # the type's last dotted part (OutOfMemoryError), or ""
    asks: bool = False  # the prose asks something (a question mark, how / why, 教えて …)
    # A person states a problem without asking: the text opens with their own words (a title, a sentence),
    # is more than a chat line, names a failure, and holds no exception line and no tool line citing a
    # source location (an info or warning line a person pasted reads as prose, but a tool wrote it).
    states: bool = False
    platforms: frozenset[str] = frozenset()  # the platforms whose words it uses (platforms.yaml)
    # A program's output that states an error: a log line, traceback or log (not prose) with a line that says
    # something failed (SHOWN_ERROR_SCORE). Healthy output that reads like an entry (nvidia-smi's ECC table,
    # DeepSpeed's OVERFLOW info line, a warning) shows none.
    shows_error: bool = False


def text_info(text: str, prose: str) -> TextInfo:
    """Read the shape of a pasted text. ``prose`` is the part a person wrote (``core.prose_lines``)."""
    stripped = text.strip()
    lines = [x for x in stripped.splitlines() if x.strip()]
    exc = exc_type = ""
    for m in _EXCEPTION.finditer(stripped):
        exc_type = m.group("type").rsplit(".", 1)[-1]
        exc = f"{exc_type}: {m.group('msg') or ''}".strip()
    has_error = bool(_ERROR_CONTENT.search(stripped)) or looks_like_error(stripped)
    words = len(_WORD.findall(stripped)) + len(_CJK.findall(stripped)) // 2
    if _TRACEBACK.search(stripped):
        kind = "traceback"
    elif prose and len(prose) >= 0.5 * len(stripped):
        kind = "chat" if words <= 12 and len(lines) <= 2 and not exc else "question"
    elif len(lines) >= 3:
        kind = "log"
    else:
        kind = "chat" if words <= 8 and not has_error and not exc else "line"
    # Japanese (or Chinese) prose describing a failure is a request for help, with or without a question mark.
    asks = bool(prose) and (asking.asks(prose) or len(_CJK.findall(prose)) >= 8)
    opens = bool(lines) and lines[0].strip() in {x.strip() for x in prose.splitlines()} if prose else False
    states = opens and kind != "chat" and has_error and not exc and not _SOURCE_LOCATION.search(stripped)
    # last line first: a traceback, and most pasted logs, end with what failed
    shows = kind in ("line", "traceback", "log") and any(shows_error(x) for x in reversed(lines))
    return TextInfo(kind, len(lines), has_error, exc, exc_type, asks, states, mentioned(stripped), shows)


def shows_error(line: str) -> bool:
    """Whether one line of a text states an error (:data:`SHOWN_ERROR_SCORE`), a glog prefix aside: what the
    shown-error input and the thank-you rules read each line of a paste by."""
    return scores_at_least(GLOG_PREFIX.sub("", line.strip()), SHOWN_ERROR_SCORE)


def entry_parts(e: Entry, *, with_examples: bool = True) -> list[str]:
    """The texts an entry is known by, each compared as one unit (its TF-IDF vector is L2-normalised
    before the entry's vectors are summed, so a long example does not outweigh a title)."""
    parts = [*described(e), *e.fix, *e.ja.get("fix", ()), *e.phrases, *e.anchors, *e.exemplars]
    if with_examples:
        parts += e.examples_match
    return [p for p in parts if p.strip()]


def described(e: Entry) -> list[str]:
    """What an entry says the problem is, in English and (where it has them) Japanese: texts a person
    describing the problem would write something like, so they also train the model as questions."""
    return [t for t in (e.title, e.summary, e.cause, *(e.ja.get(k, "") for k in ("title", "summary", "cause"))) if t.strip()]
