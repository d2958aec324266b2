"""``tracebot kb eval CASES.jsonl``: how well the knowledge base answers a labelled corpus.

Each case: ``{"id", "text" | "file", "expected": ENTRY_ID | null, "also_ok": [ids], "not_ok": [ids]}``
(``not_ok``, on a null case: only these entries must not answer it confidently, as for a "Not this" vote). Figures:
top-1 / top-3 on positives (the expected entry, or one in also_ok, is first / in the first three),
confident top-1 (what a channel would see unprompted), the false-positive rate (confident answers on
null cases that are not in also_ok) and, for long multi-rank logs, how often the root cause is first.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tracebot.authoring.inputs import NotAFile, open_input, read_input
from tracebot.matcher import Matcher

LONG_LOG_LINES = 200
# A case's log fixture, as read (a .gz unpacked): the largest real one is under 1 MB. A gzip of a few KB can
# unpack to gigabytes, and a contributed cases file must not take the evaluating machine's memory.
MAX_FIXTURE_BYTES = 64 << 20
CV_SEED = 11


@dataclass
class Case:
    id: str
    expected: str | None
    also_ok: list[str]
    text: str | None = None
    file: Path | None = None
    kind: str = ""
    source: str = ""
    not_ok: list[str] = field(default_factory=list)


@dataclass
class CaseResult:
    id: str
    expected: str | None
    answers: list[str]  # entry ids, best first (top 5)
    confident: list[str]
    top1: bool
    top3: bool
    false_positive: bool
    long_log: bool
    withheld: str = ""  # why the first answer is not confident (Match.withheld), "" when it is or there is none


@dataclass
class EvalReport:
    positives: int = 0
    negatives: int = 0
    top1: float = 0.0
    top3: float = 0.0
    confident_top1: float = 0.0
    confident_wrong: int = 0  # positives whose confident first answer is wrong: worse than silence
    confident_precision: float = 0.0  # of all unprompted (confident) first answers, the share that is right
    # positives whose first answer is right but not confident, by the rule that held it back (Match.withheld):
    # where confidence is lost, and so which rule or point a change to confidence must move
    withheld: dict[str, int] = field(default_factory=dict)
    false_positive_rate: float = 0.0
    long_logs: int = 0
    long_log_root_first: float = 0.0
    folds: int = 0  # > 0: cross-validated (each fold's cases answered by a model trained without them)
    kinds: dict[str, dict[str, Any]] = field(default_factory=dict)  # the same figures per kind of case
    misses: list[dict[str, Any]] = field(default_factory=list)
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    results: list[CaseResult] = field(default_factory=list)

    def to_dict(self, with_results: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_results:
            d.pop("results")
        return d


class CaseError(ValueError):
    pass


def load_cases(path: Path) -> list[Case]:
    """The labelled cases of a JSONL file; :class:`CaseError` says why a file or a line cannot be used."""
    cases = []
    seen: set[str] = set()
    for no, line in enumerate(_read_cases_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseError(f"{path}:{no}: not JSON: {exc.msg}") from exc
        if not isinstance(raw, dict) or "id" not in raw or ("text" not in raw and "file" not in raw):
            raise CaseError(f"{path}:{no}: a case needs 'id' and 'text' (or 'file')")
        wrong = _wrong_field(raw)
        if wrong:
            raise CaseError(f"{path}:{no}: {wrong}")
        cid = str(raw["id"])
        if cid in seen:
            raise CaseError(f"{path}:{no}: duplicate case id {cid!r}")
        seen.add(cid)
        file = path.parent / raw["file"] if raw.get("file") else None
        cases.append(
            Case(
                cid,
                raw.get("expected"),
                list(raw.get("also_ok") or []),
                raw.get("text"),
                file,
                raw.get("kind") or "",
                str(raw.get("source") or ""),
                list(raw.get("not_ok") or []),
            )
        )
    return cases


MAX_CASES_BYTES = 256 << 20  # the largest corpus here is under 1 MB; a stray log given by mistake is not read


def _read_cases_text(path: Path) -> str:
    """A cases file's text; :class:`CaseError` says why not (:func:`~tracebot.authoring.inputs.read_input`:
    a FIFO given by mistake is refused, not waited on)."""
    try:
        data = read_input(path, MAX_CASES_BYTES)
    except FileNotFoundError:
        raise CaseError(f"{path}: no such cases file") from None
    except NotAFile as exc:
        raise CaseError(f"{path}: {exc}") from None
    if len(data) > MAX_CASES_BYTES:
        raise CaseError(f"{path}: more than {MAX_CASES_BYTES >> 20} MB; a cases file is JSON lines (is it a log? "
                        'give it as a case\'s "file")')
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseError(f"{path}: not UTF-8 text (byte offset {exc.start}); cases are JSON lines") from None


def _wrong_field(raw: dict[str, Any]) -> str:
    """What is wrong with a case's fields' types, in words ("" when nothing): a number where a list of ids
    belongs stopped ``kb eval`` with a traceback, a list where the text belongs deep inside the matcher."""
    for name in ("text", "file", "kind", "source"):
        if raw.get(name) is not None and not isinstance(raw[name], str):
            return f"'{name}' must be a string, not {_json_kind(raw[name])}"
    if raw.get("expected") is not None and not isinstance(raw["expected"], str):
        return f"'expected' must be an entry id or null, not {_json_kind(raw['expected'])}"
    for name in ("also_ok", "not_ok"):
        value = raw.get(name)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return f"'{name}' must be a list of entry ids ([\"id\", ...]), not {_json_kind(value)}"
    if isinstance(raw["id"], (dict, list)):
        return f"'id' must be a string, not {_json_kind(raw['id'])}"
    return ""


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "true/false"
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def unknown_expected(cases: list[Case], known: set[str]) -> dict[str, list[str]]:
    """Entry ids the cases name (``expected``, ``also_ok``, ``not_ok``) that ``known`` lacks, with the cases
    naming each: a typo in a label is otherwise only a miss among the misses."""
    out: dict[str, list[str]] = {}
    for c in cases:
        for entry_id in dict.fromkeys([c.expected, *c.also_ok, *c.not_ok]):
            if entry_id is not None and entry_id not in known:
                out.setdefault(entry_id, []).append(c.id)
    return out


def run_case(matcher: Matcher, case: Case) -> CaseResult:
    if case.file is not None:
        d = _diagnose_fixture(matcher, case.file)
        long_log = d.lines_total >= LONG_LOG_LINES
    else:
        d = matcher.diagnose(case.text or "")
        long_log = (case.text or "").count("\n") >= LONG_LOG_LINES
    answers = [m.entry_id for m in d.matches[:5]]
    confident = [m.entry_id for m in d.matches if m.confident]
    withheld = d.matches[0].withheld if d.matches else ""
    ok = {case.expected, *case.also_ok} - {None}
    if case.expected is None:
        fp = any(c in case.not_ok if case.not_ok else c not in ok for c in confident)
        return CaseResult(case.id, None, answers, confident, False, False, fp, long_log, withheld)
    top1 = bool(answers) and answers[0] in ok
    top3 = any(a in ok for a in answers[:3])
    return CaseResult(case.id, case.expected, answers, confident, top1, top3, False, long_log, withheld)


def _diagnose_fixture(matcher: Matcher, path: Path):
    """Log fixtures carry their source on the first line (``# source: …``); that line is not the log."""
    data = read_fixture(path)
    if data.startswith(b"# source"):
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return matcher.diagnose(data)


def read_fixture(path: Path, limit: int | None = None) -> bytes:
    """A log fixture's bytes (a .gz unpacked), at most ``limit`` (:data:`MAX_FIXTURE_BYTES`);
    :class:`CaseError` says why not."""
    import gzip
    import zlib

    limit = MAX_FIXTURE_BYTES if limit is None else limit

    try:
        with open_input(path) as raw, gzip.GzipFile(fileobj=raw) if path.suffix == ".gz" else raw as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise CaseError(f"{path}: no such log fixture") from None
    except NotAFile as exc:  # a FIFO named as a case's file would wait for a writer, saying nothing
        raise CaseError(f"{path}: {exc}") from None
    except OSError as exc:  # also gzip.BadGzipFile
        raise CaseError(f"{path}: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise CaseError(f"{path}: the gzip data is damaged or cut short ({exc})") from None
    if len(data) > limit:
        unpacked = " unpacks to" if path.suffix == ".gz" else " is"
        raise CaseError(f"{path}:{unpacked} more than {limit >> 20} MB; a case's log fixture must be smaller "
                        "(cut it to the lines around the error)")
    return data


def evaluate(matcher: Matcher, cases: list[Case]) -> EvalReport:
    return _report(cases, {case.id: run_case(matcher, case) for case in cases})


def folds_by_source(cases: list[Case], k: int, seed: int) -> dict[str, int]:
    """Each source (a case's issue URL, or its id when it has none) to one of ``k`` folds, shuffled by ``seed``."""
    sources = sorted({c.source or c.id for c in cases})
    random.Random(seed).shuffle(sources)
    return {src: i % k for i, src in enumerate(sources)}


def cross_validate(
    matcher: Matcher, cases: list[Case], k: int, *, train_on_cases: bool = True, seed: int | None = None
) -> EvalReport:
    """``kb eval --cv K``: split the cases into K folds by source (a thread's cases stay together); for
    each fold retrain the ranking model without the fold's cases and without the examples of entries that
    cite one of the fold's sources, then answer the fold. With ``train_on_cases`` the other folds' cases
    are training texts too. ``seed`` (default ``CV_SEED``) shuffles the sources into folds. Long logs are
    answered by the line rules, as in production."""
    fold_of = folds_by_source(cases, k, CV_SEED if seed is None else seed)
    results: dict[str, CaseResult] = {}
    for fold in range(k):
        held = [c for c in cases if fold_of[c.source or c.id] == fold]
        rest = [c for c in cases if fold_of[c.source or c.id] != fold]
        extra = [(c.text, c.expected) for c in rest if c.text is not None] if train_on_cases else []
        fold_matcher = copy.copy(matcher)
        fold_matcher.model = matcher.train_model(leave_out_sources={c.source for c in held if c.source}, extra=extra)
        for c in held:
            results[c.id] = run_case(fold_matcher, c)
    rep = _report(cases, results)
    rep.folds = k
    return rep


def _report(cases: list[Case], results: dict[str, CaseResult]) -> EvalReport:
    rep = summarize(cases, [results[c.id] for c in cases])
    rep.kinds = {
        kind: _figures(summarize(sub, [results[c.id] for c in sub])) for kind, sub in _by_kind(cases).items()
    }
    return rep


def _by_kind(cases: list[Case]) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {}
    for c in cases:
        out.setdefault(c.kind or "other", []).append(c)
    return dict(sorted(out.items()))


def _figures(rep: EvalReport) -> dict[str, Any]:
    return {
        "positives": rep.positives,
        "negatives": rep.negatives,
        "top1": rep.top1,
        "top3": rep.top3,
        "confident_top1": rep.confident_top1,
        "false_positive_rate": rep.false_positive_rate,
        "confident_precision": rep.confident_precision,
        "withheld": rep.withheld,
    }


def summarize(cases: list[Case], results: list[CaseResult]) -> EvalReport:
    """The figures for ``results`` (one per case, in the same order)."""
    rep = EvalReport()
    c_top1 = root_first = 0
    for case, r in zip(cases, results, strict=True):
        rep.results.append(r)
        if case.expected is None:
            rep.negatives += 1
            if r.false_positive:
                rep.false_positives.append({"id": case.id, "confident": r.confident})
            continue
        rep.positives += 1
        rep.top1 += r.top1
        rep.top3 += r.top3
        first_confident = r.confident[0] if r.confident else None
        if first_confident is not None and r.answers and r.answers[0] == first_confident:
            if r.top1:
                c_top1 += 1
            else:
                rep.confident_wrong += 1
        elif r.top1:
            why = r.withheld or "other"
            rep.withheld[why] = rep.withheld.get(why, 0) + 1
        if r.long_log:
            rep.long_logs += 1
            root_first += r.top1
        if not r.top1:
            rep.misses.append({"id": case.id, "expected": case.expected, "got": r.answers[:3], "confident": r.confident})
    if rep.positives:
        rep.top1 = round(rep.top1 / rep.positives, 4)
        rep.top3 = round(rep.top3 / rep.positives, 4)
        rep.confident_top1 = round(c_top1 / rep.positives, 4)
    answered = c_top1 + rep.confident_wrong + len(rep.false_positives)
    rep.confident_precision = round(c_top1 / answered, 4) if answered else 1.0
    if rep.negatives:
        rep.false_positive_rate = round(len(rep.false_positives) / rep.negatives, 4)
    if rep.long_logs:
        rep.long_log_root_first = round(root_first / rep.long_logs, 4)
    return rep


def _withheld_text(withheld: dict[str, int]) -> str:
    """``below point 110, not asked 5, …``: most first."""
    return ", ".join(f"{why} {n}" for why, n in sorted(withheld.items(), key=lambda kv: (-kv[1], kv[0])))


def format_report(rep: EvalReport) -> str:
    lines = [f"cross-validated: {rep.folds} folds by source"] if rep.folds else []
    lines += [
        f"positives {rep.positives}, negatives {rep.negatives}, long logs {rep.long_logs}",
        f"top-1 {rep.top1:.1%}   top-3 {rep.top3:.1%}   confident top-1 {rep.confident_top1:.1%}",
        f"false positives {rep.false_positive_rate:.1%} ({len(rep.false_positives)}/{rep.negatives})"
        f"   confident wrong answers {rep.confident_wrong}   precision of confident answers {rep.confident_precision:.1%}",
        f"long logs: root cause first {rep.long_log_root_first:.1%}",
    ]
    if rep.withheld:
        lines.append("right first but not confident: " + _withheld_text(rep.withheld))
    if rep.kinds:
        lines.append("per kind:      cases  top-1  top-3  conf.top-1  false pos.  conf.precision")
        for kind, f in rep.kinds.items():
            pos = f"{f['top1']:6.1%} {f['top3']:6.1%} {f['confident_top1']:10.1%}" if f["positives"] else " " * 25
            neg = f"{f['false_positive_rate']:10.1%}" if f["negatives"] else " " * 10
            lines.append(
                f"  {kind:<11} {f['positives'] + f['negatives']:6d} {pos}  {neg}  {f['confident_precision']:13.1%}"
            )
    if rep.misses:
        lines.append("misses:")
        lines += [f"  {m['id']}: expected {m['expected']}, got {m['got']} (confident {m['confident']})" for m in rep.misses]
    if rep.false_positives:
        lines.append("false positives:")
        lines += [f"  {f['id']}: {f['confident']}" for f in rep.false_positives]
    return "\n".join(lines)
