"""``tracebot console | serve | run | stats``: ways to run the bot, and what it learned.

``run`` picks the transport from the environment: Socket Mode when ``SLACK_APP_TOKEN`` is set, HTTP when
``SLACK_SIGNING_SECRET`` is, else the console (so the README's one command works with no Slack at all).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from bot.config import Config

log = logging.getLogger("tracebot")
KB_POLL_S = 2.0


def _config(args: argparse.Namespace) -> Config:
    try:
        cfg = Config.from_env()
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from exc
    if getattr(args, "knowledge", None):
        cfg.knowledge_dir = Path(args.knowledge)
    if getattr(args, "db", None):
        cfg.db_path = Path(args.db)
    return cfg


def _logging() -> None:
    logging.basicConfig(
        level=os.environ.get("TRACEBOT_LOG_LEVEL", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def cmd_console(args: argparse.Namespace) -> int:
    from bot.console import ConsoleOutbox, run_console
    from bot.slack.wiring import build_tracebot
    from bot.store import Store, StoreError

    cfg = _config(args)
    cfg.admins = {*cfg.admins, args.user}  # the person at the terminal runs their own console
    outbox = ConsoleOutbox(sys.stdout)
    try:
        store = Store(cfg.db_path)
        tracebot = build_tracebot(cfg, outbox, store=store)
    except (StoreError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tracebot.knowledge.watch(KB_POLL_S)
    try:
        return run_console(tracebot, outbox, channel=args.channel, user=args.user)
    finally:
        tracebot.shutdown(wait=False)


def _require(cfg: Config, *names: str) -> None:
    missing = [n for n in names if not getattr(cfg, n.lower())]
    if missing:
        raise SystemExit(f"error: set {', '.join(missing)} in the environment (README: Installing in Slack)")


def _build_app(cfg: Config) -> tuple[Any, Any]:
    from slack_sdk.errors import SlackApiError

    from bot.slack.app import build_app
    from bot.store import StoreError

    try:
        app, tracebot = build_app(cfg)
    except (StoreError, RuntimeError, ValueError) as exc:  # database, knowledge base, settings
        raise SystemExit(f"error: {exc}") from exc
    except (SlackApiError, OSError) as exc:  # auth.test at start: bad token, or Slack unreachable
        raise SystemExit(f"error: cannot start the Slack app (auth.test failed): {exc}") from exc
    tracebot.knowledge.watch(KB_POLL_S)
    return app, tracebot


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.slack.http import EVENTS_PATH, make_http_server

    _logging()
    cfg = _config(args)
    _require(cfg, "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET")
    app, _ = _build_app(cfg)
    server = make_http_server(app, args.host, args.port)
    log.info("tracebot listening on http://%s:%d%s", args.host, server.server_address[1], EVENTS_PATH)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def cmd_socket(cfg: Config) -> int:
    from bot.slack.socket_mode import socket_mode_handler

    _logging()
    _require(cfg, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN")
    app, _ = _build_app(cfg)
    log.info("tracebot connecting in Socket Mode")
    socket_mode_handler(app, cfg).start()
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    cfg = _config(args)
    if cfg.slack_app_token:
        return cmd_socket(cfg)
    if cfg.slack_signing_secret:
        args.port = int(os.environ.get("PORT", "3000"))
        args.host = "0.0.0.0"  # noqa: S104 (a deployment listens on all interfaces)
        return cmd_serve(args)
    print(
        "No Slack credentials (SLACK_APP_TOKEN or SLACK_SIGNING_SECRET): starting the console.",
        file=sys.stderr,
    )
    args.user, args.channel = "U0CONSOLE", "C0CONSOLE"
    return cmd_console(args)


def cmd_stats(args: argparse.Namespace) -> int:
    from bot.store import Store, StoreError
    from bot.store.stats import entry_stats, not_this_feedback

    cfg = _config(args)
    try:
        store = Store(cfg.db_path)
        stats = entry_stats(store)
        rejected = not_this_feedback(store, limit=args.limit)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        rows = [dict(vars(s), helpful_rate=s.helpful_rate) for s in stats]
        print(json.dumps({"entries": rows, "not_this": rejected}, indent=2))
        return 0
    if not stats:
        print(f"No diagnoses recorded yet in {cfg.db_path}.")
        return 0
    print(f"{'entry':<40} {'matched':>7} {'helpful':>7} {'not this':>8} {'helpful rate':>12}")
    for s in stats:
        rate = f"{s.helpful_rate:.0%}" if s.helpful_rate is not None else "-"
        print(f"{s.entry_id:<40} {s.matched:>7} {s.helpful:>7} {s.not_this:>8} {rate:>12}")
    if rejected:
        print('\n"Not this" feedback (newest first): the entry matched, the user said it was wrong')
        for r in rejected:
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["created_at"]))
            print(
                f"  {when}  {r['entry_id']}  by {r['user']} in {r['channel']}\n      line: {r['line'][:200]}"
            )
    return 0


def add_subcommands(sub: Any) -> None:
    c = sub.add_parser(
        "console", help="the Slack bot in a terminal: paste errors, run /trace, see what it posts"
    )
    c.add_argument("--channel", default="C0CONSOLE")
    c.add_argument("--user", default="U0CONSOLE")
    c.add_argument(
        "--db", help="SQLite file (default: $TRACEBOT_DB or var/tracebot.sqlite3; :memory: for none)"
    )
    c.add_argument("--knowledge", help="knowledge directory (default: bundled, or $TRACEBOT_KNOWLEDGE)")
    c.set_defaults(func=cmd_console)

    s = sub.add_parser("serve", help="run the Slack app over HTTP (Events API, signatures verified)")
    s.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    s.add_argument("--host", default="0.0.0.0")  # noqa: S104
    s.set_defaults(func=cmd_serve)

    r = sub.add_parser(
        "run", help="Socket Mode if SLACK_APP_TOKEN, else HTTP if SLACK_SIGNING_SECRET, else console"
    )
    r.add_argument("--db", help=argparse.SUPPRESS)
    r.set_defaults(func=cmd_run)

    st = sub.add_parser(
        "stats", help="per entry: how often it matched, its helpful rate, and 'Not this' feedback"
    )
    st.add_argument("--db", help="SQLite file (default: $TRACEBOT_DB)")
    st.add_argument("--limit", type=int, default=50, help="how many 'Not this' items to list")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_stats)
