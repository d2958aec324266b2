"""Named, ordered schema migrations (the sqlite-utils ``migrations.py`` idiom).

Each migration runs once, in list order, and is recorded by name in ``_migrations``. Never edit or
reorder an applied migration: append a new one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlite_utils

Migration = tuple[str, Callable[[sqlite_utils.Database], None]]


def _m001_initial(db: sqlite_utils.Database) -> None:
    db["events"].create({"key": str, "seen_at": float}, pk="key")
    db["diagnoses"].create(
        {
            "id": int,
            "channel": str,
            "thread_ts": str,
            "message_ts": str,
            "user": str,
            "source": str,  # "auto", "mention", "dm", "shortcut", "command", "console"
            "entry_ids": str,  # JSON list, best first
            "scores": str,  # JSON list, parallel to entry_ids
            "matches": str,  # JSON list of Match dicts, for "Other matches" after a restart
            "confident": int,
            "reply_ts": str,
            "created_at": float,
        },
        pk="id",
        not_null={"channel", "created_at"},
    )
    db["diagnoses"].create_index(["channel", "thread_ts", "created_at"])
    db["feedback"].create(
        {
            "id": int,
            "diagnosis_id": int,
            "entry_id": str,
            "user": str,
            "helpful": int,
            "created_at": float,
        },
        pk="id",
        foreign_keys=[("diagnosis_id", "diagnoses", "id")],
    )
    db["channel_settings"].create(
        {"channel": str, "auto_reply": int, "threshold": float, "updated_by": str, "updated_at": float},
        pk="channel",
    )
    db["trace_runs"].create(
        {
            "id": int,
            "command": str,
            "args": str,
            "dedupe_key": str,
            "user": str,
            "channel": str,
            "parent_ts": str,
            "status": str,  # running, ok, info, warning, error
            "summary": str,
            "started_at": float,
            "finished_at": float,
        },
        pk="id",
    )


def _m002_learning(db: sqlite_utils.Database) -> None:
    # The text an answer answered (secrets scrubbed, people's names removed), so a vote on it becomes a
    # labelled example; a vote keeps its own copy, since that is what the voter judged.
    db["diagnoses"].add_column("text", str)
    db["feedback"].add_column("text", str)
    # Errors pasted that got no confident answer: the knowledge base's gaps, grouped by signature.
    db["unanswered"].create(
        {
            "id": int,
            "channel": str,
            "signature": str,  # the masked error line
            "exception": str,  # the first failure's exception type, for logs
            "excerpt": str,  # scrubbed, people's names removed
            "created_at": float,
        },
        pk="id",
    )
    db["unanswered"].create_index(["signature"])


def _m003_audit(db: sqlite_utils.Database) -> None:
    # Who asked for which command, where and when, and what came of it (every request, refusals too).
    db["audit"].create(
        {
            "id": int,
            "at": float,
            "user": str,
            "channel": str,
            "via": str,  # "slash" (/trace), "mention" (@tracebot <command>)
            "command": str,
            "args": str,  # scrubbed of secrets and cut short
            "outcome": str,  # "answered", "started", "usage", "not_allowed", "not_here", ...
        },
        pk="id",
        not_null={"at"},
    )
    db["audit"].create_index(["at"])


def _m004_inbox(db: sqlite_utils.Database) -> None:
    # Accepted work not yet answered: what a restart needs to answer it (service/inbox.py). A row is
    # deleted, payload and all, once its answer or explained failure is posted.
    db["inbox"].create(
        {
            "id": int,
            "kind": str,  # "auto", "direct", "edit", "trace"
            "payload": str,  # JSON: the message (user content) or the command, and where to reply
            "owner": str,  # the process answering it (store/owner.py); a dead owner's rows are replayed
            "thread": str,  # a /trace run's parent message, once posted
            "created_at": float,
        },
        pk="id",
        not_null={"kind", "payload", "owner", "created_at"},
    )


def _m005_answers_by_message(db: sqlite_utils.Database) -> None:
    # An edited message's answer is found by the message (Store.answer_to): every edit in a channel
    # tracebot reads asks, and a table of a year's diagnoses is not scanned for each.
    db["diagnoses"].create_index(["channel", "message_ts"], if_not_exists=True)


MIGRATIONS: list[Migration] = [
    ("001_initial", _m001_initial),
    ("002_learning", _m002_learning),
    ("003_audit", _m003_audit),
    ("004_inbox", _m004_inbox),
    ("005_answers_by_message", _m005_answers_by_message),
]


def apply_migrations(db: sqlite_utils.Database, migrations: list[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied now."""
    db["_migrations"].create({"name": str, "applied_at": float}, pk="name", if_not_exists=True)
    done = {row["name"] for row in db["_migrations"].rows}
    applied = []
    for name, migrate in migrations:
        if name in done:
            continue
        # One explicit transaction per migration: a failure leaves the schema as it was.
        db.conn.execute("BEGIN")
        try:
            migrate(db)
            db["_migrations"].insert({"name": name, "applied_at": time.time()})
        except BaseException:
            db.conn.rollback()
            raise
        db.conn.commit()
        applied.append(name)
    return applied
