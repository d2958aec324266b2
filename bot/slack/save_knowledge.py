"""Save as knowledge: a message shortcut on any message of a thread drafts a knowledge entry from it.

The shortcut opens a modal listing the thread's replies (``conversations.replies``); the reply the user
picks is the fix, the thread's root message (or its attached log) is the error. On submission the draft
is made, linted and compared by :mod:`tracebot.authoring.from_thread`, and posted in the thread as a
YAML file with the accuracy delta. Everything sent, the modal included, passes the service's scrubbing
outbox. tracebot reads only threads of channels it is a member of, like every other answer.
"""

from __future__ import annotations

import json
import logging
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tracebot.authoring.compare import CompareError
from tracebot.authoring.draft import DraftError
from tracebot.authoring.evaluate import CaseError
from tracebot.authoring.from_thread import ThreadMessage, fix_choices, one_line, save_configured, thread_error
from tracebot.authoring.log_window import NotText, error_window
from tracebot.matcher.signals import error_signature
from tracebot.render.slack import code, escape, section
from tracebot.service.attachments import download_name, is_readable, located, logs_in
from tracebot.service.inbound import Inbound
from tracebot.service.outbox import DownloadRefused, too_large
from tracebot.service.posting import attach
from tracebot.service.service import Service
from tracebot.slack.inbound import files_of

log = logging.getLogger(__name__)
SHORTCUT_ID = "tracebot_save_knowledge"
VIEW_ID = "tracebot_save_knowledge_modal"
FIX_BLOCK, FIX_ACTION = "fix", "fix_reply"
MAX_OPTIONS = 100  # Slack's limit for a static_select
THREAD_PAGE = 200  # messages per conversations.replies call (Slack's advice)
MAX_THREAD_MESSAGES = 2000  # read of one thread at most (10 pages): said in the modal when a thread is longer
NOT_A_MEMBER = {"not_in_channel", "channel_not_found"}
# A draft retrains the ranking model and answers every entry's examples: seconds of a core and a model's
# memory, on the channel's lane, where the channel's answers wait behind it. So one draft at a time, and each
# person at most MAX_DRAFTS_PER_USER of them within DRAFT_WINDOW_S.
MAX_DRAFTS_PER_USER = 3
DRAFT_WINDOW_S = 600.0


class Drafting:
    """Who may start a draft now (:meth:`begin`), for one running service."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._busy = False
        self._started: dict[str, list[float]] = {}  # per user, when their drafts in the window began
        self._clock = clock

    def begin(self, user: str) -> str:
        """"" when ``user`` may draft now (then :meth:`end` must follow), else why not, in words."""
        with self._lock:
            now = self._clock()
            recent = [t for t in self._started.get(user, []) if now - t < DRAFT_WINDOW_S]
            self._started[user] = recent
            if self._busy:
                return ("I'm drafting another entry from a thread right now (a draft retrains the ranking "
                        "model, so one at a time). Try again in a minute.")
            if len(recent) >= MAX_DRAFTS_PER_USER:
                wait = max(1, round((recent[0] + DRAFT_WINDOW_S - now) / 60))
                threads = f"{len(recent)} thread{'s' if len(recent) != 1 else ''}"
                return (f"You saved {threads} as knowledge in the last {DRAFT_WINDOW_S / 60:.0f} "
                        f"minutes, the most one person may. Try again in {wait} minute{'s' if wait > 1 else ''}.")
            self._busy = True
            recent.append(now)
            return ""

    def end(self) -> None:
        with self._lock:
            self._busy = False


_drafting: WeakKeyDictionary[Service, Drafting] = WeakKeyDictionary()
_drafting_lock = threading.Lock()


def drafting(service: Service) -> Drafting:
    """``service``'s :class:`Drafting` (made on first use)."""
    with _drafting_lock:
        return _drafting.setdefault(service, Drafting())


@dataclass
class Thread:
    messages: list[ThreadMessage]
    cut: bool = False  # longer than MAX_THREAD_MESSAGES: only the first ones were read


def read_thread(client: WebClient, channel: str, ts: str) -> Thread:
    """The thread's messages as their authors wrote them (:meth:`ThreadMessage.from_slack` undoes Slack's
    markup), page after page (Slack's cursor): reading only the first page missed the fix of a long
    thread. At most MAX_THREAD_MESSAGES, and the :class:`Thread` says when there were more."""
    seen: set[str] = set()
    messages: list[ThreadMessage] = []
    cursor = None
    while True:
        resp = client.conversations_replies(channel=channel, ts=ts, limit=THREAD_PAGE, cursor=cursor)
        for m in resp.get("messages") or []:
            key = str(m.get("ts"))
            if key not in seen:  # a page may repeat the thread's root
                seen.add(key)
                messages.append(ThreadMessage.from_slack(m))
        cursor = (resp.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return Thread(messages)
        if len(messages) >= MAX_THREAD_MESSAGES:
            return Thread(messages[:MAX_THREAD_MESSAGES], cut=True)


def _modal(title: str, blocks: list[dict[str, Any]], metadata: str = "", submit: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": VIEW_ID,
        "title": {"type": "plain_text", "text": title},
        "close": {"type": "plain_text", "text": "Close"},
        "blocks": blocks,
        "private_metadata": metadata,
    }
    if submit:
        view["submit"] = {"type": "plain_text", "text": "Save draft"}
    return view


def choose_fix_view(channel: str, thread_ts: str, thread: Thread) -> dict[str, Any]:
    messages = thread.messages
    error = thread_error(messages)
    replies = fix_choices(messages)[-MAX_OPTIONS:]
    shown = [section("*The error*\n" + code(one_line(error, 600)))]  # quoted in one code block of our own
    if thread.cut:
        shown.append(section(
            f"This thread has more than {MAX_THREAD_MESSAGES:,} messages, the most I read of one: I read the "
            f"first {MAX_THREAD_MESSAGES:,}, so a reply after them is not listed."
        ))
    if not replies:
        return _modal("Save as knowledge", [*shown, section("This thread has no replies to pick as the fix yet.")])
    options = [
        {"text": {"type": "plain_text", "text": one_line(m.text, 75)}, "value": m.ts} for m in replies
    ]
    pick = {
        "type": "input",
        "block_id": FIX_BLOCK,
        "label": {"type": "plain_text", "text": "Which reply fixed it?"},
        "element": {"type": "static_select", "action_id": FIX_ACTION, "options": options},
    }
    note = section(
        "tracebot drafts an entry (signatures masked, secrets and names removed), checks it with "
        "`kb lint` and `kb eval --compare`, and posts the YAML in this thread."
    )
    metadata = json.dumps({"channel": channel, "thread_ts": thread_ts})
    return _modal("Save as knowledge", [*shown, pick, note], metadata, submit=True)


def open_modal(service: Service, client: WebClient, trigger_id: str, channel: str, message: dict[str, Any]) -> None:
    thread_ts = message.get("thread_ts") or message["ts"]
    try:
        view = choose_fix_view(channel, thread_ts, read_thread(client, channel, thread_ts))
    except SlackApiError as exc:
        if exc.response.get("error") not in NOT_A_MEMBER:
            raise
        view = _modal(
            "Save as knowledge",
            [section(f"I'm not in <#{channel}>, so I can't read this thread. `/invite @tracebot` there first.")],
        )
    client.views_open(trigger_id=trigger_id, view=service.outbox.data(view))


def chosen(view: dict[str, Any]) -> tuple[str, str, str | None]:
    """(channel, thread_ts, the picked reply's ts) from a submitted modal."""
    meta = json.loads(view.get("private_metadata") or "{}")
    value = (((view.get("state") or {}).get("values") or {}).get(FIX_BLOCK) or {}).get(FIX_ACTION) or {}
    return meta["channel"], meta["thread_ts"], (value.get("selected_option") or {}).get("value")


def _attached_error(service: Service, root: ThreadMessage) -> tuple[str, list[str]]:
    """The part around the error lines of the root message's first attached log that has one, and why
    each file before it was not used. Only that window is kept: the log is streamed, never held whole."""
    limit = service.config.max_file_bytes
    notes: list[str] = []
    # A log shared from another organisation (Slack Connect) comes by its id alone: looked up as answers do.
    shared = located(service.outbox, Inbound(channel="", user=None, ts="", files=files_of({"files": root.files})))
    for f in shared.files:
        if f.unreadable:
            notes.append(f"{f.name}: could not be read ({f.unreadable})")
            continue
        if not is_readable(f) or not f.url:
            notes.append(f"{f.name}: not a text or log file")
            continue
        if f.size is not None and f.size > limit:
            notes.append(f"{f.name}: {too_large(limit)}, the most tracebot reads of an attachment")
            continue
        with tempfile.TemporaryDirectory(prefix="tracebot-thread-file-") as tmp:
            dest = Path(tmp) / download_name(f)
            deadline = time.monotonic() + service.config.message_budget_s
            try:
                service.outbox.download(f.url, dest, limit)
            except DownloadRefused as exc:
                notes.append(f"{f.name}: {exc}")
                continue
            except OSError as exc:
                notes.append(f"{f.name}: could not be read ({exc.strerror or exc})")
                continue
            # a .xz, .bz2 or .zip is unpacked as an answer unpacks it; each log in it is tried in turn
            out = logs_in(f.name, dest, Path(tmp), max_bytes=service.config.max_inflated_bytes, deadline=deadline)
            notes += out.notes
            for name, path in out.files:
                window = _window(path, name, notes, service.config.max_inflated_bytes, deadline)
                if window:
                    return window, notes
    return "", notes


def _window(path: Path, name: str, notes: list[str], max_inflated: int, deadline: float) -> str:
    """The error window of one log (``name`` in notes), or "" with a note saying why there is none."""
    try:
        window = error_window(path, max_inflated=max_inflated, deadline=deadline)
    except NotText as exc:
        notes.append(f"{name}: {exc}")
        return ""
    except OSError as exc:
        notes.append(f"{name}: could not be read ({exc.strerror or exc})")
        return ""
    if error_signature(window) is None:
        notes.append(f"{name}: no error line found in it")
        return ""
    return window


def save(service: Service, client: WebClient, *, channel: str, thread_ts: str, fix_ts: str, user: str) -> None:
    messages = read_thread(client, channel, thread_ts).messages
    error = thread_error(messages)
    file_notes: list[str] = []
    if messages and error_signature(error) is None and messages[0].files:
        attached, file_notes = _attached_error(service, messages[0])
        if not attached and file_notes:  # the error was to come from a file: say why none could be used
            text = ":x: I could not read the attached log, so there is no error to draft from: " + "; ".join(
                escape(note) for note in file_notes)
            service.outbox.ephemeral(channel, user, text, None, thread_ts)
            return
        error = attached or error
    fix = next((m.text for m in messages if m.ts == fix_ts), "")
    refused = drafting(service).begin(user)
    if refused:
        service.outbox.ephemeral(channel, user, f":hourglass: {refused}", None, thread_ts)
        return
    try:
        saved = save_configured(
            service.config,
            kb_root=service.config.knowledge_dir,
            error=error,
            fix=fix,
            permalink=service.outbox.permalink(channel, thread_ts),
            scrubber=service.outbox.scrubber,
        )
    except (DraftError, CompareError, CaseError, OSError) as exc:
        log.warning("saving a thread as knowledge failed: %s", exc)
        text = f":x: I could not save this thread as knowledge: {exc}"
        service.outbox.ephemeral(channel, user, text, None, thread_ts)
        return
    finally:
        drafting(service).end()
    saved.notes += [f"Not used: {note}" for note in file_notes]
    attach(
        service.outbox, channel, thread_ts, f"{saved.entry_id}.yaml", saved.yaml.encode("utf-8"),
        f"Draft entry {saved.entry_id}",
    )
    summary = saved.summary()
    service.outbox.post(channel, summary, [section(escape(summary))], thread_ts=thread_ts)
