"""Helpers for tests: build small knowledge bases, and the CI rule for integration tests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(condition: bool, why: str) -> None:
    """Integration tests need real services: outside CI a missing one skips, in CI it fails loudly."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required for this test in CI: {why}")
    pytest.skip(why)


def entry_dict(entry_id: str, **over: Any) -> dict[str, Any]:
    """A valid entry as a dict, for tests that build their own knowledge base."""
    d: dict[str, Any] = {
        "id": entry_id,
        "title": f"Title of {entry_id}",
        "summary": "A summary.",
        "role": "root-cause",
        "recognise": {"anchors": [f"{entry_id} happened"]},
        "cause": "A cause.",
        "fix": ["A fix."],
        "sources": [{"url": "https://example.org/doc"}],
        "examples": {"match": [f"{entry_id} happened"]},
    }
    d.update(over)
    return d


def write_kb(root: Path, entries: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for e in entries:
        (root / f"{e['id']}.yaml").write_text(yaml.safe_dump(e, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return root
