"""``tracebot``: the command line. A thin layer over the library (matcher, knowledge base, plugins, bot).

Subcommands added by other modules register themselves with one ``add_subcommands`` call below.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.config import Config
from bot.kb.loader import KnowledgeBase, load_knowledge_base
from bot.matcher import Matcher
from bot.matcher.core import FULL_SCAN_CHARS
from bot.render.text import render_diagnosis, render_match

MAX_STDIN_BYTES = 512 << 20


def _kb(args: argparse.Namespace) -> tuple[KnowledgeBase, Matcher]:
    root = Path(args.knowledge) if getattr(args, "knowledge", None) else Config.from_env().knowledge_dir
    kb, errors = load_knowledge_base(root)
    if errors:
        print(f"warning: {len(errors)} knowledge-base problem(s); run `tracebot kb lint`", file=sys.stderr)
    if not kb.entries:
        raise SystemExit(f"error: no knowledge entries could be loaded from {root}")
    return kb, Matcher(kb, threshold=args.threshold if getattr(args, "threshold", None) else 75.0)


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
    kb, matcher = _kb(args)
    if args.batch:
        return _diagnose_batch(matcher, Path(args.batch))
    progress = _Progress(sys.stderr.isatty())
    try:
        if args.file in (None, "-"):
            data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
            if len(data) > MAX_STDIN_BYTES:
                print(f"note: only the first {MAX_STDIN_BYTES >> 20} MB of standard input were read", file=sys.stderr)
            d = matcher.diagnose(data[:MAX_STDIN_BYTES])
        else:
            path = Path(args.file)
            if not path.is_file():
                print(f"error: {path}: no such file", file=sys.stderr)
                return 2
            try:
                d = matcher.diagnose_file(path, progress=progress if path.stat().st_size > FULL_SCAN_CHARS else None)
            except OSError as exc:
                print(f"error: {path}: {exc.strerror or exc}", file=sys.stderr)
                return 2
    finally:
        progress.close()
    if args.json:
        print(json.dumps(d.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(render_diagnosis(d, kb, show_all=args.all))
    return 0


def _diagnose_batch(matcher: Matcher, path: Path) -> int:
    """One JSON line out per JSON line in: ``{"id", "matches": [{"id", "score", "confident"}]}``."""
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            text = case["text"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            print(f"error: {path}:{no}: needs a JSON object with 'text' ({exc})", file=sys.stderr)
            return 2
        d = matcher.diagnose(str(text))
        out = {
            "id": case.get("id"),
            "matches": [{"id": m.entry_id, "score": m.score, "confident": m.confident} for m in d.matches[:5]],
        }
        print(json.dumps(out, ensure_ascii=False))
    return 0


def cmd_kb_lint(args: argparse.Namespace) -> int:
    from bot.kb.lint import lint

    root = Path(args.knowledge) if args.knowledge else Config.from_env().knowledge_dir
    kb, problems = lint(root, examples=not args.no_examples)
    for p in problems:
        print(p)
    n_examples = sum(len(e.examples_match) + len(e.examples_no_match) for e in kb.entries)
    if problems:
        print(f"{len(problems)} problem(s) in {root} ({len(kb.entries)} entries loaded)", file=sys.stderr)
        return 1
    print(f"ok: {len(kb.entries)} entries, {n_examples} examples checked")
    return 0


def cmd_kb_list(args: argparse.Namespace) -> int:
    kb, _ = _kb(args)
    if args.json:
        rows = [{"id": e.id, "title": e.title, "role": e.role, "tags": e.tags} for e in kb.entries]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        width = max(len(e.id) for e in kb.entries)
        for e in sorted(kb.entries, key=lambda e: e.id):
            print(f"{e.id:<{width}}  {e.title}")
    return 0


def cmd_kb_show(args: argparse.Namespace) -> int:
    kb, _ = _kb(args)
    e = kb.get(args.id)
    if e is None:
        print(f"error: no entry '{args.id}' (see `tracebot kb list`)", file=sys.stderr)
        return 2
    from dataclasses import asdict

    if args.json:
        d = asdict(e)
        d["path"] = str(e.path)
        d.pop("lines")
        print(json.dumps(d, ensure_ascii=False, indent=2))
        return 0
    from bot.result import Match

    print(render_match(Match(e.id, e.title, 100, True, e.role), kb))
    if e.cause:
        print(f"\n   cause: {e.cause}")
    print(f"   file: {e.path}")
    return 0


def cmd_kb_search(args: argparse.Namespace) -> int:
    kb, matcher = _kb(args)
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
    from bot.kb.evaluate import CaseError, evaluate, format_report, load_cases

    kb, matcher = _kb(args)
    try:
        cases = load_cases(Path(args.cases))
    except (OSError, CaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rep = evaluate(matcher, cases)
    print(json.dumps(rep.to_dict(), ensure_ascii=False, indent=2) if args.json else format_report(rep))
    failed = (args.min_top1 is not None and rep.top1 < args.min_top1) or (
        args.max_fp is not None and rep.false_positive_rate > args.max_fp
    )
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracebot", description="Diagnose multi-GPU training failures.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("diagnose", help="say which known problems a log or pasted text shows")
    d.add_argument("file", nargs="?", help="log file (plain or .gz); '-' or nothing reads standard input")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.add_argument("--all", action="store_true", help="show non-confident matches in full too")
    d.add_argument("--batch", metavar="CASES.jsonl", help='one {"id", "text"} per line in, one result per line out')
    d.add_argument("--threshold", type=float, help="confidence threshold (default 75)")
    d.add_argument("--knowledge", help="knowledge directory (default: the bundled one, or $TRACEBOT_KNOWLEDGE)")
    d.set_defaults(func=cmd_diagnose)

    kb = sub.add_parser("kb", help="work with the knowledge base")
    kbs = kb.add_subparsers(dest="kb_command", metavar="KB_COMMAND", required=True)

    def kbcmd(name: str, fn: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        sp = kbs.add_parser(name, help=help_)
        sp.add_argument("--knowledge", help="knowledge directory (default: bundled)")
        sp.set_defaults(func=fn)
        return sp

    lint_p = kbcmd("lint", cmd_kb_lint, "check every entry: schema, patterns, examples")
    lint_p.add_argument("--no-examples", action="store_true", help="skip running the examples")
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
    eval_p.add_argument("cases", nargs="?", default="tests/corpus/cases.jsonl")
    eval_p.add_argument("--json", action="store_true")
    eval_p.add_argument("--min-top1", type=float, help="exit 1 when top-1 is below this fraction")
    eval_p.add_argument("--max-fp", type=float, help="exit 1 when the false-positive rate is above this fraction")
    eval_p.add_argument("--threshold", type=float)

    # --- subcommands contributed by other modules (one line each) ---
    _extend(sub, kbs, eval_p)
    return p


def _extend(sub: Any, kbs: Any, eval_p: argparse.ArgumentParser) -> None:
    """Each feature module adds its own subcommands (imported here so ``tracebot --help`` stays quick)."""
    from bot.kb.cli_contrib import add_kb_subcommands
    from bot.slack.cli import add_subcommands as add_bot_subcommands
    from bot.trace_cli import add_subcommands as add_trace_subcommands

    add_kb_subcommands(kbs, eval_p)  # kb new / kb import / kb eval --compare
    add_trace_subcommands(sub)  # trace job|gpus|pid|sagemaker
    add_bot_subcommands(sub)  # run / console / serve / stats


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
