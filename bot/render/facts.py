"""The values a match read off the user's error (``Match.facts``), as phrases in the reader's language:
"asked for 2.00 GiB", "another process, PID 48211, holds 61.00 GiB on GPU 2 — see gpu-zombie-process".
Every view (Slack, terminal) says them the same way; each escapes the values for its medium."""

from __future__ import annotations

from collections.abc import Callable

from tracebot.render.messages import msg
from tracebot.result import Match


def fact_phrases(match: Match, lang: str = "en", escape: Callable[[str], str] = str) -> list[str]:
    """One phrase per value, in the vocabulary's order; who holds the GPU's memory is one phrase."""
    facts = {k: escape(v) for k, v in match.facts.items()}
    whose: list[str] = []
    if "other_pid" in facts and "other_held" in facts:
        # another process for certain only when PyTorch also named this one ("this process has …")
        pid, held = facts.pop("other_pid"), facts.pop("other_held")
        on = msg(lang, "fact.on_gpu", v=facts.pop("gpu")) if "gpu" in facts else ""
        phrase = msg(lang, "fact.another_process" if "in_use" in facts else "fact.some_process", pid=pid, held=held, on=on)
        if match.see_also:
            phrase += " — " + msg(lang, "fact.see", v=escape(", ".join(match.see_also)))
        whose.append(phrase)
    return whose + [msg(lang, f"fact.{k}", v=v) for k, v in facts.items()]
