"""One definition of asking (``matcher.asking``) serves the ranking model's ``asks`` and the rules that keep a
thank-you or a change's description silent: a text that asks is asking for both."""

from __future__ import annotations

import pytest

from tracebot.matcher import Matcher
from tracebot.matcher.asking import asks
from tracebot.matcher.core import prose_lines
from tracebot.matcher.features import text_info

# Written here: the asking words of both former lists (a line opening as a question, "please", Chinese 请问/怎么).
ASKING = [
    "how do I keep the OOM from coming back when I double the batch",
    "does anyone know why NCCL times out at step 4000",
    "the job hangs after the checkpoint, any idea",
    "please have a look at the NCCL timeout below",
    "请问 NCCL watchdog timeout 怎么办",
    "为什么 loss scale 一直下降",
]
NOT_ASKING = [
    "thanks, halving the batch fixed it",
    "the job hangs after the checkpoint on two nodes",
    "明白怎么回事了, thanks",
    "Add a helper that retries the NCCL init",
]


@pytest.mark.parametrize("text", ASKING)
def test_asking_words_count_for_the_model_and_the_silence_rules_alike(text: str):
    prose = prose_lines(text)
    assert asks(prose) and text_info(text, prose).asks


@pytest.mark.parametrize("text", NOT_ASKING)
def test_statements_and_thanks_ask_nothing(text: str):
    prose = prose_lines(text)
    assert not asks(prose) and not text_info(text, prose).asks


def test_a_thank_you_that_goes_on_to_ask_without_a_question_mark_is_answered(matcher: Matcher):
    # the thank-you rule used to know only "?", "please", "help": a line opening with "how" was a question to
    # the model but not to it, so this was kept silent
    d = matcher.diagnose(
        "thanks, halving the batch fixed the first CUDA out of memory\n"
        "how do I keep it from coming back when I double the batch"
    )
    assert d.best is not None and d.best.entry_id == "cuda-oom" and d.best.confident, d.notes


# Written here. A line opening with an auxiliary asks ("Can I …", "Does anyone …", "Should I …"), but not one
# whose auxiliary is followed by "not" or "be": "Should be fine now", "Does not happen any more". Since the
# thank-you rule took the model's line-opening words, such a thank-you was answered.
RESOLVED_WITH_AN_AUXILIARY = [
    "Should be solved: halving the batch fixed the CUDA out of memory, thanks",
    "Does not happen anymore: halving the batch fixed the CUDA out of memory, thanks",
    "Do not see the CUDA out of memory anymore after halving the batch, thanks",
]


@pytest.mark.parametrize("text", RESOLVED_WITH_AN_AUXILIARY)
def test_a_thank_you_opening_with_an_auxiliary_that_asks_nothing_stays_silent(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    assert not d.confident and "thank-you" in " ".join(d.notes), d.notes


def test_asking_does_not_slow_down_on_whitespace_lines():
    # ``^\s*`` with MULTILINE crossed line ends, so every blank line rescanned the rest: quadratic in their number
    assert not asks("\n" * 200_000 + "it works now")
    assert asks("   \n  \n   how do I fix it")
