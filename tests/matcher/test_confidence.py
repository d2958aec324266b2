"""How sure the bundled knowledge base's model is, as a person in a channel sees it: a question told in
one's own words gets its entry confidently, chat gets nothing, and a paste nobody is sure about still
shows its three closest guesses, none of them confident (and no guess stands beside a confident answer)."""

from __future__ import annotations

import pytest

from tracebot.matcher import Matcher
from tracebot.matcher.core import MODEL_GUESS_PROBABILITY, MODEL_GUESSES, MODEL_MIN_PROBABILITY

# Written here, in the words of someone who has not read the entries (none is an entry's text).
QUESTIONS = [
    ("why is GPU memory still in use after my job was cancelled? nvidia-smi lists no processes", "gpu-zombie-process"),
    ("how do I get a stack trace of every rank of a hung multi-node job?", "distributed-hang-py-spy"),
    ("DDP says some parameters did not receive gradients, what should I do?", "ddp-unused-parameters"),
    ("SLURM cancelled my job because of the time limit, how do I give it more time?", "slurm-time-limit"),
    ("どうしてジョブが時間制限でキャンセルされたのですか？延長する方法を教えてください", "slurm-time-limit"),
    ("any idea why torch.cuda.is_available() returns False on the new node?", "no-gpu-visible"),
]
CHAT = [
    "same problem here on 8 A100s",
    "ok, trying that now",
    "thanks, that did it!",
    "any news on this one?",
    "could you share the full log?",
    "I'll close this then",
]
# Pastes the model is not sure about, each with more than three candidates.
UNSURE = [
    "our eval job died overnight, the log only says: RuntimeError: connection to the store timed out",
    "the job got killed during the night and now I see nothing in the output file, what happened?",
    "Why does my DDP training freeze forever at the start when I use two nodes?",
    "my run just stops making progress after a few hundred steps on 16 GPUs, no error at all",
    *CHAT,
]


@pytest.mark.parametrize(("text", "entry"), QUESTIONS)
def test_a_question_in_a_persons_own_words_is_answered_confidently(matcher: Matcher, text: str, entry: str):
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == entry and d.best.confident, [
        (m.entry_id, m.score, m.confident) for m in d.matches[:3]
    ]


@pytest.mark.parametrize("text", CHAT)
def test_chat_in_a_thread_gets_no_confident_answer(matcher: Matcher, text: str):
    assert not matcher.diagnose(text).confident


@pytest.mark.parametrize("text", UNSURE)
def test_an_unsure_answer_still_shows_three_closest_guesses_none_of_them_confident(matcher: Matcher, text: str):
    d = matcher.diagnose(text)
    probs = [m.probability for m in d.matches]
    assert all(p is not None for p in probs)
    if probs and max(probs) >= MODEL_MIN_PROBABILITY and not d.confident:
        # the model's likeliest candidates down to the guesses' floor are all shown
        from tracebot.matcher.features import text_info

        model = matcher.model
        assert model is not None
        aggs, prose = matcher._evidence_of(text)
        cand = model.probabilities(text, text_info(text, prose), aggs)
        likely = sorted(cand.values(), reverse=True)[:MODEL_GUESSES]
        expected = sum(p >= MODEL_GUESS_PROBABILITY for p in likely)
        assert len(d.matches) >= expected
    for m in d.matches:
        if m.probability is not None and m.probability < MODEL_MIN_PROBABILITY and m.kind not in ("anchor", "regex"):
            assert not m.confident, m.entry_id


@pytest.mark.parametrize(("text", "_"), QUESTIONS)
def test_no_guess_stands_beside_a_confident_answer(matcher: Matcher, text: str, _: str):
    d = matcher.diagnose(text)
    assert d.confident
    assert all(m.probability >= MODEL_MIN_PROBABILITY or m.kind in ("anchor", "regex") for m in d.matches)
