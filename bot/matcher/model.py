"""The ranking model: which entry a short text is about, and how sure to be, learned from the knowledge base.

Training data is the knowledge base itself. Each entry's ``examples.match`` is a text whose right answer
is that entry (every other entry is a wrong answer for it); each ``examples.no_match`` is a text the entry
must not answer; a short list of ordinary chat (:data:`CHAT`) must get no answer at all. For each (text,
candidate entry) pair :meth:`RankingModel.rows` computes the signals — anchor/regex hits, fuzzy exemplar
and prose-phrase scores from the matcher, TF-IDF similarity to everything the entry says (with the text
itself left out of the entry when it is one of its examples), the exception type, the kind of text, the
entry's role — and a logistic regression (scikit-learn, fixed seed, no hand-written optimiser) learns
P(this entry is the right first answer). Its probability is calibrated on cross-validation over the same
texts: :attr:`RankingModel.p_confident` is the lowest probability at which first answers were right at
least :data:`TARGET_PRECISION` of the time, and it maps to the configured confidence threshold.

Trained models are cached by a hash of the entries' content (``$TRACEBOT_CACHE``, default
``~/.cache/tracebot``), so a changed entry retrains and an unchanged knowledge base loads in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from tracebot.knowledge.cache import cached
from tracebot.knowledge.entry import Entry
from tracebot.matcher.features import KINDS, TextInfo, TextSpace, entry_parts

MODEL_VERSION = 1
SEED = 7
TARGET_PRECISION = 0.97
CANDIDATES = 8  # entries compared per text besides those with line or phrase evidence
MAX_TRAIN_PER_ENTRY = 20  # examples (and phrases) per entry used as training texts
MAX_TRAIN_TEXTS = 3000  # in all: a 1,000-entry knowledge base trains from 1–2 of each entry's texts
MAX_PART_CHARS = 1500  # of one example in the TF-IDF sums (a long log's head says what it is)
MIN_ENTRIES = 8
BLIND_WEIGHT = 0.5  # below this there is too little to learn from: the matcher's own scores are used

# Ordinary chat that must never get an answer: thanks, +1, follow-ups, questions with no error content.
CHAT = (
    "thanks!",
    "thank you, that fixed it",
    "how did you fix it?",
    "how did you solve this?",
    "did you find a solution?",
    "+1",
    "same here",
    "I have the same problem",
    "any update on this?",
    "any news?",
    "is there a workaround?",
    "can you share your config?",
    "which version are you using?",
    "it works now, closing",
    "this is still happening for me",
    "ok I will try that",
    "could you please help me?",
    "What is the difference between the two options?",
    "How do I run training on multiple nodes?",
    "Is it possible to use a bigger batch size?",
    "Please provide a minimal reproducible example.",
    "Closing as stale.",
    "LGTM, merging",
    "good morning everyone",
    "ありがとうございます、解決しました",
    "同じ問題が起きています",
)


@dataclass
class Evidence:
    """What the matcher found for one entry in one text (the model's inputs besides the text)."""

    strong: bool = False  # an anchor or regex hit a line
    fuzzy: float = 0.0  # best fuzzy exemplar score, 0..100
    phrase: float = 0.0  # best prose phrase score, 0..100
    lines: int = 0  # lines with evidence


Gather = Callable[[str], tuple[dict[int, Evidence], str]]  # text -> (evidence per entry, prose part)
TextInfoOf = Callable[[str, str], TextInfo]

FEATURES = (
    "strong", "strong_only", "other_strong", "fuzzy", "phrase", "lines", "char", "word", "char_margin",
    "word_margin", "char_top", "near_char", "near_word", "near_margin", "exc_char", "exception", "root_cause", "has_error",
    *(f"kind_{k}" for k in KINDS),
    "question_char", "question_phrase", "log_strong", "chat_char", "noerr_char", "asks",
)


@dataclass
class Sample:
    text: str
    gold: int  # entry index, or -1: no entry is right
    part_of: int = -1  # entry whose TF-IDF sum contains this text (left out when comparing)
    part: int = -1  # index of that part
    # Train as if the matcher had found no fuzzy or phrase evidence: an entry's phrases and exemplars were
    # often written from its own examples, so with them the model would learn little about wording it has
    # not seen. A phrase used as a training text would match itself.
    blind: bool = False
    only: int = -1  # a no_match: only this entry's row is a (negative) training row
    group: str = ""


@dataclass
class RankingModel:
    space: TextSpace
    clf: LogisticRegression
    entry_words: list[frozenset[str]]
    roles: np.ndarray
    p_confident: float
    report: dict = field(default_factory=dict)

    # ---- scoring ----------------------------------------------------------------------------------
    def probabilities(self, text: str, info: TextInfo, evidence: dict[int, Evidence]) -> dict[int, float]:
        """P(entry is the right first answer) for the entries with evidence and the closest few."""
        sims = self.signals([text], [info])
        cands = _candidates(sims[0][0] + sims[1][0], evidence)
        x = self.rows(info, evidence, sims, 0, cands)
        p = self.clf.predict_proba(x)[:, 1]
        return dict(zip(cands, p.tolist(), strict=True))

    def score(self, p: float) -> float:
        """A probability on the matcher's 0..100 scale: :attr:`p_confident` maps to ``threshold``."""
        from tracebot.config import DEFAULT_THRESHOLD as T

        pc = self.p_confident
        if p >= pc:
            return round(T + (p - pc) / max(1e-9, 1 - pc) * (100 - T), 1)
        return round(T * p / max(pc, 1e-9), 1)

    def signals(self, texts: list[str], infos: list[TextInfo], samples: list[Sample] | None = None) -> list[np.ndarray]:
        """(texts × entries) arrays: centroid cosine (char, word), closest part (char, word), and the
        exception line's centroid cosine (char). With ``samples``, each text is left out of its entry."""
        vecs = self.space.vectors(texts)
        cent = self.space.similarities(vecs, [s.part_of for s in samples] if samples else None)
        near = self.space.nearest(vecs, [s.part for s in samples] if samples else None)
        exc = self.space.similarities(self.space.vectors([i.exception for i in infos]))[0]
        return [cent[0], cent[1], near[0], near[1], exc]

    def rows(
        self, info: TextInfo, evidence: dict[int, Evidence], sims: list[np.ndarray], i: int, cands: list[int]
    ) -> np.ndarray:
        char, word = sims[0][i], sims[1][i]
        near_c, near_w, exc_c = sims[2][i], sims[3][i], sims[4][i]
        near = near_c + near_w
        best_near = _top_two(near)
        best_char = _top_two(char)
        best_word = _top_two(word)
        n_strong = sum(1 for ev in evidence.values() if ev.strong)
        exc = info.exception_type.lower()
        kind = [float(info.kind == k) for k in KINDS]
        out = np.zeros((len(cands), len(FEATURES)), dtype=np.float64)
        for r, ei in enumerate(cands):
            ev = evidence.get(ei) or Evidence()
            strong = float(ev.strong)
            c, w = float(char[ei]), float(word[ei])
            cm = c - (best_char[1] if best_char[0] == ei else char[best_char[0]])
            wm = w - (best_word[1] if best_word[0] == ei else word[best_word[0]])
            question = kind[KINDS.index("question")]
            out[r] = (
                strong,
                strong * (n_strong == 1),
                float(n_strong - strong > 0),
                ev.fuzzy / 100,
                ev.phrase / 100,
                np.log1p(ev.lines),
                c,
                w,
                cm,
                wm,
                float(best_char[0] == ei),
                float(near_c[ei]),
                float(near_w[ei]),
                float(near[ei] - (best_near[1] if best_near[0] == ei else near[best_near[0]])),
                float(exc_c[ei]) if exc else 0.0,
                float(bool(exc) and exc in self.entry_words[ei]),
                float(self.roles[ei]),
                float(info.has_error),
                *kind,
                question * c,
                question * ev.phrase / 100,
                kind[KINDS.index("log")] * strong,
                kind[KINDS.index("chat")] * c,
                (not info.has_error) * c,
                float(info.asks),
            )
        return out

    # ---- training ---------------------------------------------------------------------------------
    @classmethod
    def train(
        cls,
        entries: list[Entry],
        gather: Gather,
        info_of: TextInfoOf,
        *,
        leave_out_sources: Iterable[str] = (),
        leave_out_examples: Iterable[str] = (),
        extra: Iterable[tuple[str, str | None]] = (),
    ) -> RankingModel:
        """Train on ``entries`` (their examples, minus those of entries citing a source in
        ``leave_out_sources`` and those in ``leave_out_examples``) and ``extra`` (text, expected entry id
        or None) cases."""
        hidden_examples = set(leave_out_examples)
        left_out = set(leave_out_sources)
        per_entry = max(1, min(MAX_TRAIN_PER_ENTRY, MAX_TRAIN_TEXTS // max(1, 3 * len(entries))))
        ids = {e.id: i for i, e in enumerate(entries)}
        samples: list[Sample] = []
        parts: list[str] = []
        owners: list[int] = []
        for ei, e in enumerate(entries):
            hide = bool(left_out & {s.get("url", "") for s in e.sources} | left_out & {s.get("doc", "") for s in e.sources})
            own = entry_parts(e, with_examples=False)
            first_phrase = len(parts) + own.index(e.phrases[0]) if e.phrases else -1
            parts += own
            owners += [ei] * len(own)
            for pi, phrase in enumerate(e.phrases[:per_entry]):
                samples.append(Sample(phrase, ei, part_of=ei, part=first_phrase + pi, group=e.id, blind=True))
            if hide:
                continue
            for x in e.examples_match[:per_entry]:
                if x in hidden_examples:
                    continue
                x = x[:MAX_PART_CHARS]
                samples.append(Sample(x, ei, part_of=ei, part=len(parts), group=e.id))
                samples.append(Sample(x, ei, part_of=ei, part=len(parts), group=e.id, blind=True))
                parts.append(x)
                owners.append(ei)
            for x in e.examples_no_match[:per_entry]:
                samples.append(Sample(x, -1, only=ei, group=e.id))
        for ci, chat in enumerate(CHAT):
            samples.append(Sample(chat, -1, group=f"chat{ci}"))
        for ci, (text, expected) in enumerate(extra):
            if expected is None or expected in ids:
                samples.append(Sample(text, ids[expected] if expected else -1, group=f"case{ci}"))
        space = TextSpace(parts, owners, len(entries))
        model = cls(
            space=space,
            clf=LogisticRegression(C=1.0, max_iter=2000, random_state=SEED),
            entry_words=[_words(e) for e in entries],
            roles=np.array([e.role == "root-cause" for e in entries], dtype=float),
            p_confident=1.0,
        )
        seen: dict[str, tuple[dict[int, Evidence], str]] = {}
        gathered = []
        for s in samples:
            if s.text not in seen:
                seen[s.text] = gather(s.text)
            evidence, prose = seen[s.text]
            if s.blind:
                evidence = {ei: Evidence(strong=ev.strong, lines=ev.lines) for ei, ev in evidence.items() if ev.strong}
            gathered.append((evidence, prose))
        infos = [info_of(s.text, prose) for s, (_, prose) in zip(samples, gathered, strict=True)]
        sims = model.signals([s.text for s in samples], infos, samples)
        xs, ys, owner_sample = [], [], []
        for si, s in enumerate(samples):
            evidence, _ = gathered[si]
            info = infos[si]
            if s.only >= 0:
                cands = [s.only]
            else:
                cands = _candidates(sims[0][si] + sims[1][si], evidence)
                if s.gold >= 0 and s.gold not in cands:
                    cands.append(s.gold)
            xs.append(model.rows(info, evidence, sims, si, cands))
            ys.append(np.array([ei == s.gold for ei in cands], dtype=int))
            owner_sample.append((si, cands))
        x, y = np.vstack(xs), np.concatenate(ys)
        model.clf.fit(x, y, sample_weight=_weights(samples, ys))
        model.p_confident, model.report = _calibrate(model, samples, xs, ys, owner_sample)
        return model


def _weights(samples: list[Sample], ys: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.full(len(y), BLIND_WEIGHT if s.blind else 1.0) for s, y in zip(samples, ys, strict=True)])


def _words(e: Entry) -> frozenset[str]:
    text = " ".join([e.title, e.summary, e.cause, *e.anchors, *e.exemplars, *e.examples_match]).lower()
    return frozenset(w.rsplit(".", 1)[-1] for w in text.replace(":", " ").split())


def _top_two(v: np.ndarray) -> tuple[int, float]:
    if len(v) < 2:
        return 0, 0.0
    top = int(np.argmax(v))
    second = float(np.partition(v, -2)[-2])
    return top, second


def _candidates(sim: np.ndarray, evidence: dict[int, Evidence]) -> list[int]:
    k = min(CANDIDATES, len(sim))
    top = np.argpartition(-sim, k - 1)[:k] if k else []
    return list(dict.fromkeys([*sorted(evidence), *(int(i) for i in sorted(top))]))


def _calibrate(model, samples, xs, ys, owner_sample) -> tuple[float, dict]:
    """Out-of-fold first answers on the training texts → the lowest probability at which they were right
    at least TARGET_PRECISION of the time."""
    strat = [int(s.gold >= 0) + 2 * int(s.only >= 0) for s in samples]
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    firsts: list[tuple[float, bool]] = []  # (probability of the first answer, it is right)
    for train, test in folds.split(np.zeros(len(samples)), strat):
        clf = LogisticRegression(C=1.0, max_iter=2000, random_state=SEED)
        clf.fit(
            np.vstack([xs[i] for i in train]),
            np.concatenate([ys[i] for i in train]),
            sample_weight=_weights([samples[i] for i in train], [ys[i] for i in train]),
        )
        for i in test:
            p = clf.predict_proba(xs[i])[:, 1]
            j = int(np.argmax(p))
            s = samples[i]
            _, cands = owner_sample[i]
            if s.only >= 0:
                firsts.append((float(p[j]), False))  # a no_match answered by its entry is wrong
            else:
                firsts.append((float(p[j]), cands[j] == s.gold))
    firsts.sort(reverse=True)
    best = 1.0
    right = 0
    for n, (p, ok) in enumerate(firsts, 1):
        right += ok
        if right / n >= TARGET_PRECISION:
            best = p
    positives = sum(1 for s in samples if s.gold >= 0)
    top1 = sum(ok for _, ok in firsts) / max(1, positives)
    return min(max(best, 0.5), 0.95), {"oof_first_right": round(top1, 4), "p_confident": round(best, 4)}


# ---- cache ------------------------------------------------------------------------------------------
def content_hash(entries: list[Entry]) -> str:
    h = hashlib.sha256(f"{MODEL_VERSION} {sklearn.__version__} {np.__version__}".encode())
    # The matcher's code decides the evidence the model was trained on: a change to it retrains too.
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.read_bytes())
    for e in entries:
        d = asdict(e)
        d.pop("path", None)
        d.pop("lines", None)
        h.update(json.dumps(d, sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()[:24]


def load_or_train(entries: list[Entry], train: Callable[[], RankingModel]) -> RankingModel:
    return cached("model", content_hash(entries), train)
