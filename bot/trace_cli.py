"""``tracebot trace job 123 [--json] [--out DIR]``: any /trace plugin command, run from a terminal.

The same plugin host and the same :class:`Result` as in Slack, rendered as text (``bot/render/text.py``)
or JSON. The caller is the local unix user; root (or a user listed under ``cli: {admins: [...]}`` in
TRACEBOT_CONFIG) is an admin.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import sys
from pathlib import Path
from typing import Any

from bot.config import Config
from bot.plugin_api import Caller, CommandContext
from bot.plugin_host import default_host
from bot.result import Result

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_subcommands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "trace", help="run a /trace command here: trace job 123, trace pid 4242, trace sagemaker NAME",
        description="Run a /trace plugin command from the terminal. `tracebot trace help` lists them.")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--out", metavar="DIR", help="write attachments (e.g. ranks.png) into DIR")
    p.add_argument("words", nargs=argparse.REMAINDER, help="the command and its arguments")
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    words, as_json, out_dir = _own_options(list(args.words), args.json, args.out)
    config = Config.from_env()
    matcher, kb, kb_note = _load_matcher(config)
    if kb_note:
        print(f"note: {kb_note}", file=sys.stderr)
    ctx = CommandContext(caller=local_caller(config), config=config, matcher=matcher, progress=_progress_printer())
    name = words[0] if words else "help"
    result = default_host().run_command(name, ctx, words[1:])
    if kb_note:
        result.data.setdefault("notes", []).append(kb_note)
    written = _write_attachments(result, out_dir) if out_dir else []
    if as_json:
        payload = result.to_dict()
        for entry, path in zip(payload["attachments"], written, strict=False):
            entry["path"] = str(path)
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(_render_text(result, kb))
        for path in written:
            print(f"wrote {path}")
        if result.attachments and not out_dir:
            print("(use --out DIR to save the attachments)")
    if result.status != "error":
        return EXIT_OK
    return EXIT_USAGE if result.data.get("error") == "usage" else EXIT_FAILED


def _own_options(words: list[str], as_json: bool, out: str | None) -> tuple[list[str], bool, Path | None]:
    """``--json`` and ``--out DIR`` may also follow the command words (``trace job 123 --json``)."""
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--json":
            as_json = True
        elif word == "--out" and i + 1 < len(words):
            out, i = words[i + 1], i + 1
        elif word.startswith("--out="):
            out = word.split("=", 1)[1]
        else:
            rest.append(word)
        i += 1
    return rest, as_json, Path(out) if out else None


def local_caller(config: Config) -> Caller:
    uid = os.getuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    cli = config.extra.get("cli") or {}
    admins = {str(a) for a in cli.get("admins", []) or []} if isinstance(cli, dict) else set()
    return Caller(slack_user=None, cluster_user=user, is_admin=uid == 0 or user in admins)


def _load_matcher(config: Config) -> tuple[Any, Any, str | None]:
    """The bundled knowledge base's matcher; without one, plugins still run and a note says so."""
    try:
        from bot.kb.loader import load_knowledge_base
        from bot.matcher import Matcher

        kb, _errors = load_knowledge_base(config.knowledge_dir)
    except Exception as exc:  # a broken KB must not stop an admin from tracing a hung job
        return None, None, f"knowledge base unavailable ({type(exc).__name__}: {exc}); no entries matched"
    if not kb.entries:
        return None, None, f"no knowledge entries in {config.knowledge_dir}; no entries matched"
    return Matcher(kb, threshold=config.confidence_threshold), kb, None


def _progress_printer() -> Any:
    if not sys.stderr.isatty():
        return lambda _msg: None
    return lambda msg: print(f"… {msg}", file=sys.stderr, flush=True)


def _write_attachments(result: Result, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for attachment in result.attachments:
        path = out_dir / Path(attachment.filename).name  # a plugin's file name never leaves DIR
        path.write_bytes(attachment.content)
        written.append(path)
    return written


def _render_text(result: Result, kb: Any) -> str:
    from bot.render.text import render_result

    return render_result(result, kb)
