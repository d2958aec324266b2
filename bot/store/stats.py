"""What knowledge-base maintainers want from the store: per entry, how often it matched and how
helpful it was, and the "Not this" feedback with the line that was matched."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tracebot.store.db import Store


@dataclass
class EntryStats:
    entry_id: str
    matched: int  # diagnoses whose best match was this entry
    helpful: int
    not_this: int

    @property
    def helpful_rate(self) -> float | None:
        votes = self.helpful + self.not_this
        return self.helpful / votes if votes else None


def entry_stats(store: Store) -> list[EntryStats]:
    rows = store.query(
        """
        WITH matched AS (
            SELECT json_extract(entry_ids, '$[0]') AS entry_id, count(*) AS n
            FROM diagnoses WHERE json_array_length(entry_ids) > 0 GROUP BY 1
        ), votes AS (
            SELECT entry_id, sum(helpful) AS helpful, sum(1 - helpful) AS not_this
            FROM feedback GROUP BY entry_id
        )
        SELECT e.entry_id, coalesce(m.n, 0) AS matched,
               coalesce(v.helpful, 0) AS helpful, coalesce(v.not_this, 0) AS not_this
        FROM (SELECT entry_id FROM matched UNION SELECT entry_id FROM votes) e
        LEFT JOIN matched m USING (entry_id) LEFT JOIN votes v USING (entry_id)
        ORDER BY matched DESC, e.entry_id
        """,
        [],
    )
    return [EntryStats(r["entry_id"], r["matched"], r["helpful"], r["not_this"]) for r in rows]


def not_this_feedback(store: Store, limit: int = 50) -> list[dict[str, Any]]:
    """Each "Not this" vote with the line the entry matched on, newest first."""
    rows = store.query(
        """
        SELECT f.entry_id, f.user, f.created_at, d.channel, d.matches
        FROM feedback f LEFT JOIN diagnoses d ON d.id = f.diagnosis_id
        WHERE f.helpful = 0 ORDER BY f.id DESC LIMIT ?
        """,
        [limit],
    )
    out = []
    for r in rows:
        line = next(
            (
                m.get("line", "")
                for m in json.loads(r["matches"] or "[]")
                if m.get("entry_id") == r["entry_id"]
            ),
            "",
        )
        out.append(
            {
                "entry_id": r["entry_id"],
                "user": r["user"],
                "channel": r["channel"],
                "created_at": r["created_at"],
                "line": line,
            }
        )
    return out


def most_helpful(store: Store, limit: int = 5) -> list[EntryStats]:
    rated = [s for s in entry_stats(store) if s.helpful]
    return sorted(rated, key=lambda s: (-s.helpful, -(s.helpful_rate or 0.0)))[:limit]


@dataclass
class Gap:
    """Errors people pasted that got no confident answer, grouped by what they have in common."""

    key: str  # the masked signature, or "exception: TYPE" for logs whose first failure named one
    count: int
    channels: list[str]
    first_seen: float
    last_seen: float
    excerpt: str  # the latest one, scrubbed


def unanswered(store: Store, limit: int = 20) -> list[Gap]:
    """The gaps, most frequent first: pastes of the same error (masked) count as one gap, and so do
    logs whose first failure raised the same exception type."""
    rows = store.query(
        """
        SELECT coalesce('exception: ' || exception, signature) AS key, count(*) AS n,
               json_group_array(DISTINCT channel) AS channels,
               min(created_at) AS first_seen, max(created_at) AS last_seen,
               (SELECT u2.excerpt FROM unanswered u2
                WHERE coalesce('exception: ' || u2.exception, u2.signature)
                      = coalesce('exception: ' || u.exception, u.signature)
                ORDER BY u2.id DESC LIMIT 1) AS excerpt
        FROM unanswered u WHERE coalesce(exception, signature) IS NOT NULL
        GROUP BY 1 ORDER BY n DESC, last_seen DESC LIMIT ?
        """,
        [limit],
    )
    return [
        Gap(r["key"], r["n"], sorted(json.loads(r["channels"])), r["first_seen"], r["last_seen"], r["excerpt"] or "")
        for r in rows
    ]


FLAG_BELOW = 0.5  # helpful rate under which an entry is flagged for maintainers
FLAG_MIN_VOTES = 3  # one unlucky vote is not a trend


def needs_attention(store: Store, threshold: float = FLAG_BELOW, min_votes: int = FLAG_MIN_VOTES) -> list[EntryStats]:
    """Entries whose helpful rate fell below ``threshold`` over at least ``min_votes`` votes, worst first."""
    low = [
        s
        for s in entry_stats(store)
        if s.helpful + s.not_this >= min_votes and (s.helpful_rate or 0.0) < threshold
    ]
    return sorted(low, key=lambda s: (s.helpful_rate or 0.0, -s.not_this))


def voted_texts(store: Store) -> list[dict[str, Any]]:
    """Every vote with the text it judged (already scrubbed when stored), oldest first."""
    return store.query(
        "SELECT entry_id, helpful, text, created_at FROM feedback WHERE text IS NOT NULL AND text != ''"
        " ORDER BY id",
        [],
    )
