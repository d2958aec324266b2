"""Turn one raw log line into the forms the matcher compares.

``clean``: what a person would call "the message" — Unicode NFKC, no ANSI colours, no leading
timestamps and no rank / host prefixes (those are returned separately so matches can report them).
Anchors and regexes of knowledge entries are searched in this form.

``mask``: the clean line with its variable parts replaced by placeholders (numbers, hex addresses,
paths, IPs, ids), lower-cased: the form fuzzy exemplars are compared in and repeated lines are
deduplicated by, so that a PID or a rank number never decides a match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from tracebot.matcher.encodings import decode

# Colour and cursor sequences (CSI), and a character set's choice (ESC ( B: `tput sgr0` writes it before
# ESC [ m on xterm, so a line coloured by a shell script ends with it): what a terminal shows as formatting.
_FORMATTING = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()*+][0-9A-Za-z]")
_ANSI = re.compile(_FORMATTING.pattern + r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")  # and OSC, 2-byte escapes
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"

# Each prefix pattern is tried at the start of the line, repeatedly, in any order: real logs stack them
# ("2024-04-28 22:15:57 slurm0-a3-ghpc-8: [rank17]:[E ...").
_TIMESTAMP = re.compile(
    r"""^\[?(?:
        \d{4}-\d{2}-\d{2}[T\ _]\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\ ?Z|\ ?[+-]\d{2}:?\d{2}|\ ?UTC)?
      | \d{4}/\d{2}/\d{2}\ \d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?
      | (?:"""
    + _DAY
    + r""",?\ )?"""
    + _MONTH
    + r"""\ +\d{1,2},?\ \d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\ \d{4})?
      | \d{2}:\d{2}:\d{2}(?:[.,]\d+)?
      | \d{10}(?:\.\d+)?
      # glog / c10 logging (c10 prints the month unpadded: [W304 …]); torch.distributed's Python logger
      # names the file by its path (E0304 19:44:41.006000 690616 torch/distributed/run.py:803])
      | [IWEF]\d{3,4}\ \d{2}:\d{2}:\d{2}(?:\.\d+)?(?:\ +\d+)?(?:\ +[\w./-]+:\d+\])?
    )\]?(?:\s*[|:,-]\s*|\s+|$)""",
    re.VERBOSE,
)
# [rank17]: / rank17: / [Rank 3]: / [1,3]<stderr>: (Open MPI --tag-output)
# / [1,mpirank:3,algo-2]<stdout>: (SageMaker MPI)
_RANK_PREFIXES = [
    re.compile(r"^\[?rank\s*(?P<rank>\d+)\]?\s*:\s*", re.IGNORECASE),
    re.compile(r"^\[\d+,mpirank:(?P<rank>\d+),(?P<host>[\w.-]+)\]<std(?:out|err)>\s*:\s*"),
    re.compile(r"^\[\d+,(?P<rank>\d+)\]<std(?:out|err)>\s*:\s*"),
]
# "3: " (srun --label): the task's number. It is the rank when srun starts the ranks, the node's launcher
# when srun starts one torchrun per node ("0: [default3]:[rank11]: …"): a rank the line names wins.
_SRUN_LABEL = re.compile(r"^(?P<task>\d{1,5}):\s+(?=\S)")
# host: a token with a digit (slurm0-a3-ghpc-8, algo-1, node017, ip-10-0-0-1, gpu-a100-3) followed by
# ": ". Exception names ("RuntimeError: ") and tool names ("py-spy: ") have none; exception names are
# also excluded explicitly.
# torchrun's prefix ([default3]: with --tee or --log-dir) names the process's LOCAL rank, its rank on its
# node: "[${role_name}${local_rank}]:" (torch.distributed.elastic.agent.server.local_elastic_agent).
_LOCAL_RANK_PREFIX = re.compile(r"^\[(?:default|trainer)(?P<local>\d{1,5})\]\s*:\s*")
_HOST_NAME = (
    r"(?P<host>(?=[\w.-]*\d)(?![\w.]*(?:Error|Exception|Warning|Failure|Exit)\b)"
    r"[A-Za-z][A-Za-z0-9._-]{0,62}[A-Za-z0-9])"
)
_HOST = re.compile(r"^" + _HOST_NAME + r"\s*:\s+(?=\S)")
# A host followed by a space, no colon ("2026-01-02T03:04:05Z gpu-node-07 [rank0]: …", as a log shipper
# or `pdsh -S` writes it): only where a rank prefix follows, which says the token is a node, not the
# message's first word.
_HOST_BEFORE_RANK = re.compile(
    r"^" + _HOST_NAME + r"\s+(?=(?i:\[?rank\s*\d+\]?\s*:|\[(?:default|trainer)\d{1,5}\]\s*:|\[\d+,(?:mpirank:)?\d+))"
)
_LOGLEVEL_HOST = re.compile(r"^(?P<host>localhost)\s*:\s+")
# Other wrappers seen in real pastes; each may carry a host but never the message.
_OTHER_PREFIXES = [
    re.compile(r"^(?P<host>[A-Za-z][\w.-]*):\d+:\d+\s+\[\d+\]\s+(?=\S)"),  # NCCL: host:pid:tid [dev]
    re.compile(r"^\(\w+ pid=\d+(?:, ip=(?P<host>[\d.]+))?\)\s*"),  # Ray: (RayTrainWorker pid=1, ip=10.0.0.1)
    re.compile(r"^(?:stdout|stderr)\s*:\s*", re.IGNORECASE),  # accelerate / launchers
    re.compile(r"^\[\d{1,9}\]\s+(?=\S)"),  # log-viewer line numbers: [80746] [rank0]: ...
    re.compile(r"^\|?\s*(?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL)\s*\|\s*[\w.:<>-]+\s+-\s+"),  # loguru
]
# Slack (and HTML log viewers) escape these three; error text is compared unescaped.
_HTML_ESCAPES = (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))
# A link as Markdown writes it ("[/dev/shm/nccl-X](https://host/dev/shm/nccl-X)"): text copied from a rendered
# GitHub issue, a wiki or a chat that linkified a path carries it inside the message. The message is the
# link's text.
_MD_LINK = re.compile(r"\[([^\[\]\n]{1,500})\]\((?:https?|file|mailto):[^()\s]{1,2000}\)")

_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\[?[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{0,4}){3,7}\]?")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?")
_LONG_ID = re.compile(r"\b[0-9a-fA-F]{8,}(?:-[0-9a-fA-F]{4,}){0,4}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class CleanLine:
    text: str  # the message, prefixes removed
    rank: str | None = None
    host: str | None = None
    prefixed: bool = False  # a timestamp / rank / host prefix was removed: this is a log line
    # torchrun's [defaultN]: the process's rank on its node. ``rank`` is it too when the line names no host
    # (one node: local and global ranks agree); with a host it is that node's N-th process, whose global
    # rank the line does not say (see :class:`LocalRanks`).
    local: str | None = None
    # srun --label's task number on a line that names its rank or local rank as well: one task per node
    task: str | None = None

    @property
    def node(self) -> str | None:
        """The host, or the srun task, a local rank is counted on."""
        return self.host if self.host is not None else f"task {self.task}" if self.task is not None else None


def to_text(raw: str | bytes) -> str:
    """Bytes decoded in the encoding their head is written in (UTF-8 unless it is UTF-16 or Latin-1:
    :mod:`tracebot.matcher.encodings`; a line of Latin-1 in UTF-8 is Latin-1, other undecodable bytes U+FFFD)."""
    return decode(raw) if isinstance(raw, bytes) else raw


def as_shown(line: str) -> str:
    """``line`` as the terminal it was copied from showed it: colour and cursor sequences (CSI, ``ESC [``)
    and character-set choices (``ESC ( B``) removed, the formatting a log saved from a coloured terminal
    carries. What a reply quotes is this form.
    Other escape strings (a window title, a clipboard write: OSC) are kept, for the terminal egress to show
    as text: a terminal would act on them unseen, and the reader should see what the log tried."""
    return _FORMATTING.sub("", line) if "\x1b" in line else line


def clean(line: str) -> CleanLine:
    """Strip colours, control characters, timestamps, and rank / host prefixes from one line."""
    text = _ANSI.sub("", line) if "\x1b" in line else line
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    # Undecodable bytes (U+FFFD) and byte-order marks in front of a line hide its prefixes.
    text = _CONTROL.sub(" ", text).strip().lstrip("\ufeff\ufffd ")
    if "&" in text:
        for escaped, plain in _HTML_ESCAPES:
            text = text.replace(escaped, plain)
    if "](" in text:
        text = _MD_LINK.sub(r"\1", text)
    rank: str | None = None
    host: str | None = None
    local: str | None = None
    task: str | None = None
    prefixed = False
    for _ in range(6):  # bounded: a line has at most a handful of stacked prefixes
        before = text
        m = _TIMESTAMP.match(text)
        if m:
            text = text[m.end() :]
        for pat in _RANK_PREFIXES:
            m = pat.match(text)
            if m:
                if rank is None:
                    rank = m.group("rank")
                if "host" in pat.groupindex and host is None:
                    host = m.group("host")
                text = text[m.end() :]
                break
        else:
            m = _SRUN_LABEL.match(text)
            if m:
                task = task or m.group("task")
                text = text[m.end() :]
        m = _LOCAL_RANK_PREFIX.match(text)
        if m:
            local = local or m.group("local")
            text = text[m.end() :]
        m = _HOST.match(text) or _HOST_BEFORE_RANK.match(text) or _LOGLEVEL_HOST.match(text)
        if m and host is None:
            host = m.group("host")
            text = text[m.end() :]
        for pat in _OTHER_PREFIXES:
            m = pat.match(text)
            if m:
                if "host" in pat.groupindex and host is None and m.group("host"):
                    host = m.group("host")
                text = text[m.end() :]
        if text == before:
            break
        prefixed = True
    if host is not None and host.startswith("slurmstepd-"):  # "slurmstepd-node17: error: ...": node17's stepd
        host = host[len("slurmstepd-"):] or None
    if task is not None and rank is None and local is None:
        rank, task = task, None  # srun started the ranks: the task is the rank
    if local is not None and rank is None and host is None and task is None:
        rank = local  # no node named: read as one node's log, where the local rank is the rank
    return CleanLine(text.strip(), rank, host, prefixed, local, task)


# torchrun's (or torch.distributed.launch's) command line: where each node's ranks start.
_LAUNCH = re.compile(r"\b(?:torchrun|torch\.distributed\.(?:run|launch))\b")
_NODE_RANK = re.compile(r"--node[_-]rank[= ](?P<n>\d{1,5})\b")
_NPROC = re.compile(r"--nproc[_-]per[_-]node[= ](?P<n>\d{1,5})\b")
MAX_LOCAL_RANKS = 1 << 16  # (node, local rank) pairs and nodes remembered; also the highest rank placed


class LocalRanks:
    """Global ranks for lines that name only a local rank (torchrun's ``[defaultN]:``) and a node (a host,
    or the srun task that runs the node's torchrun), learnt from the same log as it is read: from lines
    that name both (``algo-2: [default3]:[rank11]: …``), and from each node's launch command (``algo-2: torchrun --nproc_per_node 8 … --node_rank 1``: its ranks
    start at 8). Without either, such a line keeps ``rank=None``: "rank 3" of one node is not rank 3 of
    the job, and reading it so merges ranks of different nodes (a rank's failure credited to another,
    ranks that spoke reported silent)."""

    def __init__(self) -> None:
        self._global: dict[tuple[str, str], str] = {}
        self._first: dict[str, int] = {}  # node -> its first global rank

    def resolve(self, cl: CleanLine) -> CleanLine:
        """``cl`` with the global rank filled in where this log has told it; learns from ``cl`` first."""
        node = cl.node
        if node is None:
            return cl
        if cl.local is None:
            if "torch" in cl.text and _LAUNCH.search(cl.text):
                self._learn_launch(node, cl.text)
            return cl
        key = (node, cl.local)
        if cl.rank is not None:
            if key in self._global or len(self._global) < MAX_LOCAL_RANKS:
                self._global[key] = cl.rank  # the latest: an elastic restart gives nodes new ranks
            return cl
        rank = self._global.get(key)
        if rank is None and node in self._first and self._first[node] + int(cl.local) < MAX_LOCAL_RANKS:
            rank = str(self._first[node] + int(cl.local))
        return replace(cl, rank=rank) if rank is not None else cl

    def _learn_launch(self, node: str, text: str) -> None:
        node_rank, nproc = _NODE_RANK.search(text), _NPROC.search(text)
        if node_rank and nproc and len(self._first) < MAX_LOCAL_RANKS:
            self._first[node] = int(node_rank["n"]) * int(nproc["n"])


# The variable parts of a line, in the order they are masked (drafting signatures uses the same list).
MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_HEX, "<hex>"),
    (_IP, "<ip>"),
    (_PATH, "<path>"),
    (_LONG_ID, "<id>"),
    (_NUMBER, "<n>"),
)
HEX, IP, PATH, LONG_ID, NUMBER = (pattern for pattern, _ in MASKS)


# What each mask cannot match without (a cheap test first: a long log masks every distinct line).
_NEEDS = {
    HEX: lambda t: "0x" in t,
    IP: lambda t: "." in t or t.count(":") >= 3,
    PATH: lambda t: "/" in t,
}


def mask(text: str) -> str:
    """Replace variable parts with placeholders and lower-case: ``<hex> <ip> <path> <id> <n>``."""
    for pattern, placeholder in MASKS:
        needs = _NEEDS.get(pattern)
        if needs is None or needs(text):
            text = pattern.sub(placeholder, text)
    return _SPACE.sub(" ", text).strip().lower()
