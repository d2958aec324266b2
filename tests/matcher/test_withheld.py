"""Why an answer is not confident (``Match.withheld``), and ``kb eval`` counting it for right first answers:
an author tuning confidence needs to know which rule holds the right answers back."""

from __future__ import annotations

import pytest

from tests.matcher.test_confidence import (
    CHANGES,
    QUESTIONS,
    SHOWN_ON_WORDING,
    STATED_ON_WORDING,
    UNSURE,
    statement_point,
)
from tracebot.authoring.evaluate import Case, CaseResult, format_report, summarize
from tracebot.matcher import Matcher


@pytest.mark.parametrize(("text", "entry"), QUESTIONS[:3])
def test_a_confident_answer_has_nothing_withheld(matcher: Matcher, text: str, entry: str):
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.confident and d.best.withheld == ""


@pytest.mark.parametrize("text", UNSURE[:4])
def test_an_answer_the_model_is_not_sure_enough_of_is_below_the_point(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    assert d.best is not None and not d.best.confident
    assert d.best.withheld == "below point", [(m.entry_id, m.score, m.withheld) for m in d.matches[:3]]
    # the closest guesses after it are never confident, and say so
    assert all(m.withheld in ("below point", "guess") for m in d.matches)


@pytest.mark.parametrize(("text", "entry"), [STATED_ON_WORDING, SHOWN_ON_WORDING])
def test_a_statement_the_model_is_sure_of_is_held_only_by_the_statement_point(matcher: Matcher, text: str, entry: str):
    model = matcher.model
    assert model is not None
    with statement_point(model, 2.0):  # no statement point: the cap on answers from wording alone holds
        d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and not d.best.confident
    assert d.best.withheld == "statement point"


def test_a_thank_you_naming_the_error_is_held_by_the_thank_you_rule(matcher: Matcher):
    d = matcher.diagnose("CUDA out of memory is gone after halving the batch, thanks!")
    assert d.best is not None and d.best.entry_id == "cuda-oom" and not d.best.confident
    assert d.best.withheld == "thanks"


@pytest.mark.parametrize("text", list(CHANGES.values())[:3])
def test_a_change_naming_the_error_is_held_by_the_change_rule(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    assert d.best is not None and not d.best.confident and d.best.withheld == "change"


def test_kb_eval_counts_right_first_answers_by_what_held_them_back():
    cases = [Case(f"c{i}", "cuda-oom", []) for i in range(4)] + [Case("n", None, [])]
    results = [
        CaseResult("c0", "cuda-oom", ["cuda-oom"], ["cuda-oom"], True, True, False, False),
        CaseResult("c1", "cuda-oom", ["cuda-oom"], [], True, True, False, False, "below point"),
        CaseResult("c2", "cuda-oom", ["cuda-oom", "x"], [], True, True, False, False, "below point"),
        CaseResult("c3", "cuda-oom", ["x", "cuda-oom"], [], False, True, False, False, "statement point"),  # wrong first
        CaseResult("n", None, ["x"], [], False, False, False, False, "not asked"),  # a negative: not counted
    ]
    rep = summarize(cases, results)
    assert rep.withheld == {"below point": 2}
    assert "right first but not confident: below point 2" in format_report(rep)
    assert rep.to_dict()["withheld"] == {"below point": 2}
