"""Hubness: an entry whose text covers many topics is close to every text; the ranking model reads the
centroid cosines' margins with each entry's hubness taken off (CSLS), so such an entry no longer wins a
margin on a text about another problem only because it is close to everything."""

from __future__ import annotations

import numpy as np

from tracebot.matcher.features import text_info
from tracebot.matcher.model import FEATURES, RankingModel, hub_margins, rows
from tracebot.matcher.training import Sample, hubness

HUB, SPECIFIC = 0, 1
TEXT = "after a few hours the job on 8 GPUs dies with out of memory on rank 3"


def _model(hub: np.ndarray) -> RankingModel:
    return RankingModel(
        spaces=[], coef=np.zeros(len(FEATURES)), intercept=0.0, entry_words=[" a ", " b "], roles=np.zeros(2), hubness=hub
    )


def _margins(model: RankingModel, char: np.ndarray, word: np.ndarray) -> dict[str, np.ndarray]:
    """The two hub-corrected margin columns of the text's rows (candidates: the hub, then the specific entry)."""
    zeros = np.zeros(2)
    x = rows(model, text_info(TEXT, TEXT), {}, (char, word, zeros, zeros, zeros, zeros), [HUB, SPECIFIC])
    return {f: x[:, FEATURES.index(f)] for f in ("char_margin", "char_hub_margin", "word_hub_margin")}


def test_a_broad_entry_closest_to_the_text_loses_the_margin_to_the_specific_entry_once_its_hubness_is_known():
    # the broad entry is a little closer in both spaces, but it is that close to texts about anything
    char, word = np.array([0.42, 0.40]), np.array([0.30, 0.27])
    hub = np.array([[0.38, 0.20], [0.25, 0.10]])
    got = _margins(_model(hub), char, word)
    assert got["char_margin"][HUB] > 0 > got["char_margin"][SPECIFIC]  # the raw cosine prefers the hub
    for f in ("char_hub_margin", "word_hub_margin"):
        assert got[f][SPECIFIC] > 0 > got[f][HUB], f


def test_a_model_without_hubness_reads_the_plain_margins():
    char, word = np.array([0.42, 0.40]), np.array([0.30, 0.27])
    got = _margins(_model(np.zeros((2, 0))), char, word)
    assert np.allclose(got["char_hub_margin"], got["char_margin"])
    assert np.allclose(hub_margins(np.zeros((2, 0)), (char, word), np.arange(2))[1], [0.03, -0.03])


def test_hubness_is_the_mean_cosine_with_the_closest_texts_of_other_entries():
    # three entries, two texts each; entry 0 is close to every other entry's texts, entry 2 to none
    samples = [Sample(f"text {i}", gold=i // 2) for i in range(6)]
    samples += [Sample("text 2", gold=1, blind=True), Sample("chat", gold=-1), Sample("text 0 no", gold=-1, only=0)]
    cos = np.array(
        [
            [0.9, 0.1, 0.0],
            [0.9, 0.2, 0.1],
            [0.8, 0.9, 0.1],
            [0.5, 0.8, 0.0],
            [0.7, 0.1, 0.9],
            [0.4, 0.3, 0.8],
            [0.8, 0.9, 0.1],  # the blind twin of text 2: counted once
            [0.9, 0.9, 0.9],  # silence: not a text about another entry's problem
            [0.9, 0.9, 0.9],  # a no_match
        ]
    )
    got = hubness(samples, (cos, cos * 0.5), k=2)
    # entry 0: its two closest other texts are 2 (0.8, once) and 4 (0.7), never its own texts (0.9)
    assert np.allclose(got[0], [0.75, 0.25, 0.1])
    assert np.allclose(got[1], got[0] * 0.5)
    assert got[0][0] > got[0][1] > got[0][2]


def test_a_knowledge_base_with_too_few_texts_has_no_hubness():
    assert not hubness([Sample("only", gold=0)], (np.array([[0.5, 0.2]]),)).any()
