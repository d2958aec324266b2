"""Links in an answer come from knowledge entries (contributed by pull request) and their documents: a
source URL must never put text of its own choosing where the reader expects the page's name, nor link to
anything but a web page."""

from __future__ import annotations

import pytest

from tests.slack.blocks import texts
from tracebot.render import slack as render
from tracebot.result import Diagnosis, Match, Source


def _answer_with(source: Source) -> str:
    match = Match(entry_id="cuda-oom", title="CUDA out of memory", score=95.0, confident=True,
                  summary="The GPU ran out of memory.", fix=["Lower the batch size."], sources=[source])
    rendered = render.answer(Diagnosis(matches=[match]), diagnosis_id=None, always_answer=True)
    assert rendered is not None
    return texts(rendered[1])


def test_a_plain_source_url_is_a_link_named_by_its_title():
    shown = _answer_with(Source("PyTorch CUDA notes", "https://pytorch.org/docs/stable/notes/cuda.html"))
    assert "<https://pytorch.org/docs/stable/notes/cuda.html|PyTorch CUDA notes>" in shown


@pytest.mark.parametrize("url", [
    "https://evil.example/login|pytorch.org docs",  # Slack would show "pytorch.org docs|…" linking to evil
    "https://evil.example/x>pytorch.org",
    "javascript:alert(1)",
    "https://pytorch.org/a b",
])
def test_a_source_url_that_would_disguise_its_link_is_shown_as_text_never_linked(url: str):
    shown = _answer_with(Source("PyTorch CUDA notes", url))
    assert "<https://evil" not in shown and "<javascript" not in shown and "<https://pytorch.org/a" not in shown
    assert "PyTorch CUDA notes" in shown
