"""The candidate stage picks exactly the lines one big case-insensitive alternation of error words,
anchors and regexes would pick, and stops inside a block when the deadline has passed."""

from __future__ import annotations

import io
import time
from pathlib import Path

import re2

from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher.candidates import CandidateStage, required_literal, required_literals
from tracebot.matcher.index import CONTEXT_WORDS, ERROR_WORDS, CompiledKB, _unanchor
from tracebot.matcher.scan import ScanStats, candidate_lines

ROOT = Path(__file__).resolve().parents[2]


def _alternation_line_starts(kb, block: bytes) -> list[int]:
    """What the single ``(?i)`` alternation (the trigger before the candidate stage) selected."""
    parts = [ERROR_WORDS, *(re2.escape(w) for w in CONTEXT_WORDS)]
    for e in kb.entries:
        parts += [re2.escape(a) for a in e.anchors] + [_unanchor(r) for r in e.regex]
    options = re2.Options()
    options.max_mem = 256 << 20
    trigger = re2.compile(("(?i)(?:" + ")|(?:".join(parts) + ")").encode(), options)
    out, last_end = [], -1
    for m in trigger.finditer(block):
        if m.start() <= last_end:
            continue
        start = block.rfind(b"\n", 0, m.start()) + 1
        end = block.find(b"\n", m.start())
        out.append(start)
        last_end = len(block) if end == -1 else end
    return out


def test_the_stage_picks_the_same_lines_as_one_alternation_of_every_pattern() -> None:
    kb, _ = load_knowledge_base(ROOT / "knowledge")
    texts = [x for e in kb.entries for x in [*e.exemplars, *e.anchors, e.title]]
    texts += [p.read_text(errors="replace") for p in sorted((ROOT / "tests" / "holdout" / "logs").glob("*.log"))]
    # Case changes and near misses: an anchor in capitals, a regex's literal without the rest of it.
    texts += [t.upper() for t in texts[:400]] + [t[: len(t) // 2] for t in texts[:400]]
    block = ("\n".join(texts) + "\n").encode()
    expected = _alternation_line_starts(kb, block)
    assert CompiledKB(kb).trigger.line_starts(block) == expected
    assert len(expected) > 1000


def test_regexes_with_a_literal_are_verified_and_the_others_go_to_re2_shards() -> None:
    assert required_literal(r"CUDA error: (?:an illegal|misaligned) address") == "cuda error: "
    assert required_literal(r"(?:foo|bar)\d+") is None
    assert required_literal(r"\pL+ broken") is None  # Python's parser cannot read it: RE2 shard
    # one of several literals: every alternative has one, so no RE2 shard has to scan the whole log
    assert required_literals(r"^\d+\s.*\s(FAILED|CANCELLED\+?|CANCELLED by \d+)\s+\d+:\d+$") == ["cancelled", "failed"]
    assert required_literals(r"foo(bar|)baz") is None and required_literals(r"(?:abcd)*x") is None
    assert required_literals(r"(?:abcd)+x") == ["abcd"]
    stage = CandidateStage(["error"], ["Watchdog caught"], [r"NCCL WARN \w+ failed", r"\pL+ broke", r"(Abort|Cancel)ed job"])
    block = (b"ok\nnccl warn socket failed\nnccl warn only\nall fine\nthe WATCHDOG CAUGHT it\nits broke\n"
             b"CANCELED JOB 7\ncanceled\n")
    starts = stage.line_starts(block)
    assert [block[s : block.find(b"\n", s)] for s in starts] == [
        b"nccl warn socket failed", b"the WATCHDOG CAUGHT it", b"its broke", b"CANCELED JOB 7"]
    assert stage.matches("CANCELED JOB 7") == [3] and stage.matches("nccl warn socket failed") == [1]


def test_a_passed_deadline_stops_the_scan_inside_a_block_and_says_so() -> None:
    stage = CandidateStage(["error"], [], [])
    data = b"".join(b"step %d error\n" % i for i in range(1000))  # one block, 1,000 candidates
    stats = ScanStats()
    got = list(candidate_lines(io.BytesIO(data), stage, stats, deadline=time.monotonic() - 1))
    assert 0 < len(got) < 1000
    assert stats.truncated and any("time limit" in n for n in stats.notes)
    assert got[-1][0] == len(got)  # line numbers stay true up to where it stopped


def test_anchors_and_regexes_found_on_a_clean_line_are_what_one_re2_set_of_them_reports() -> None:
    """The strong evidence of a line comes from the same Hyperscan literals (regexes verified only where
    their literal is): it must equal what one case-insensitive RE2 set of every anchor and regex finds."""
    from tracebot.authoring.evaluate import load_cases
    from tracebot.matcher.normalize import clean

    kb, _ = load_knowledge_base(ROOT / "knowledge")
    index = CompiledKB(kb)
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = 256 << 20
    every = re2.Set.SearchSet(options)
    for s in index.strong:
        every.Add(re2.escape(s.signature) if s.kind == "anchor" else s.signature)
    every.Compile()
    texts = [x for e in kb.entries for x in [*e.exemplars, *e.anchors, e.title, *e.examples_match, *e.examples_no_match]]
    for name in ("corpus", "holdout"):
        texts += [c.text or c.file.read_text(errors="replace") for c in load_cases(ROOT / "tests" / name / "cases.jsonl")]
    lines = {clean(line).text for t in texts for line in t.splitlines()}
    lines |= {line.upper() for line in list(lines)[:2000]} | {line[: len(line) // 2] for line in list(lines)[:2000]}
    hits = 0
    for line in lines:
        got = index.strong_hits(line)
        assert sorted(index.strong.index(s) for s in got) == sorted(every.Match(line) or []), line
        hits += bool(got)
    assert hits > 500
