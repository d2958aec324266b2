"""The ranking model's training texts (:class:`Sample`) and their matcher evidence: what training takes
from the knowledge base and the matcher without SciPy, so that a process that never imports it
(the parent of the training helper, :mod:`tracebot.matcher.trainer`) can compute it too."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass

from tracebot.knowledge.entry import Entry
from tracebot.knowledge.silence import Silence, normalise_url
from tracebot.matcher.features import described, entry_parts
from tracebot.matcher.model import (
    MAX_PART_CHARS,
    MAX_TRAIN_ENTRIES,
    MAX_TRAIN_PER_ENTRY,
    MAX_TRAIN_TEXTS,
    Evidence,
    Gather,
)

Gathered = dict[tuple[str, bool], tuple[dict[int, Evidence], str]]  # (text, phrases read) -> gather's


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


def training_texts(
    entries: list[Entry],
    leave_out_sources: Iterable[str],
    leave_out_examples: Iterable[str],
    extra: Iterable[tuple[str, str | None]],
    silence: Iterable[Silence] = (),
) -> tuple[list[Sample], list[str], list[int]]:
    """The training samples, and the parts each entry's TF-IDF sum is made of (with their owners)."""
    hidden_examples = set(leave_out_examples)
    left_out = set(leave_out_sources)
    # A large knowledge base trains from every stride-th entry's texts (all entries stay in the TF-IDF
    # spaces): the model learns how much each signal is worth, the same for every entry, and a few hundred
    # entries' texts teach that as well as a thousand, in a fraction of the time.
    stride = -(-len(entries) // MAX_TRAIN_ENTRIES)
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
        teach = ei % stride == 0
        if teach:
            for pi, phrase in enumerate(e.phrases[:per_entry]):
                samples.append(Sample(phrase, ei, part_of=ei, part=first_phrase + pi, group=e.id, blind=True))
            for text in described(e)[:per_entry]:
                where = len(parts) - len(own) + own.index(text)
                samples.append(Sample(text, ei, part_of=ei, part=where, group=e.id, blind=True))
        if hide:
            continue
        for xi, x in _summed_examples(e, hidden_examples):
            if teach and xi < per_entry:
                samples.append(Sample(x, ei, part_of=ei, part=len(parts), group=e.id))
                samples.append(Sample(x, ei, part_of=ei, part=len(parts), group=e.id, blind=True))
            parts.append(x)
            owners.append(ei)
        if teach:
            samples += [Sample(x, -1, only=ei, group=e.id) for x in e.examples_no_match[:per_entry]]
    # Silence texts: no candidate is right. Those copied from a left-out source are left out like the
    # examples of entries citing it (a cross-validated case and its own thread's replies never meet).
    hidden_urls = {normalise_url(u) for u in left_out if u}
    for ci, s in enumerate(silence):
        url = normalise_url(s.url) if s.url else ""
        if url and url in hidden_urls:
            continue
        # one group per source: a thread's two texts sit on the same side of the calibration's folds
        samples.append(Sample(s.text[:MAX_PART_CHARS], -1, group=f"silence:{url or ci}"))
    for ci, (text, expected) in enumerate(extra):
        if expected is None or expected in ids:
            samples.append(Sample(text, ids[expected] if expected else -1, group=f"case{ci}"))
    return samples, parts, owners


def _summed_examples(e: Entry, hidden: Collection[str] = ()) -> Iterator[tuple[int, str]]:
    """The examples of ``e`` that join its TF-IDF sum (and train), as (index among its examples, text cut to
    MAX_PART_CHARS): the first MAX_TRAIN_PER_ENTRY, those ``hidden`` left out."""
    for xi, x in enumerate(e.examples_match[:MAX_TRAIN_PER_ENTRY]):
        if x not in hidden:
            yield xi, x[:MAX_PART_CHARS]


def entry_texts(e: Entry) -> list[str]:
    """The parts of ``e``'s TF-IDF sums when nothing is left out: those :func:`training_texts` gives it then."""
    return [*entry_parts(e, with_examples=False), *(x for _, x in _summed_examples(e))]


def gathered_keys(samples: list[Sample]) -> list[tuple[str, bool]]:
    """Each sample's key in :data:`Gathered`: its text, and whether the text's phrases are read (a blind
    sample reads only anchor and regex evidence, so a text read only blind skips the phrases)."""
    read_whole = {s.text for s in samples if not s.blind}
    return [(s.text, s.text in read_whole) for s in samples]


def gathered(samples: list[Sample], gather: Gather) -> Gathered:
    """The matcher's evidence for each distinct training text (``gather``: :meth:`Matcher.evidence_of`),
    under :func:`gathered_keys`."""
    out: Gathered = {}
    for key in gathered_keys(samples):
        if key not in out:
            out[key] = gather(key[0], phrases=key[1])
    return out
