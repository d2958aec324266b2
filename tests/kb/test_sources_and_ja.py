"""Sources a reader can open, and the Japanese texts of the entries Japanese-speaking users hit most."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher
from tracebot.render.slack import answer

ROOT = Path(__file__).resolve().parents[2]
KB, KB_ERRORS = load_knowledge_base(ROOT / "knowledge")
RUNBOOK = "003_7e992738102f1530.txt"
COMMON = ("cuda-oom", "nccl-watchdog-timeout", "gpu-zombie-process")


def test_the_knowledge_base_loads_without_errors():
    assert KB_ERRORS == []


def test_every_cited_document_has_a_title_and_the_public_ones_a_link():
    for entry in KB:
        for source in entry.sources:
            if "doc" in source:
                assert source["title"] != source["doc"], entry.id
                if not source["doc"].startswith("003_"):
                    assert source["url"].startswith("https://"), (entry.id, source["doc"])


def test_an_oom_answer_links_the_sagemaker_guide_by_its_title():
    d = Matcher(KB, model=False).diagnose("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    rendered = answer(d, diagnosis_id=1, always_answer=True)
    assert rendered is not None
    footer = " ".join(e["text"] for b in rendered[1] if b["type"] == "context" for e in b["elements"])
    assert (
        "<https://docs.aws.amazon.com/sagemaker/latest/dg/distributed-troubleshooting-model-parallel.html"
        "|Amazon SageMaker: troubleshooting distributed model parallel" in footer
    )
    assert "000_2f07280e1d145d25.txt" not in footer


@pytest.mark.parametrize(
    "entry_id",
    sorted({e.id for e in KB if any(s.get("doc") == RUNBOOK for s in e.sources)}
           | set(COMMON) | {e.id for e in KB if e.id.startswith("slurm-")}),
)
def test_runbook_common_and_slurm_entries_have_japanese_texts(entry_id):
    ja = KB.get(entry_id).ja
    assert ja.get("title") and ja.get("summary") and ja.get("fix"), entry_id


def test_a_japanese_question_gets_the_japanese_fix(tmp_path):
    d = Matcher(KB, model=False).diagnose("学習後半でCUDA out of memoryが出るようになりました。どう対応するべきですか？")
    assert d.lang == "ja" and d.best.entry_id == "cuda-oom"
    assert d.best.fix[0].startswith("GPU ごとのマイクロバッチ")


def _kb(tmp_path: Path, extra: str, sources: str | None) -> list[str]:
    (tmp_path / "k" / "x").mkdir(parents=True)
    if sources is not None:
        (tmp_path / "k" / "sources.yaml").write_text(sources)
    (tmp_path / "k" / "x" / "e-one.yaml").write_text(
        "id: e-one\ntitle: T\nsummary: S\nrole: root-cause\nrecognise: {anchors: ['Boom happened']}\ncause: C\n"
        "fix: [F]\nsources: [{doc: a.txt, section: s}]\nexamples: {match: ['Boom happened']}\n" + extra
    )
    return [str(e) for e in load_knowledge_base(tmp_path / "k")[1]]


def test_a_document_missing_from_sources_yaml_is_reported(tmp_path):
    errors = _kb(tmp_path, "ja: {title: T2, fix: [x]}\n", "b.txt: {title: B}\n")
    assert errors == ["k/x/e-one.yaml:8: document 'a.txt' is not listed in sources.yaml"]


def test_an_unknown_ja_key_is_reported_with_its_line(tmp_path):
    errors = _kb(tmp_path, "ja: {title: T2, steps: [x]}\n", None)
    assert errors == ["k/x/e-one.yaml:10: unknown key 'ja.steps' (known: title, summary, cause, fix)"]
