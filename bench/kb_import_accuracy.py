"""How close do ``tracebot kb import`` drafts of the seed documents come to the hand-written entries?

Imports every seed document into a temporary directory, maps each draft to the hand-written entry that
cites the same document section (when several do, the one the hand-written knowledge base answers for
the draft's first example), renames the drafts to those ids and runs the labelled corpus against the
drafts alone and against the hand-written knowledge base. Prints JSON.

    .venv/bin/python bench/kb_import_accuracy.py [--seeds DIR] [--knowledge DIR] [--cases FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracebot.authoring.draft import draft_from_snippet  # noqa: E402
from tracebot.authoring.evaluate import Case, EvalReport, evaluate, load_cases  # noqa: E402
from tracebot.authoring.importer import Draft, import_document  # noqa: E402
from tracebot.knowledge.loader import KnowledgeBase, load_knowledge_base, parse_entry_text  # noqa: E402
from tracebot.matcher import Matcher  # noqa: E402


def map_draft(draft: Draft, doc: str, hand: KnowledgeBase, matcher: Matcher) -> str | None:
    section = draft.section.heading
    candidates = [
        e.id
        for e in hand.entries
        if any(s.get("doc") == doc and s.get("section") == section for s in e.sources)
    ]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    answered = [m.entry_id for m in matcher.diagnose(draft.error_blocks[0]).matches]
    return next((a for a in answered if a in candidates), None)


def summary(rep: EvalReport) -> dict[str, float | int]:
    return {
        "top1": rep.top1,
        "top3": rep.top3,
        "confident_top1": rep.confident_top1,
        "false_positive_rate": rep.false_positive_rate,
        "false_positives": len(rep.false_positives),
        "positives": rep.positives,
        "negatives": rep.negatives,
    }


def snippet_drafts(cases: list[Case]) -> dict[str, float | int]:
    """``kb new --from`` on every labelled snippet: does the draft answer its own snippet, and how many
    of the *other* cases of the same failure does it answer, and how many silent cases does it claim?"""
    texts = {c.id: c.text if c.text is not None else c.file.read_text(encoding="utf-8") for c in cases}
    snippets = [c for c in cases if c.expected and c.kind in ("log", "traceback", "line", "ja")]
    own = siblings_hit = siblings = negatives_hit = negatives = 0
    for case in snippets:
        entry, errors = parse_entry_text(
            draft_from_snippet("draft", texts[case.id]), "draft.yaml", Path("draft.yaml")
        )
        if entry is None or errors:
            continue
        matcher = Matcher(KnowledgeBase([entry]))
        for other in cases:
            if other is not case and other.expected not in (case.expected, None):
                continue
            d = matcher.diagnose(texts[other.id])
            hit = bool(d.confident) and d.matches[0].entry_id == "draft"
            if other is case:
                own += hit
            elif other.expected == case.expected:
                siblings += 1
                siblings_hit += hit
            elif other.expected is None:
                negatives += 1
                negatives_hit += hit
    return {
        "snippets": len(snippets),
        "answers_own_snippet": round(own / len(snippets), 4) if snippets else 0.0,
        "answers_other_cases_of_same_failure": round(siblings_hit / siblings, 4) if siblings else 0.0,
        "confident_on_silent_cases": round(negatives_hit / negatives, 4) if negatives else 0.0,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="/work/shared/seeds")
    ap.add_argument("--knowledge", default=str(ROOT / "knowledge"))
    ap.add_argument("--cases", default=str(ROOT / "tests/corpus/cases.jsonl"))
    args = ap.parse_args()
    hand, _ = load_knowledge_base(Path(args.knowledge))
    seed_names = {p.name for p in Path(args.seeds).glob("[0-9]*.txt")}
    # the required entries are the ones written from the seed documents
    required = {e.id for e in hand.entries if any(s.get("doc") in seed_names for s in e.sources)}
    hand_matcher = Matcher(hand)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        raw, renamed = Path(tmp, "drafts"), Path(tmp, "renamed")
        renamed.mkdir()
        drafts: list[dict[str, object]] = []
        for doc in sorted(Path(args.seeds).glob("[0-9]*.txt")):
            report = import_document(doc, raw)
            for d in report.written:
                target = map_draft(d, doc.name, hand, hand_matcher)
                drafts.append(
                    {"doc": doc.name, "section": d.section.heading, "draft": d.entry_id, "maps_to": target}
                )
                if target and not (renamed / f"{target}.yaml").exists():
                    text = re.sub(r"(?m)^id: .*$", f"id: {target}", d.text, count=1)
                    (renamed / f"{target}.yaml").write_text(text, encoding="utf-8")
        import_s = time.perf_counter() - t0
        drafted_kb, errors = load_knowledge_base(renamed)
        cases = load_cases(Path(args.cases))
        covered = {str(d["maps_to"]) for d in drafts if d["maps_to"]}
        subset: list[Case] = [c for c in cases if c.expected in covered or c.expected is None]
        out = {
            "drafts": len(drafts),
            "entries_citing_a_seed": len(required),
            "entries_drafted": sorted(covered),
            "draft_map": drafts,
            "draft_load_errors": [str(e) for e in errors],
            "import_seconds": round(import_s, 3),
            "corpus_all": {
                "drafts": summary(evaluate(Matcher(drafted_kb), cases)),
                "hand_written": summary(evaluate(hand_matcher, cases)),
            },
            "corpus_drafted_ids_only": {
                "drafts": summary(evaluate(Matcher(drafted_kb), subset)),
                "hand_written": summary(evaluate(hand_matcher, subset)),
            },
        }
    out["kb_new_from_snippet"] = snippet_drafts(cases)
    print(json.dumps(out, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
