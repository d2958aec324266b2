"""``tracebot``: the command line, a thin layer over the library in the sqlite-utils manner.

``diagnose`` and ``kb`` call the matcher; ``kb lint|eval|new|import`` the authoring tools
(:mod:`tracebot.authoring.cli` adds its own subcommands); ``trace`` the same router as Slack's
``/trace``; ``console``, ``serve`` and ``run`` start the service; ``stats`` and ``audit`` read the store.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import pwd
import signal
import stat
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from tracebot.config import Config, threshold
from tracebot.matcher import ModelUnavailable
from tracebot.secrets import Scrubber, ScrubbingStream, install_log_filter

if TYPE_CHECKING:
    from tracebot.knowledge.loader import KnowledgeBase
    from tracebot.matcher import Matcher
    from tracebot.plugin_api import Caller
    from tracebot.result import Diagnosis

# Each command imports what it needs when it runs: `tracebot diagnose` on a paste must not pay for the
# service, the plugins or the Slack app (a cold start is part of every CI log classification).

MAX_STDIN_BYTES = 512 << 20
MAX_BATCH_BYTES = 512 << 20  # a --batch file, read whole before any case is answered


def _kb(args: argparse.Namespace, *, helper: bool = True) -> tuple[KnowledgeBase, Matcher]:
    """``helper``: a training helper process may be started (False: no text will need the model)."""
    from tracebot.matcher import load_matcher

    cfg = _config(args)
    if getattr(args, "threshold", None) is not None:
        cfg.confidence_threshold = args.threshold
    with _long_lived():
        kb, matcher, errors = load_matcher(cfg.knowledge_dir, cfg.confidence_threshold, helper=helper)
    if errors:
        print(f"warning: {len(errors)} knowledge-base problem(s); run `tracebot kb lint`", file=sys.stderr)
    if not kb.entries:
        raise SystemExit(f"error: no knowledge entries could be loaded from {cfg.knowledge_dir}")
    return kb, matcher


@contextlib.contextmanager
def _long_lived() -> Iterator[None]:
    """Load what the command keeps to its end (the knowledge base, the matcher: ~300,000 objects at 1,000
    entries) without the cyclic garbage collector, then set it aside from later collections (``gc.freeze``).
    Otherwise the collections met while loading and importing NumPy walk all of it, finding nothing to free
    (a warm start at 1,000 entries: 0.03-0.06 s of its CPU, one full collection half of it). Reference counting
    still frees what goes; collections resume for what the command makes afterwards."""
    import gc

    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal and the file is big."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.1:
            return
        self.last = now
        if total:
            frac = min(1.0, done / total)
            bar = "#" * int(frac * 30)
            sys.stderr.write(f"\r[{bar:<30}] {frac:4.0%} {done / 1e6:,.1f}/{total / 1e6:,.1f} MB")
        else:
            sys.stderr.write(f"\r{done / 1e6:,.1f} MB read")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\r" + " " * 60 + "\r")


def cmd_diagnose(args: argparse.Namespace) -> int:
    from tracebot.matcher.core import FULL_SCAN_CHARS
    from tracebot.matcher.scan import file_is_blank
    from tracebot.render.text import render_diagnosis

    given = Path(args.file) if args.file not in (None, "-") and not args.batch else None
    why = (_not_a_file(given) or _not_a_log(given)) if given is not None else None
    if why:  # said before loading the knowledge base (seconds at 1,000 entries with nothing cached)
        print(f"error: {given}: {why}", file=sys.stderr)
        return 2
    batch = _read_batch(Path(args.batch)) if args.batch else None
    if args.batch and batch is None:
        return 2
    # a file over FULL_SCAN_CHARS on disk (plain, or gzip that inflates to more) is streamed: the line
    # rules answer it, so no helper process imports the training code for a model nobody will read
    streamed = given is not None and given.is_file() and given.stat().st_size > FULL_SCAN_CHARS
    kb, matcher = _kb(args, helper=not streamed)
    if batch is not None:
        return _diagnose_batch(matcher, batch)
    progress = _Progress(sys.stderr.isatty())
    try:
        if args.file in (None, "-"):
            if sys.stdin.isatty():  # typed with no file, it would wait in silence, looking hung
                print("reading the error from the terminal: paste it, then press Ctrl-D on a line of its own "
                      "(or give a file: tracebot diagnose FILE)", file=sys.stderr)
            data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
            d = matcher.diagnose(data[:MAX_STDIN_BYTES]) if not _blank(data) else _nothing_to_read(matcher)
            if len(data) > MAX_STDIN_BYTES:  # in the answer (and --json), not only on stderr: read in part
                from tracebot.notes import note
                from tracebot.sizes import size_text

                d.truncated = True
                d.notes.append(note("read_limit", file="standard input", size=size_text(MAX_STDIN_BYTES)))
        else:
            path = Path(args.file)
            try:
                d = (_nothing_to_read(matcher) if file_is_blank(path) else
                     matcher.diagnose_file(path, progress=progress if path.stat().st_size > FULL_SCAN_CHARS else None))
            except OSError as exc:
                print(f"error: {path}: {exc.strerror or exc}", file=sys.stderr)
                return 2
    finally:
        progress.close()
    if args.json:
        print(json.dumps(d.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(render_diagnosis(d, show_all=args.all))
    return 0


BLANK = "the input is empty or blank: there is nothing to diagnose"


def _blank(data: bytes) -> bool:
    from tracebot.matcher.normalize import to_text

    return not to_text(data).strip()


def _nothing_to_read(matcher: Matcher) -> Diagnosis:
    from tracebot.result import Diagnosis

    return Diagnosis(threshold=matcher.threshold, notes=[BLANK])


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file, in words (None: it can be)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return str(exc.strerror or exc)
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if not stat.S_ISREG(mode):
        return "not a regular file (a FIFO, socket or device); only files are read"
    return None


def _not_a_log(path: Path) -> str | None:
    """Why ``path``, a regular file, is not diagnosed as a log (None: it is): a core dump, an archive or an
    image is byte noise whose stray words read as error lines. The attachments' test (:func:`file_is_text`)."""
    from tracebot.matcher.scan import file_is_text

    try:
        return None if file_is_text(path) else "not a text file (binary content); diagnose reads logs and pastes"
    except (OSError, EOFError, zlib.error):
        return None  # unreadable or damaged: the scan says how, with what it could read


def _read_batch(path: Path) -> list[dict[str, Any]] | None:
    """The cases of a ``--batch`` file, or None once every reason it cannot be read is printed (checked
    before the knowledge base is loaded: a typo is told at once)."""
    why = _not_a_file(path)
    try:
        data = b""
        if not why and path.stat().st_size <= MAX_BATCH_BYTES:
            with path.open("rb") as f:
                data = f.read(MAX_BATCH_BYTES + 1)  # (bounded too: a file still being written)
        if not why and (len(data) > MAX_BATCH_BYTES or path.stat().st_size > MAX_BATCH_BYTES):
            # read whole, a file given by mistake (a core, a disk image) took the memory: told by its size, unread
            why = f"larger than {MAX_BATCH_BYTES >> 20} MB; a --batch file is JSON lines of pasted texts (a log goes alone)"
        text = "" if why else data.decode("utf-8")
    except OSError as exc:
        why = str(exc.strerror or exc)
    except UnicodeDecodeError as exc:
        why = f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); --batch reads JSON lines"
    if why:
        print(f"error: {path}: {why}", file=sys.stderr)
        return None
    cases, bad = [], []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        case, problem = _batch_case(line)
        if case is None:
            bad.append(f"error: {path}:{no}: {problem}")
        else:
            cases.append(case)
    if bad:  # every bad line at once, and no answers: half a batch's answers look like a whole one
        print("\n".join(bad), file=sys.stderr)
        return None
    return cases


def _diagnose_batch(matcher: Matcher, cases: list[dict[str, Any]]) -> int:
    """One JSON line out per JSON line in: ``{"id", "matches": [{"id", "score", "score_shown", "confident"}],
    "first_failure", "silent_ranks"}`` (``first_failure`` null when the text shows no failure; ``score_shown`` is
    the score the other views print, never above the one listed before it)."""
    for case in cases:
        d = matcher.diagnose(str(case["text"]))
        shown = d.scores_shown
        out = {
            "id": case.get("id"),
            "matches": [{"id": m.entry_id, "score": m.score, "score_shown": shown[m.entry_id], "confident": m.confident}
                        for m in d.matches[:5]],
            "guesses_shown": d.guesses_shown,  # False: a chat line, whose reply asks for the error instead
            "first_failure": asdict(d.first_failure) if d.first_failure else None,
            "silent_ranks": d.silent_ranks,
        }
        print(json.dumps(out, ensure_ascii=False))
    return 0


def _batch_case(line: str) -> tuple[dict[str, Any] | None, str]:
    """One ``--batch`` line as a case, or None and what is wrong with it, in words."""
    try:
        case = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at column {exc.colno}); a line is {{\"id\": …, \"text\": …}}"
    if not isinstance(case, dict):
        kind = {list: "a JSON array", str: "a JSON string"}.get(type(case), "a JSON number or literal")
        return None, f"{kind}, not an object with 'text'"
    if "text" not in case:
        return None, "no 'text' in this object"
    return case, ""


def cmd_kb_lint(args: argparse.Namespace) -> int:
    from tracebot.authoring.lint import held_out_warnings, lint
    from tracebot.matcher import Matcher

    root = Path(args.knowledge) if args.knowledge else Config.from_env().knowledge_dir
    kb, problems = lint(root, examples=not args.no_examples)
    for p in problems:
        print(p)
    if not problems and not args.no_examples and not args.no_held_out and kb.entries:
        warnings = held_out_warnings(kb, Matcher(kb))
        for w in warnings:
            print(w)
        if warnings:
            print(f"{len(warnings)} example(s) win only when the model has seen them", file=sys.stderr)
    n_examples = sum(len(e.examples_match) + len(e.examples_no_match) for e in kb.entries)
    if problems:
        print(f"{len(problems)} problem(s) in {root} ({len(kb.entries)} entries loaded)", file=sys.stderr)
        return 1
    print(f"ok: {len(kb.entries)} entries, {n_examples} examples, {len(kb.silence)} silence texts checked")
    return 0


def cmd_kb_list(args: argparse.Namespace) -> int:
    kb, _ = _kb(args, helper=False)
    if args.json:
        rows = [{"id": e.id, "title": e.title, "role": e.role, "tags": e.tags} for e in kb.entries]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        width = max(len(e.id) for e in kb.entries)
        for e in sorted(kb.entries, key=lambda e: e.id):
            print(f"{e.id:<{width}}  {e.title}")
    return 0


def cmd_kb_show(args: argparse.Namespace) -> int:
    kb, _ = _kb(args, helper=False)
    e = kb.get(args.id)
    if e is None:
        print(f"error: no entry '{args.id}' (see `tracebot kb list`)", file=sys.stderr)
        return 2
    from tracebot.matcher import entry_match
    from tracebot.render.text import render_match

    if args.json:
        d = asdict(e)
        d["path"] = str(e.path)
        d.pop("lines")
        print(json.dumps(d, ensure_ascii=False, indent=2))
        return 0
    print(render_match(entry_match(e)))
    if e.cause:
        print(f"\n   cause: {e.cause}")
    print(f"   file: {e.path}")
    return 0


def cmd_kb_search(args: argparse.Namespace) -> int:
    kb, matcher = _kb(args, helper=False)
    query = " ".join(args.text)
    hits = matcher.search(query, limit=args.limit)
    if args.json:
        print(json.dumps([m.to_dict() for m in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no entry resembles that")
    for m in hits:
        print(f"{m.entry_id:<40} {m.score:5.1f}  {m.title}")
    return 0


def cmd_kb_eval(args: argparse.Namespace) -> int:
    from tracebot.authoring.evaluate import (
        CaseError,
        cross_validate,
        evaluate,
        format_report,
        load_cases,
        unknown_expected,
    )

    try:  # before the knowledge base is loaded: a mistyped path is told at once
        cases = load_cases(Path(args.cases))
    except CaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    kb, matcher = _kb(args)
    for entry_id, named_by in unknown_expected(cases, {e.id for e in kb.entries}).items():
        shown = ", ".join(named_by[:3]) + (f" and {len(named_by) - 3} more" if len(named_by) > 3 else "")
        print(f"warning: {args.cases}: no entry '{entry_id}' in the knowledge base (named by {shown}): "
              "a case expecting it can only miss", file=sys.stderr)
    try:
        if args.cv:
            if matcher.model is None:
                print("error: --cv needs the ranking model (TRACEBOT_MODEL is 0, or the KB is too small)", file=sys.stderr)
                return 2
            rep = cross_validate(matcher, cases, args.cv, train_on_cases=not args.cv_kb_only, seed=args.cv_seed)
        else:
            rep = evaluate(matcher, cases)
    except CaseError as exc:  # a log fixture that cannot be read, or is too large
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(rep.to_dict(), ensure_ascii=False, indent=2) if args.json else format_report(rep))
    failed = (args.min_top1 is not None and rep.top1 < args.min_top1) or (
        args.max_fp is not None and rep.false_positive_rate > args.max_fp
    )
    return 1 if failed else 0


def _threshold_arg(raw: str) -> float:
    """``--threshold``: on the scores' 0-100 scale, as ``TRACEBOT_THRESHOLD`` (500 would make nothing confident)."""
    try:
        return threshold(raw, "the threshold")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracebot", description="Diagnose multi-GPU training failures.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("diagnose", help="say which known problems a log or pasted text shows")
    d.add_argument("file", nargs="?", help="log file (plain or .gz); '-' or nothing reads standard input")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.add_argument("--all", action="store_true", help="show non-confident matches in full too")
    d.add_argument("--batch", metavar="CASES.jsonl", help='one {"id", "text"} per line in, one result per line out')
    d.add_argument("--threshold", type=_threshold_arg, help="confidence threshold (default: $TRACEBOT_THRESHOLD or 75)")
    d.add_argument("--knowledge", help="knowledge directory (default: the bundled one, or $TRACEBOT_KNOWLEDGE)")
    # exits_fast: the answer printed, the process ends without the interpreter's teardown (run, exit_now)
    d.set_defaults(func=cmd_diagnose, exits_fast=True)

    kb = sub.add_parser("kb", help="work with the knowledge base")
    kbs = kb.add_subparsers(dest="kb_command", metavar="KB_COMMAND", required=True)

    def kbcmd(name: str, fn: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        sp = kbs.add_parser(name, help=help_)
        sp.add_argument("--knowledge", help="knowledge directory (default: bundled)")
        sp.set_defaults(func=fn)
        return sp

    lint_p = kbcmd("lint", cmd_kb_lint, "check every entry: schema, patterns, examples")
    lint_p.add_argument("--no-examples", action="store_true", help="skip running the examples")
    lint_p.add_argument(
        "--no-held-out", action="store_true", help="skip answering each example with a model trained without it"
    )
    list_p = kbcmd("list", cmd_kb_list, "list entries")
    list_p.add_argument("--json", action="store_true")
    show_p = kbcmd("show", cmd_kb_show, "show one entry")
    show_p.add_argument("id")
    show_p.add_argument("--json", action="store_true")
    search_p = kbcmd("search", cmd_kb_search, "find entries by words")
    search_p.add_argument("text", nargs="+")
    search_p.add_argument("--limit", type=int, default=5)
    search_p.add_argument("--json", action="store_true")
    eval_p = kbcmd("eval", cmd_kb_eval, "accuracy on a labelled corpus (JSONL)")
    # no default: a path relative to wherever the command is run names no corpus in particular
    eval_p.add_argument("cases", metavar="CASES.jsonl", help="labelled cases, one JSON object a line (tests/corpus/cases.jsonl)")
    eval_p.add_argument("--json", action="store_true")
    eval_p.add_argument("--min-top1", type=float, help="exit 1 when top-1 is below this fraction")
    eval_p.add_argument("--max-fp", type=float, help="exit 1 when the false-positive rate is above this fraction")
    eval_p.add_argument("--threshold", type=_threshold_arg, help="confidence threshold (0-100)")
    eval_p.add_argument(
        "--cv", type=int, metavar="K", help="cross-validate: retrain the model K times, each fold (by source) left out"
    )
    eval_p.add_argument(
        "--cv-kb-only", action="store_true", help="with --cv: train on the knowledge base only, not the other folds"
    )
    eval_p.add_argument(
        "--cv-seed",
        type=int,
        default=None,
        metavar="N",
        help="with --cv: shuffle the sources into folds with this seed (default 11); a change that holds at "
        "several seeds is a change, one that moves at one seed only may be a few cases flipping",
    )

    # --- subcommands contributed by other modules (one line each) ---
    _extend(sub, kbs, eval_p)
    return p


def _extend(sub: Any, kbs: Any, eval_p: argparse.ArgumentParser) -> None:
    """Each feature module adds its own subcommands (imported here so ``tracebot --help`` stays quick)."""
    from tracebot.authoring.cli import add_kb_subcommands

    add_kb_subcommands(kbs, eval_p)  # kb new / kb import / kb eval --compare
    add_trace_subcommands(sub)  # trace job|gpus|pid|sagemaker
    add_bot_subcommands(sub)  # run / console / serve / stats


# ---- the bot: console, serve, run, stats ----

log = logging.getLogger("tracebot")
KB_POLL_S = 2.0


class _Stop(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so both stop the same way."""


def _stop_on_sigterm() -> None:
    def stop(_signum: int, _frame: object) -> None:
        raise _Stop

    signal.signal(signal.SIGTERM, stop)


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


def configure_logging(cfg: Config, stream: TextIO | None = None) -> logging.Handler:
    """tracebot's log handler on the root logger, and the secret filter on every root handler: a log line
    at any level (botocore's DEBUG request dumps included) leaves scrubbed."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "tracebot", False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.tracebot = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(cfg.log_level)
    install_log_filter(Scrubber.for_process(cfg.secrets()), root)
    return handler


def cmd_console(args: argparse.Namespace) -> int:
    from tracebot.console import ConsoleOutbox, run_console, write_html
    from tracebot.service.build import build_service
    from tracebot.store import Store, StoreError

    cfg = _config(args)
    cfg.admins = {*cfg.admins, args.user}  # the person at the terminal runs their own console
    page = Path(args.html) if getattr(args, "html", None) else None
    why = _not_writable(page) if page is not None else None
    if why:  # said before the conversation, which a page written at its end would otherwise cost
        print(f"error: --html {page}: {why}", file=sys.stderr)
        return 2
    outbox = ConsoleOutbox(sys.stdout)
    try:
        store = Store(cfg.db_path)
        # The console's answers go to this terminal: nothing to answer again after a restart.
        service = build_service(cfg, outbox, store=store, durable=False)
    except (StoreError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    service.knowledge.watch(KB_POLL_S)
    try:
        status = run_console(service, outbox, channel=args.channel, user=args.user)
    finally:
        service.shutdown(wait=False)
    if page is not None:
        try:
            write_html(outbox, page)
        except OSError as exc:
            print(f"error: --html {page}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"wrote {page}", file=sys.stderr)
    return status


def _not_writable(path: Path) -> str | None:
    """Why a file cannot be written at ``path``, in words (None: it can be, as far as can be told)."""
    if path.is_dir():
        return "a directory, not a file"
    if not path.parent.is_dir():
        return f"no such folder {path.parent}"
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return "not writable"
    return None


def _require(cfg: Config, *names: str) -> None:
    missing = [n for n in names if not getattr(cfg, n.lower())]
    if missing:
        raise SystemExit(f"error: set {', '.join(missing)} in the environment (README: Installing in Slack)")


def _build_app(cfg: Config) -> tuple[Any, Any]:
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackApiError

    from tracebot.slack.app import build_app
    from tracebot.store import StoreError

    try:
        app, service = build_app(cfg)
    except BoltError as exc:  # Bolt's own auth.test of the bot token, in App(): a wrong or revoked token
        raise SystemExit(
            f"error: cannot start the Slack app: Slack refused SLACK_BOT_TOKEN ({exc}); it must be the app's "
            "Bot User OAuth Token (xoxb-…) (README: Installing in Slack)"
        ) from exc
    except (StoreError, RuntimeError, ValueError) as exc:  # database, knowledge base, settings
        raise SystemExit(f"error: {exc}") from exc
    except (SlackApiError, OSError) as exc:  # auth.test at start: bad token, or Slack unreachable
        raise SystemExit(f"error: cannot start the Slack app (auth.test failed): {exc}") from exc
    service.knowledge.watch(KB_POLL_S)
    service.resume()  # what a killed tracebot had accepted and not answered yet
    return app, service


DEFAULT_PORT = 3000


def port_number(raw: str) -> int:
    """A port to listen on, as typed (``--port``: argparse prints the message) or set (``$PORT``). Out of
    range is refused here: waitress takes the number modulo 65536 (99999 listened on 34463 without a word)."""
    try:
        port = int(raw.strip())
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, got {raw.strip()[:40]!r}")
    return port


def _listen_port(args: argparse.Namespace) -> int:
    """``--port``, else ``$PORT``, else 3000. ``$PORT`` is read here, by the commands that listen, not
    when the parser is built: a bad one broke every command, ``--help`` and ``diagnose`` too."""
    if args.port is not None:
        return int(args.port)
    raw = os.environ.get("PORT", "").strip()
    if not raw:
        return DEFAULT_PORT
    try:
        return port_number(raw)
    except argparse.ArgumentTypeError as exc:
        raise SystemExit(f"error: PORT {exc}" + (" (or give --port)" if _has_port_flag(args) else "")) from exc


def _has_port_flag(args: argparse.Namespace) -> bool:
    """Whether the command typed takes ``--port``: ``serve`` does, ``run`` (the Procfile's) reads only
    ``$PORT``, and a hint naming a flag it refuses sends the reader round in a circle."""
    return getattr(args, "func", cmd_serve) is not cmd_run


def _port_advice(args: argparse.Namespace) -> str:
    """How to choose another port with the command typed."""
    return "give --port or $PORT another port" if _has_port_flag(args) else "set $PORT to another port"


def listen_url(host: str, port: int, path: str) -> str:
    """The URL a server listening on ``host`` and ``port`` answers ``path`` at; an IPv6 address in
    brackets (``--host ::`` was logged as ``http://:::3000``, a URL nothing can open)."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


def cmd_serve(args: argparse.Namespace) -> int:
    from tracebot.slack.http import EVENTS_PATH, make_http_server, mount_app

    cfg = _config(args)
    port = _listen_port(args)
    configure_logging(cfg)
    _require(cfg, "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET")
    assert cfg.slack_signing_secret is not None  # _require checked it
    # The port first: one already taken (or not ours to bind) is said at once, in one line, before the
    # knowledge base loads and before the inbox's unanswered work is taken by a process about to exit.
    try:
        server = make_http_server(None, cfg.slack_signing_secret, args.host, port)
    except (OSError, ValueError) as exc:  # waitress: ValueError for a --host it cannot resolve
        raise SystemExit(f"error: cannot listen on {args.host}:{port}: {_os_reason(exc, _port_advice(args))}") from exc
    app, service = _build_app(cfg)  # meanwhile the port is bound but refuses connections: none hangs
    try:
        mount_app(server, app)  # listens from here
    except OSError as exc:  # another process bound the port too and listened first
        raise SystemExit(f"error: cannot listen on {args.host}:{port}: {_os_reason(exc, _port_advice(args))}") from exc
    log.info("tracebot listening on %s", listen_url(args.host, server.server_address[1], EVENTS_PATH))
    _stop_on_sigterm()
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    server.shutdown()  # no new requests; what was accepted is still answered
    service.drain(cfg.drain_s)
    return 0


def _os_reason(exc: Exception, other_port: str) -> str:
    """An OSError's reason in words, without its ``[Errno 98]`` prefix; what to do for the usual ones
    (``other_port``: how the command typed is given another port)."""
    if not isinstance(exc, OSError):
        if not isinstance(exc.__context__, OSError):  # waitress re-raises getaddrinfo's error as ValueError
            return str(exc)
        exc = exc.__context__
    reason = (exc.strerror or str(exc)).lower()
    if exc.errno == errno.EADDRINUSE:
        return f"{reason} (another process listens there: stop it, or {other_port})"
    if exc.errno == errno.EACCES:
        return f"{reason} (ports below 1024 need privileges: use a higher one behind the proxy)"
    return reason


def cmd_socket(cfg: Config) -> int:
    from slack_sdk.errors import SlackApiError

    from tracebot.slack.socket_mode import socket_mode_handler

    configure_logging(cfg)
    _require(cfg, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN")
    app, service = _build_app(cfg)
    log.info("tracebot connecting in Socket Mode")
    handler = socket_mode_handler(app, cfg)
    _stop_on_sigterm()
    code = 0
    with contextlib.suppress(KeyboardInterrupt):
        try:
            handler.start()  # connects (apps.connections.open), then waits
        except (SlackApiError, OSError) as exc:  # a wrong or revoked app token, Slack unreachable
            print(f"error: cannot connect in Socket Mode: {_slack_reason(exc)}", file=sys.stderr)
            code = EXIT_FAILED
    handler.close()  # no new envelopes; what was acked (or taken from the inbox) is still answered
    service.drain(cfg.drain_s)
    return code


def _slack_reason(exc: Exception) -> str:
    """Why Socket Mode could not connect, in one line."""
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError):
        said = exc.response.get("error") if exc.response is not None else None
        return (
            f"Slack answered apps.connections.open with {said or exc}: SLACK_APP_TOKEN must be the app-level "
            "token (xapp-…) with connections:write (README: Installing in Slack)"
        )
    return str(exc)


SLACK_VARIABLES = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL")


def cmd_run(args: argparse.Namespace) -> int:
    cfg = _config(args)
    if cfg.slack_bot_token and cfg.slack_app_token:
        return cmd_socket(cfg)
    if cfg.slack_bot_token and cfg.slack_signing_secret:
        args.port = None  # $PORT, read by cmd_serve
        args.host = "0.0.0.0"  # noqa: S104 (a deployment listens on all interfaces)
        return cmd_serve(args)
    present = [name for name in SLACK_VARIABLES if os.environ.get(name)]
    if present:
        # Half a Slack configuration is a deployment mistake: falling back to the console would exit 0
        # under a process manager and the bot would simply never answer.
        print(f"error: {incomplete_slack_settings(present)}", file=sys.stderr)
        return EXIT_FAILED
    print(
        "No Slack variables set (SLACK_BOT_TOKEN with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET): "
        "starting the console.",
        file=sys.stderr,
    )
    args.user, args.channel = "U0CONSOLE", "C0CONSOLE"
    return cmd_console(args)


def incomplete_slack_settings(present: list[str]) -> str:
    """What is missing, given the Slack variables that are set."""
    if "SLACK_BOT_TOKEN" not in present:
        missing = "SLACK_BOT_TOKEN"
    else:
        missing = "SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP)"
    return (
        f"{', '.join(present)} {'is' if len(present) == 1 else 'are'} set but {missing} is not: "
        "set it to run in Slack, or unset every SLACK_ variable to start the local console "
        "(README: Installing in Slack)"
    )


def cmd_stats(args: argparse.Namespace) -> int:
    from tracebot.store import Store, StoreError
    from tracebot.store.stats import (
        FLAG_BELOW,
        FLAG_MIN_VOTES,
        entry_stats,
        needs_attention,
        not_this_feedback,
    )

    cfg = _config(args)
    if args.unanswered:
        return _print_unanswered(cfg, args)
    if _no_database(cfg, args, {"entries": [], "not_this": []}):
        return 0
    try:
        store = Store(cfg.db_path)
        stats = entry_stats(store)
        rejected = not_this_feedback(store, limit=args.limit)
        flagged = {s.entry_id for s in needs_attention(store)}
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        rows = [dict(vars(s), helpful_rate=s.helpful_rate, flagged=s.entry_id in flagged) for s in stats]
        print(json.dumps({"entries": rows, "not_this": rejected}, indent=2))
        return 0
    if not stats:
        print(f"No diagnoses recorded yet in {cfg.db_path}.")
        return 0
    print(f"{'entry':<40} {'matched':>7} {'helpful':>7} {'not this':>8} {'helpful rate':>12}")
    for s in stats:
        rate = f"{s.helpful_rate:.0%}" if s.helpful_rate is not None else "-"
        flag = "  ! below threshold" if s.entry_id in flagged else ""
        print(f"{s.entry_id:<40} {s.matched:>7} {s.helpful:>7} {s.not_this:>8} {rate:>12}{flag}")
    if flagged:
        print(f"! helpful in under {FLAG_BELOW:.0%} of at least {FLAG_MIN_VOTES} votes: rework or retire these entries")
    if rejected:
        print('\n"Not this" feedback (newest first): the entry matched, the user said it was wrong')
        for r in rejected:
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["created_at"]))
            print(
                f"  {when}  {r['entry_id']}  by {r['user']} in {r['channel']}\n      line: {r['line'][:200]}"
            )
    return 0


def _no_database(cfg: Config, args: argparse.Namespace, empty: dict[str, list[Any]]) -> bool:
    """There is no database at ``cfg.db_path``: say that nothing is recorded (``empty`` with --json) and
    True. A command that only reads must not create one (and its folder) where a mistyped path points."""
    if str(cfg.db_path) == ":memory:" or Path(cfg.db_path).exists():
        return False
    print(json.dumps(empty) if args.json else
          f"Nothing recorded yet: there is no database at {cfg.db_path} (`tracebot serve` or `tracebot run` "
          "writes it; TRACEBOT_DB names another).")
    return True


def _print_unanswered(cfg: Config, args: argparse.Namespace) -> int:
    from tracebot.store import Store, StoreError
    from tracebot.store.stats import unanswered

    if _no_database(cfg, args, {"unanswered": []}):
        return 0
    try:
        gaps = unanswered(Store(cfg.db_path), limit=args.limit)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"unanswered": [vars(g) for g in gaps]}, indent=2, ensure_ascii=False))
        return 0
    if not gaps:
        print(f"No unanswered errors recorded in {cfg.db_path}.")
        return 0
    print("Errors pasted that got no confident answer, most frequent first (draft an entry for the top ones):")
    for g in gaps:
        first, last = (time.strftime("%Y-%m-%d", time.gmtime(t)) for t in (g.first_seen, g.last_seen))
        print(f"{g.count:>5}x  {g.key[:150]}\n       in {', '.join(g.channels)}; first {first}, last {last}")
    return 0


def _printable(text: object) -> str:
    """A stored value as one terminal line: control characters (escape sequences, newlines) shown as ?."""
    return "".join(c if c.isprintable() else "?" for c in str(text or ""))


def cmd_audit(args: argparse.Namespace) -> int:
    from tracebot.store import Store, StoreError

    cfg = _config(args)
    if _no_database(cfg, args, {"audit": []}):
        return 0
    try:
        rows = Store(cfg.db_path).audit(limit=args.limit, user=args.user, channel=args.channel)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"audit": rows}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"No commands recorded in {cfg.db_path}.")
        return 0
    print(f"{'when (UTC)':<16}  {'user':<12} {'channel':<12} {'via':<7} {'outcome':<11} command")
    for r in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(r["at"]))
        command = _printable(f"/trace {r['command']} {r['args'] or ''}".strip())[:160]
        print(f"{when:<16}  {_printable(r['user'] or '-'):<12} {_printable(r['channel'] or '-'):<12} "
              f"{_printable(r['via']):<7} {_printable(r['outcome']):<11} {command}")
    return 0


def add_bot_subcommands(sub: Any) -> None:
    c = sub.add_parser(
        "console", help="the Slack bot in a terminal: paste errors, run /trace, see what it posts"
    )
    c.add_argument("--channel", default="C0CONSOLE")
    c.add_argument("--user", default="U0CONSOLE")
    c.add_argument(
        "--db", help="SQLite file (default: $TRACEBOT_DB or var/tracebot.sqlite3; :memory: for none)"
    )
    c.add_argument("--knowledge", help="knowledge directory (default: bundled, or $TRACEBOT_KNOWLEDGE)")
    c.add_argument(
        "--html", metavar="FILE", help="also write the conversation as an HTML page rendered as Slack would show it"
    )
    c.set_defaults(func=cmd_console)

    s = sub.add_parser("serve", help="run the Slack app over HTTP (Events API, signatures verified)")
    s.add_argument(
        "--port", type=port_number, help=f"port to listen on, 1-65535 (default: $PORT, else {DEFAULT_PORT})"
    )
    s.add_argument(
        "--host", default="0.0.0.0",  # noqa: S104
        help="address to listen on (default: 0.0.0.0, every interface; 127.0.0.1 behind a local proxy)",
    )
    s.set_defaults(func=cmd_serve)

    r = sub.add_parser(
        "run", help="Socket Mode if SLACK_APP_TOKEN, else HTTP if SLACK_SIGNING_SECRET, else console",
        description="tracebot's main job (the Procfile's): Socket Mode when SLACK_BOT_TOKEN and SLACK_APP_TOKEN "
        f"are set; else HTTP when SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are, on 0.0.0.0, port $PORT or "
        f"{DEFAULT_PORT} (tracebot serve for another host); else, with no SLACK_ variable at all, the console.",
    )
    r.add_argument("--db", help=argparse.SUPPRESS)
    r.set_defaults(func=cmd_run)

    st = sub.add_parser(
        "stats", help="per entry: how often it matched, its helpful rate, and 'Not this' feedback"
    )
    st.add_argument("--db", help="SQLite file (default: $TRACEBOT_DB)")
    st.add_argument("--limit", type=int, default=50, help="how many 'Not this' items (or gaps) to list")
    st.add_argument(
        "--unanswered", action="store_true", help="the errors that got no confident answer, grouped and ranked"
    )
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_stats)

    au = sub.add_parser("audit", help="who ran which /trace command, where and when, and what came of it")
    au.add_argument("--db", help="SQLite file (default: $TRACEBOT_DB)")
    au.add_argument("--limit", type=int, default=50)
    au.add_argument("--user", help="only this Slack user id")
    au.add_argument("--channel", help="only this channel id")
    au.add_argument("--json", action="store_true")
    au.set_defaults(func=cmd_audit)


# ---- tracebot trace: /trace commands from a terminal ----

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_trace_subcommands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "trace", help="run a /trace command here: trace job 123, trace pid 4242, trace sagemaker NAME",
        description="Run a /trace plugin command from the terminal. `tracebot trace help` lists them.")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--out", metavar="DIR", help="write attachments (e.g. ranks.png) into DIR")
    p.add_argument("words", nargs=argparse.REMAINDER, help="the command and its arguments")
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    from tracebot.render.files import write_attachments
    from tracebot.render.text import render_result
    from tracebot.service.plugin_host import default_host
    from tracebot.service.router import Router

    words, as_json, out_dir = _own_options(list(args.words), args.json, args.out)
    config = _config(args)
    knowledge, kb_note = _trace_knowledge(config)
    if kb_note:
        print(f"note: {kb_note}", file=sys.stderr)
    router = Router(default_host(), config, knowledge=knowledge, typed_as="tracebot trace")
    result = router.run_text(" ".join(words) or "help", local_caller(config), progress=_progress_printer())
    if kb_note:
        result.data.setdefault("notes", []).append(kb_note)
    saved = write_attachments(result.attachments, out_dir) if out_dir else []
    if as_json:
        payload = result.to_dict()
        for entry, one in zip(payload["attachments"], saved, strict=False):
            entry["path"] = str(one.path) if one.path else None
            if one.note:
                entry["note"] = one.note
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(render_result(result))
        for one in saved:
            if one.note:
                print(f"note: {one.note}", file=sys.stderr)
            if one.path:
                print(f"wrote {one.path}")
        if result.attachments and not out_dir:
            print("(use --out DIR to save the attachments)")
    if result.status == "error":
        return EXIT_USAGE if result.data.get("error") == "usage" else EXIT_FAILED
    return EXIT_FAILED if any(one.path is None for one in saved) else EXIT_OK


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
    from tracebot.plugin_api import Caller

    uid = os.getuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    cli = config.extra.get("cli") or {}
    admins = {str(a) for a in cli.get("admins", []) or []} if isinstance(cli, dict) else set()
    return Caller(slack_user=None, cluster_user=user, is_admin=uid == 0 or user in admins)


@dataclass
class _Knowledge:
    kb: KnowledgeBase
    matcher: Matcher


def _trace_knowledge(config: Config) -> tuple[_Knowledge | None, str | None]:
    """The knowledge base's matcher for ``trace``; without one, plugins still run and a note says so."""
    from tracebot.matcher import load_matcher

    try:
        kb, matcher, _errors = load_matcher(config.knowledge_dir, config.confidence_threshold)
        # made now, not at a plugin's first match(): that runs inside the plugin's deadline, and
        # training there (seconds with nothing cached) could time the trace out and lose its findings
        _ = matcher.model
    except Exception as exc:  # a broken KB must not stop an admin from tracing a hung job
        return None, f"knowledge base unavailable ({type(exc).__name__}: {exc}); no entries matched"
    if not kb.entries:
        return None, f"no knowledge entries in {config.knowledge_dir}; no entries matched"
    return _Knowledge(kb, matcher), None


def _progress_printer() -> Any:
    if not sys.stderr.isatty():
        return lambda _msg: None
    return lambda msg: print(f"… {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def scrubbed_output() -> Iterator[None]:
    """Standard output and error scrubbed of secrets while tracebot runs: every printer, ``--json`` and
    argparse's own messages included."""
    scrubber = Scrubber.for_process()  # SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET... are in the environment
    saved = sys.stdout, sys.stderr
    # A stream started closed (``tracebot diagnose f >&-``) is None and stays None: print() then writes nothing
    sys.stdout = ScrubbingStream(sys.stdout, scrubber) if sys.stdout is not None else None  # type: ignore[assignment]
    sys.stderr = ScrubbingStream(sys.stderr, scrubber) if sys.stderr is not None else None  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (default: the program's arguments) and return its exit code."""
    return _main(argv)[0]


def run() -> NoReturn:
    """The ``tracebot`` program (its console script, and ``python -m tracebot.cli``): :func:`main`, then
    exit. A command marked ``exits_fast`` (``diagnose``) ends with :func:`exit_now` instead of the
    interpreter's teardown: tearing down the matcher's objects and every module after the answer is
    printed took 0.03–0.07 s of each start, cold or warm, that nobody waits for but the caller."""
    code, fast = _main(None)
    _write_out_or_say_why()
    if fast:
        exit_now(code)
    sys.exit(code)


def _write_out_or_say_why() -> None:
    """Flush what is still buffered for standard output; when the disk is full (``> /dev/full``, a quota),
    say so in one line and exit 1. Left to the interpreter, the same flush at exit printed "Exception
    ignored … OSError" and exited 120; a closed pipe (``| head``) stays the interpreter's to report."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        if not _said_write_failed(exc):
            return
        import atexit

        atexit._run_exitfuncs()
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os._exit(1)  # the buffer cannot be written: the interpreter's own exit would fail on it again


def exit_now(code: int) -> None:
    """End the process with ``code`` without tearing down the interpreter, when nothing else is pending;
    otherwise return (the caller exits normally).

    What the teardown would do, done here explicitly: standard output and error flushed (a flush that fails,
    a closed pipe, returns: the normal exit reports it with its own exit code, as before), the exit
    handlers run (``atexit``: ``weakref.finalize`` callbacks, among them the one that stops an idle
    training helper, and logging's final flush). A thread that is not a daemon still working is work the
    normal exit waits for: then this returns. Skipped: garbage-collecting what is left (a file object
    still open and unflushed would lose its buffer: tracebot writes its files within ``with`` blocks and
    renames them into place), finalising every module, and freeing memory, which the kernel does."""
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        return
    if not _flushed():
        return
    import atexit

    atexit._run_exitfuncs()
    if not _flushed():  # what an exit handler wrote (logging's last records) could not be
        code = 120  # what the interpreter exits with when its final flush fails
    os._exit(code)


def _flushed() -> bool:
    """Standard output and error flushed; False when that failed (a closed pipe, a closed stream)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


# A full disk, a quota, a device error: where the output goes failed, not tracebot (a line, not a traceback).
_WRITE_FAILED = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _said_write_failed(exc: OSError) -> bool:
    """Whether ``exc`` is the output failing to be written (:data:`_WRITE_FAILED`); if so, said in one line."""
    if exc.errno not in _WRITE_FAILED:
        return False
    print(f"error: could not write the output: {exc.strerror}", file=sys.stderr)
    return True


def _main(argv: list[str] | None) -> tuple[int, bool]:
    """The exit code, and whether the command may end with :func:`exit_now`."""
    # OpenBLAS starts a thread per core when NumPy is first imported: ~60 ms of a 0.3 s start on a busy
    # 2-core machine, for products far too small to share out (training limits itself to one thread
    # anyway). Set before anything imports NumPy; an explicit setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with scrubbed_output():
        parser = build_parser()
        args = parser.parse_args(argv)  # a usage error is printed through the scrubbed stderr
        if not getattr(args, "func", None):
            parser.print_help()
            return 0, False
        fast = bool(getattr(args, "exits_fast", False))
        if fast and sys.stdout is None:  # diagnose's answer would vanish and its exit status say all was well
            print("error: standard output is closed; tracebot has nowhere to write", file=sys.stderr)
            return 2, False
        try:
            return int(args.func(args) or 0), fast
        except KeyboardInterrupt:
            return 130, False
        except ModelUnavailable as exc:  # made when a text first needed it (tracebot.matcher.loading)
            print(f"error: {exc}", file=sys.stderr)
            return 1, fast
        except BrokenPipeError:
            return 0, False
        except OSError as exc:  # after BrokenPipeError, one of them
            if not _said_write_failed(exc):
                raise
            return 1, False
        except SystemExit as exc:
            if isinstance(exc.code, str):  # "error: ..." would be printed by Python after the streams are back
                print(exc.code, file=sys.stderr)
                return 1, fast
            raise


if __name__ == "__main__":
    run()
