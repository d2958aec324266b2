"""The notes shown with an answer (what was not read, or not all of it) follow the thread's language:
each is made from one form of tracebot.notes and said again, in Japanese, from its key and values."""

from __future__ import annotations

import pytest

from tracebot.notes import FORMS, note, read_note
from tracebot.render.messages import LANGS, MESSAGES, say_note

VALUES = {"size": "256 MB", "limit": "1.5 GB", "error": "OSError: [Errno 5] Input/output error: 'a: b'", "kind": ".xz",
          "n": "25", "max": "20"}


def test_every_note_has_a_form_in_every_language():
    assert [(lang, k) for lang in LANGS for k in FORMS if f"note.{k}" not in MESSAGES[lang]] == []


@pytest.mark.parametrize("key", FORMS)
def test_a_note_is_read_back_with_its_values_and_its_file(key):
    values = {k: v for k, v in VALUES.items() if "{" + k + "}" in FORMS[key]}
    for file in (None, "train: node 3.log"):
        read = read_note(note(key, file=file, **values))
        assert read is not None and (read.key, read.values, read.file) == (key, values, file)
        said = say_note(note(key, file=file, **values), "ja")
        assert said == (f"{file}: " if file else "") + MESSAGES["ja"][f"note.{key}"].format(**values)
        assert say_note(note(key, file=file, **values), "en") == note(key, file=file, **values)


def test_a_note_made_otherwise_is_shown_as_it_is():
    assert say_note("py-spy: permission denied on node 3", "ja") == "py-spy: permission denied on node 3"


@pytest.mark.parametrize("text", ["Thanks, that fixed it!", "Fix NCCL timeout handling in the launcher (#1234)"])
def test_the_matchers_reasons_for_silence_are_forms_the_renderer_can_translate(matcher, text):
    """The matcher writes these two notes itself (tracebot.matcher.core): they must stay the forms' words."""
    notes = matcher.diagnose(text).notes
    assert notes and all(read_note(n) is not None and read_note(n).key in ("thanks", "change") for n in notes)
