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


# Written here (match21). Courtesy thanks around a report are no thank-you for a problem closed: the error
# pasted on a line of its own is the report, as on GitHub issues that open "Thanks for sharing the code".
THANKS_AROUND_A_REPORT = [
    (
        "Thanks a lot for sharing your code! I run into this as soon as training starts:\n"
        "RuntimeError: No CUDA GPUs are available",
        "no-gpu-visible",
    ),
    (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity)\n"
        "thank you for the great work, this happens at the first step of my fine-tuning",
        "cuda-oom",
    ),
]


@pytest.mark.parametrize(("text", "entry"), THANKS_AROUND_A_REPORT)
def test_a_report_with_courtesy_thanks_and_a_pasted_error_is_answered(matcher: Matcher, text: str, entry: str):
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, (d.notes, d.best and d.best.withheld)


# Near misses: a thank-you that says the problem is over stays silent with the error quoted above or below it,
# and an error named inside the thank-you sentence is no pasted error.
THANKS_CLOSING_A_PROBLEM = {
    "says fixed it": "fixed it by halving the batch, thanks\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "says went away": "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    "that went away after halving the batch, thanks",
    "says solved": "RuntimeError: No CUDA GPUs are available\nsolved by exporting CUDA_VISIBLE_DEVICES again, thank you",
    "error inside the thanks": "Thanks, the RuntimeError: CUDA out of memory was my own batch size",
}


@pytest.mark.parametrize("text", THANKS_CLOSING_A_PROBLEM.values(), ids=THANKS_CLOSING_A_PROBLEM.keys())
def test_a_thank_you_closing_a_problem_stays_unconfident_with_the_error_quoted(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    assert not d.confident, [(m.entry_id, m.score, m.withheld) for m in d.matches[:3]]
    assert d.best is None or d.best.withheld == "thanks"
