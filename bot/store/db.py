"""tracebot's SQLite store: events seen, accepted work not yet answered (the inbox), diagnoses, feedback,
channel settings, trace runs.

Plain Python over sqlite-utils; nothing here knows Slack. One connection shared by the bot's threads,
serialised by a lock (SQLite writes are serial anyway); WAL so ``tracebot stats`` can read while the
bot writes. Every SQLite failure surfaces as :class:`StoreError` with the path and what to do: a
locked or corrupt database is reported, never silently skipped.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from tracebot.folders import make_private
from tracebot.result import Match, Source
from tracebot.secrets import Scrubber, map_strings
from tracebot.store.migrations import apply_migrations

log = logging.getLogger(__name__)
T = TypeVar("T")
EVENT_TTL_S = 7 * 24 * 3600  # Slack retries within minutes; a week is far beyond any redelivery
PRUNE_EVERY = 1000
AUDIT_ARGS_CHARS = 200  # a pasted log after `/trace diagnose` is not kept whole


class StoreError(RuntimeError):
    """The database could not be read or written; the message says which file and why."""


@dataclass
class ChannelSettings:
    channel: str
    auto_reply: bool = True
    threshold: float | None = None  # None: the configured default
    updated_by: str | None = None


@dataclass
class DiagnosisRecord:
    id: int
    channel: str
    thread_ts: str | None
    message_ts: str | None
    user: str | None
    source: str
    matches: list[Match]
    confident: bool
    reply_ts: str | None
    created_at: float


@dataclass
class Work:
    """A row of the inbox: accepted work and what answering it again needs (user content: deleted when done)."""

    kind: str
    payload: dict[str, Any]
    owner: str
    id: int | None = None
    thread: str | None = None
    created_at: float = 0.0


def _insert_work(conn: sqlite3.Connection, work: Work, now: float, *, commit: bool = False) -> int:
    cursor = conn.execute(
        "INSERT INTO inbox(kind, payload, owner, created_at) VALUES (?, ?, ?, ?)",
        [work.kind, json.dumps(work.payload), work.owner, now],
    )
    if commit:
        conn.commit()
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _payload(text: str) -> dict[str, Any]:
    """An inbox row's payload; ValueError (or TypeError) when it is not a JSON object (edited, cut short)."""
    payload = json.loads(text)
    if not isinstance(payload, dict):
        raise ValueError("not a JSON object")
    return payload


@contextmanager
def _write_locked(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A transaction that takes SQLite's write lock before it reads (``BEGIN IMMEDIATE``), so what it read
    still holds when it writes, even with another process on the same file; rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _create_private(path: Path) -> None:
    """Make a missing database file (and its folder) readable by this user alone: it keeps what was pasted
    in DMs and private channels and who traced what, and tracebot runs on a login node others share.
    SQLite gives its WAL and shared-memory files the database file's mode. An existing file is left as
    its owner set it. A symbolic link is followed first (an admin links the database to another disk before
    the first start), so the file made is the one SQLite opens: the link's existence is no reason to let
    SQLite create its target with the umask."""
    path = Path(os.path.realpath(path))
    make_private(path.parent)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))


class Store:
    def __init__(self, path: str | Path, *, timeout_s: float = 5.0) -> None:
        self.path = str(path)
        self.timeout_s = timeout_s
        self._lock = threading.RLock()
        self._claims = 0
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file we opened
        self._connect()

    @classmethod
    def existing(cls, path: str | Path, **kw: Any) -> Store:
        """The store at ``path`` for a command that only reads it (an export, a report): a path with no
        database is a StoreError, not a new empty database (and folder) that reports "nothing recorded"."""
        if str(path) != ":memory:" and not os.path.exists(path):
            raise StoreError(f"no tracebot database at {path}: give the file the bot writes (TRACEBOT_DB, or --db)")
        return cls(path, **kw)

    def _connect(self) -> None:
        if self.path != ":memory:":
            try:
                _create_private(Path(self.path))
            except OSError as exc:  # its folder cannot be made (/proc, a file in the way, no permission)
                reason = exc.strerror or str(exc)
                raise StoreError(
                    f"tracebot database {self.path}: cannot create it ({reason}: {exc.filename}); "
                    "point TRACEBOT_DB at a file in a folder tracebot's user may write"
                ) from exc
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout_s, check_same_thread=False)
            self.db = sqlite_utils.Database(conn, execute_plugins=False)
            with self._lock:
                try:
                    self._open()
                except sqlite3.Error as exc:
                    raise self._error(exc) from exc
        except sqlite3.Error as exc:  # connect itself can fail (directory missing, permissions)
            raise self._error(exc) from exc
        self._identity = self._file_identity()

    def _file_identity(self) -> tuple[int, int] | None:
        if self.path == ":memory:":
            return None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_dev, st.st_ino

    def _check_file(self) -> None:
        """SQLite keeps writing to a database file deleted (or replaced) under it, and every later record
        vanishes with the old inode. So each operation checks the file is still the one opened; if not,
        this one fails with the reason and a new database is opened at the path for the next ones."""
        if self.path == ":memory:" or self._file_identity() == self._identity:
            return
        what = "deleted" if self._file_identity() is None else "replaced"
        with suppress(sqlite3.Error):  # the old file is gone; closing it only ends our handle
            self.db.conn.close()
        try:
            self._connect()
            after = "a new database was created there for the records from now on"
        except StoreError as exc:
            after = f"a new one could not be created ({exc})"
        raise StoreError(
            f"tracebot database {self.path}: the file was {what} while tracebot was running; "
            f"the records before this moment are gone with it, and {after}"
        )

    def _open(self) -> None:
        if self.path != ":memory:":
            self.db.enable_wal()
        self.db.execute("PRAGMA foreign_keys=ON")
        apply_migrations(self.db)
        self.db.execute("DELETE FROM events WHERE seen_at < ?", [time.time() - EVENT_TTL_S])

    def _error(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            hint = "another process holds a write lock; stop it or point TRACEBOT_DB elsewhere"
        elif "disk is full" in text:
            hint = "the disk holding it is full; free space there"
        elif "readonly" in text:
            hint = "the file or its filesystem is read-only; make it writable or point TRACEBOT_DB elsewhere"
        elif isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            hint = "the file is corrupt; move it aside (tracebot will create a new one) or restore a backup"
        else:
            hint = "check the path and its permissions"
        return StoreError(f"tracebot database {self.path}: {text} ({hint})")

    def _run(self, fn: Callable[[], T]) -> T:
        with self._lock:
            self._check_file()
            try:
                return fn()
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    @contextmanager
    def _tx(self) -> Iterator[None]:
        with self._lock:
            self._check_file()
            try:
                with self.db.conn:
                    yield
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()

    # -- events seen ---------------------------------------------------------------------------------
    def claim_event(self, *keys: str) -> bool:
        """Record ``keys`` as seen; True only for the first caller to present any of them.

        Several keys name one delivery (event_id, channel+ts): a retry may repeat either.
        """
        return self._claim(keys, None) is not False

    def claim_work(self, keys: list[str], work: Work) -> int | None | bool:
        """:meth:`claim_event`, and ``work`` written to the inbox in the same transaction: False for a
        delivery seen before, else the inbox row's id (True when there were no keys to claim: the work
        is not recorded either, since nothing could dedupe its replay against a redelivery)."""
        return self._claim(tuple(keys), work)

    def _claim(self, keys: tuple[str, ...], work: Work | None) -> int | bool:
        keys = tuple(k for k in keys if k)
        if not keys:
            return True
        now = time.time()

        def claim() -> int | bool:
            # the write lock first: two bot processes sharing the file (several Socket Mode connections)
            # cannot both see "not seen" and both answer
            with _write_locked(self.db.conn) as conn:
                placeholders = ",".join("?" * len(keys))
                seen = conn.execute(f"SELECT 1 FROM events WHERE key IN ({placeholders}) LIMIT 1", keys)
                first: int | bool = seen.fetchone() is None
                if first:
                    conn.executemany(
                        "INSERT INTO events(key, seen_at) VALUES (?, ?)", [(k, now) for k in keys]
                    )
                    if work is not None:
                        first = _insert_work(conn, work, now)
            return first

        self._claims += 1
        if self._claims % PRUNE_EVERY == 0:  # a bot that runs for months keeps the table small
            self._run(lambda: self.db.execute("DELETE FROM events WHERE seen_at < ?", [now - EVENT_TTL_S]))
        return self._run(claim)

    def release_event(self, *keys: str, work_id: int | None = None) -> None:
        """Forget ``keys`` (and the inbox row ``work_id``): the work they named could not be queued, so a
        redelivery must get through."""
        keys = tuple(k for k in keys if k)
        with self._tx():
            if keys:
                placeholders = ",".join("?" * len(keys))
                self.db.execute(f"DELETE FROM events WHERE key IN ({placeholders})", keys)
            if work_id is not None:
                self.db.execute("DELETE FROM inbox WHERE id = ?", [work_id])

    # -- the inbox: accepted work not yet answered ---------------------------------------------------
    def add_work(self, work: Work) -> int:
        """Record work accepted without a delivery key (a ``/trace`` run); its id for :meth:`finish_work`."""
        return self._run(lambda: _insert_work(self.db.conn, work, time.time(), commit=True))

    def set_work_thread(self, work_id: int, thread: str) -> None:
        """Where the work's answer is being written (a ``/trace`` run's parent message)."""
        with self._tx():
            self.db.execute("UPDATE inbox SET thread = ? WHERE id = ?", [thread, work_id])

    def finish_work(self, work_id: int) -> None:
        """The answer (or an explained failure) is posted: the row goes, and the user's text with it."""
        with self._tx():
            self.db.execute("DELETE FROM inbox WHERE id = ?", [work_id])

    def adopt_work(self, owner: str, orphaned: Callable[[str, float], bool]) -> list[Work]:
        """Take over the rows whose owner ``orphaned(owner, created_at)`` says is gone, in one transaction:
        two processes starting at once cannot both take a row (the second sees the first alive)."""

        def adopt() -> list[Work]:
            with _write_locked(self.db.conn) as conn:
                rows = conn.execute(
                    "SELECT id, kind, payload, owner, thread, created_at FROM inbox WHERE owner != ? ORDER BY id",
                    [owner],
                ).fetchall()
                work: list[Work] = []
                unreadable: list[int] = []
                for id_, kind, payload, old, thread, at in rows:
                    try:
                        if orphaned(old, at):
                            work.append(Work(kind, _payload(payload), owner, id=id_, thread=thread, created_at=at))
                    except (AttributeError, TypeError, ValueError):
                        unreadable.append(id_)
                # A row that cannot be read cannot be answered: it goes (logged by id, not by its content),
                # so it neither stops the others nor is taken over again at every start.
                conn.executemany("UPDATE inbox SET owner = ? WHERE id = ?", [(owner, w.id) for w in work])
                conn.executemany("DELETE FROM inbox WHERE id = ?", [(id_,) for id_ in unreadable])
            for id_ in unreadable:
                log.error("dropped inbox row %s left by a stopped process: its owner, age or payload cannot be read", id_)
            return work

        return self._run(adopt)

    # -- diagnoses -----------------------------------------------------------------------------------
    def record_diagnosis(
        self,
        *,
        channel: str,
        matches: list[Match],
        confident: bool,
        source: str,
        thread_ts: str | None = None,
        message_ts: str | None = None,
        user: str | None = None,
        reply_ts: str | None = None,
        text: str | None = None,
        scrub: Callable[[str], str] | None = None,
    ) -> int:
        """``text``: what was answered, already scrubbed (:func:`tracebot.secrets.for_keeping`). Every string of
        ``matches`` (the matched line, the values read off it) is scrubbed here with ``scrub`` (the service's
        scrubber; the process's own when not given): they are the user's text, kept for good.

        One message has one diagnosis: a message answered again (an edit that changes its answer, a retry
        after Slack was down, the shortcut run on it once more) updates its row, keeping the row's id (the
        answer's buttons carry it), its time and, unless given, its answer's ts; the stats counted it once
        per answer before. Returns the row's id."""
        kept = map_strings([m.to_dict() for m in matches], scrub or Scrubber.for_process().text)
        row = {
            "channel": channel,
            "thread_ts": thread_ts,
            "message_ts": message_ts,
            "user": user,
            "source": source,
            "entry_ids": json.dumps([m.entry_id for m in matches]),
            "scores": json.dumps([round(m.score, 1) for m in matches]),
            "matches": json.dumps(kept),
            "confident": int(confident),
            "reply_ts": reply_ts,
            "text": text,
            "created_at": time.time(),
        }
        if message_ts is None:
            return self._run(lambda: int(self.db["diagnoses"].insert(row).last_pk))

        def upsert() -> int:
            with _write_locked(self.db.conn) as conn:
                found = conn.execute(
                    "SELECT id FROM diagnoses WHERE channel = ? AND message_ts = ? ORDER BY id DESC LIMIT 1",
                    [channel, message_ts],
                ).fetchone()
                if found is None:
                    names = ", ".join(row)
                    cur = conn.execute(f"INSERT INTO diagnoses ({names}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
                    return int(cur.lastrowid or 0)
                changed = {k: v for k, v in row.items() if k != "created_at" and (k != "reply_ts" or v is not None)}
                conn.execute(
                    f"UPDATE diagnoses SET {', '.join(f'{k} = ?' for k in changed)} WHERE id = ?",
                    [*changed.values(), found[0]],
                )
                return int(found[0])

        return self._run(upsert)

    def set_reply_ts(self, diagnosis_id: int, reply_ts: str) -> None:
        self._run(lambda: self.db["diagnoses"].update(diagnosis_id, {"reply_ts": reply_ts}))

    def diagnosis(self, diagnosis_id: int) -> DiagnosisRecord | None:
        rows = self.query("SELECT * FROM diagnoses WHERE id = ?", [diagnosis_id])
        return _to_record(rows[0]) if rows else None

    def earlier_answer(
        self, channel: str, thread_ts: str, entry_id: str, within_s: float
    ) -> DiagnosisRecord | None:
        """The latest answer in this thread whose best match was ``entry_id``, if recent enough."""
        rows = self.query(
            "SELECT * FROM diagnoses WHERE channel = ? AND thread_ts = ? AND reply_ts IS NOT NULL"
            " AND json_extract(entry_ids, '$[0]') = ? AND created_at >= ? ORDER BY id DESC LIMIT 1",
            [channel, thread_ts, entry_id, time.time() - within_s],
        )
        return _to_record(rows[0]) if rows else None

    def answer_to(self, channel: str, message_ts: str) -> DiagnosisRecord | None:
        """The latest posted answer to the message ``message_ts`` in ``channel`` (an edited message's)."""
        rows = self.query(
            "SELECT * FROM diagnoses WHERE channel = ? AND message_ts = ? AND reply_ts IS NOT NULL ORDER BY id DESC LIMIT 1",
            [channel, message_ts],
        )
        return _to_record(rows[0]) if rows else None

    def recent_diagnoses(self, channel: str | None = None, limit: int = 10) -> list[DiagnosisRecord]:
        where, params = ("WHERE channel = ?", [channel]) if channel else ("", [])
        rows = self.query(f"SELECT * FROM diagnoses {where} ORDER BY id DESC LIMIT ?", [*params, limit])
        return [_to_record(r) for r in rows]

    def count(self, table: str) -> int:
        return self._run(lambda: self.db[table].count)

    # -- feedback ------------------------------------------------------------------------------------
    def record_feedback(self, *, diagnosis_id: int | None, entry_id: str, user: str, helpful: bool) -> int:
        row = {
            "diagnosis_id": diagnosis_id,
            "entry_id": entry_id,
            "user": user,
            "helpful": int(helpful),
            "created_at": time.time(),
        }

        def vote() -> int:
            # One vote per person per answer: clicking again (or changing one's mind) replaces it.
            if diagnosis_id is not None:
                self.db.execute(
                    "DELETE FROM feedback WHERE diagnosis_id = ? AND entry_id = ? AND user = ?",
                    [diagnosis_id, entry_id, user],
                )
                answered = self.db.execute("SELECT text FROM diagnoses WHERE id = ?", [diagnosis_id]).fetchone()
                row["text"] = answered[0] if answered else None
            return int(self.db["feedback"].insert(row).last_pk)

        with self._tx():
            return vote()

    # -- unanswered errors ---------------------------------------------------------------------------
    def record_unanswered(
        self, *, channel: str, signature: str | None, exception: str | None, excerpt: str
    ) -> int:
        """An error pasted that got no confident answer; ``excerpt`` already scrubbed."""
        row = {
            "channel": channel,
            "signature": signature,
            "exception": exception,
            "excerpt": excerpt,
            "created_at": time.time(),
        }
        return self._run(lambda: int(self.db["unanswered"].insert(row).last_pk))

    # -- channel settings ----------------------------------------------------------------------------
    def channel_settings(self, channel: str) -> ChannelSettings:
        rows = self.query("SELECT * FROM channel_settings WHERE channel = ?", [channel])
        if not rows:
            return ChannelSettings(channel)
        r = rows[0]
        return ChannelSettings(channel, bool(r["auto_reply"]), r["threshold"], r["updated_by"])

    def update_channel_settings(
        self,
        channel: str,
        *,
        updated_by: str,
        auto_reply: bool | None = None,
        threshold: float | None = None,
    ) -> ChannelSettings:
        def update() -> None:
            current = self.channel_settings(channel)
            self.db["channel_settings"].upsert(
                {
                    "channel": channel,
                    "auto_reply": int(current.auto_reply if auto_reply is None else auto_reply),
                    "threshold": current.threshold if threshold is None else threshold,
                    "updated_by": updated_by,
                    "updated_at": time.time(),
                },
                pk="channel",
            )

        self._run(update)
        return self.channel_settings(channel)

    # -- trace runs ----------------------------------------------------------------------------------
    def start_trace_run(
        self, *, command: str, args: list[str], dedupe_key: str | None, user: str | None, channel: str
    ) -> int:
        row = {
            "command": command,
            "args": json.dumps(args),
            "dedupe_key": dedupe_key,
            "user": user,
            "channel": channel,
            "status": "running",
            "started_at": time.time(),
        }
        return self._run(lambda: int(self.db["trace_runs"].insert(row).last_pk))

    def update_trace_run(self, run_id: int, **fields: Any) -> None:
        if fields.get("status") not in (None, "running"):
            fields.setdefault("finished_at", time.time())
        self._run(lambda: self.db["trace_runs"].update(run_id, fields))

    def trace_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM trace_runs ORDER BY id DESC LIMIT ?", [limit])

    # -- audit ---------------------------------------------------------------------------------------
    def record_audit(
        self, *, user: str | None, channel: str | None, via: str, command: str, args: str, outcome: str
    ) -> int:
        """One command request; ``args`` already scrubbed of secrets."""
        row = {"at": time.time(), "user": user, "channel": channel, "via": via, "command": command,
               "args": args[:AUDIT_ARGS_CHARS], "outcome": outcome}
        return self._run(lambda: int(self.db["audit"].insert(row).last_pk))

    def audit(
        self, *, limit: int = 50, user: str | None = None, channel: str | None = None
    ) -> list[dict[str, Any]]:
        """Command requests, newest first, optionally of one user or in one channel."""
        where, params = [], []
        for column, value in (("user", user), ("channel", channel)):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        sql = "SELECT * FROM audit" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC LIMIT ?"
        return self.query(sql, [*params, limit])

    def query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        return self._run(lambda: list(self.db.query(sql, params)))


_MATCH_FIELDS = {f.name for f in fields(Match)}


def _match(data: dict[str, Any]) -> Match:
    """A stored Match; fields added or dropped since it was stored don't make old rows unreadable."""
    known = {k: v for k, v in data.items() if k in _MATCH_FIELDS}
    known["sources"] = [Source(**s) for s in known.get("sources") or [] if isinstance(s, dict)]
    return Match(**known)


def _to_record(row: dict[str, Any]) -> DiagnosisRecord:
    return DiagnosisRecord(
        id=row["id"],
        channel=row["channel"],
        thread_ts=row["thread_ts"],
        message_ts=row["message_ts"],
        user=row["user"],
        source=row["source"],
        matches=[_match(m) for m in json.loads(row["matches"] or "[]")],
        confident=bool(row["confident"]),
        reply_ts=row["reply_ts"],
        created_at=row["created_at"],
    )
