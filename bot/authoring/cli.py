"""``tracebot kb new``, ``kb import`` and ``kb eval --compare``: the contribution path, as CLI commands.

Registered by ``bot/cli.py`` through :func:`add_kb_subcommands`; the work is done by ``draft``,
``importer``, ``compare`` and ``clean_corpus``, this module only parses arguments and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tracebot.config import DEFAULT_THRESHOLD, Config

# The commands import their tools when they run: every `tracebot` command builds this parser, and
# `tracebot diagnose` must not pay for the authoring tools.

DEFAULT_DRAFTS_DIR = "knowledge-drafts"
MAX_THREAD_BYTES = 64 << 20  # a saved thread (conversations.replies of 1,000 messages is a few MB)


def _knowledge(args: argparse.Namespace) -> Path:
    return Path(args.knowledge) if getattr(args, "knowledge", None) else Config.from_env().knowledge_dir


def _from_here(path: Path) -> Path:
    """``path`` relative to the working directory when it is under it (``knowledge/cuda/x.yaml``, as
    CONTRIBUTING.md shows and an editor opens it), else as it is."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def cmd_kb_new(args: argparse.Namespace) -> int:
    from tracebot.authoring.draft import (
        DraftError,
        draft_from_snippet,
        pick_signatures,
        read_snippet,
        scaffold,
        write_draft,
    )
    from tracebot.authoring.lint import todo_problems
    from tracebot.knowledge.loader import KnowledgeBase, parse_entry_file

    if args.from_thread:
        return cmd_kb_new_from_thread(args)
    if not args.id:
        print("error: give the new entry's id (or --from-thread FILE)", file=sys.stderr)
        return 2
    kb_root = _knowledge(args)
    try:
        snippet = read_snippet(args.from_) if args.from_ else ""
        text = draft_from_snippet(args.id, snippet) if snippet else scaffold(args.id)
        path = write_draft(kb_root, args.id, text, args.area or "")
    except DraftError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {_from_here(path)}")
    if snippet:
        for sig in pick_signatures(snippet):
            print(f"  signature from line {sig.line_no}: {sig.regex}")
        _say_who_answers(kb_root, path, snippet)
    entry, _ = parse_entry_file(_from_here(path))  # its TODOs are named as the author opens the file
    if entry is not None:
        todos = todo_problems(KnowledgeBase([entry]))
        print(f"still to do ({len(todos)}; `tracebot kb lint` lists them until they are filled in):")
        for t in sorted(todos, key=lambda t: t.line):
            print(f"  {t}")
    return 0


def cmd_kb_new_from_thread(args: argparse.Namespace) -> int:
    """``kb new --from-thread THREAD.json``: what the Slack shortcut does, from a saved thread."""
    from tracebot.authoring.compare import CompareError
    from tracebot.authoring.draft import DraftError
    from tracebot.authoring.from_thread import (
        ThreadMessage,
        fix_choices,
        one_line,
        save_configured,
        thread_error,
    )
    from tracebot.authoring.inputs import NotAFile, read_input

    try:
        blob = read_input(args.from_thread, MAX_THREAD_BYTES)
        if len(blob) > MAX_THREAD_BYTES:
            raise NotAFile(f"larger than {MAX_THREAD_BYTES >> 20} MB, more than a saved thread")
        data = json.loads(blob.decode("utf-8"))
    except FileNotFoundError:
        data, why = None, "no such file"
    except (NotAFile, ValueError) as exc:  # a FIFO, a directory, not UTF-8, not JSON
        data, why = None, str(exc)
    else:
        raw = data.get("messages") if isinstance(data, dict) else data
        why = "" if isinstance(raw, list) else (
            "not a Slack thread: the JSON of conversations.replies ({\"messages\": [...]}) or a list of messages")
    if why:
        print(f"error: cannot read {args.from_thread}: {why}", file=sys.stderr)
        return 2
    messages = [ThreadMessage.from_slack(m) for m in raw if isinstance(m, dict)]
    replies = fix_choices(messages)
    if not replies:
        print(f"error: {args.from_thread}: the thread has no replies to pick as the fix (its first message is the "
              "error, a reply the fix)", file=sys.stderr)
        return 2
    if not args.fix or not 1 <= args.fix <= len(replies):
        print("which reply fixed it? run again with --fix N:", file=sys.stderr)
        for n, m in enumerate(replies, 1):
            print(f"  {n}. {one_line(m.text, 100)}", file=sys.stderr)
        return 2
    try:
        saved = save_configured(
            Config.from_env(),
            kb_root=_knowledge(args),
            error=thread_error(messages),
            fix=replies[args.fix - 1].text,
            permalink=args.permalink or (data.get("permalink", "") if isinstance(data, dict) else "") or "TODO",
            entry_id=args.id,
        )
    except (DraftError, CompareError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or ".") / f"{saved.entry_id}.yaml"
    try:  # a folder not made yet is made, as `kb import` makes its drafts folder
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists() or out.is_symlink():  # never over a draft being edited (the same thread again)
            print(f"error: {out} is already there (a draft of this thread being edited?); nothing was written: "
                  "move it, or give --out another folder", file=sys.stderr)
            return 2
        with out.open("x", encoding="utf-8") as f:
            f.write(saved.yaml)
    except OSError as exc:
        print(f"error: cannot write the draft to {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}\n{saved.report()}")
    return 0


def _say_who_answers(kb_root: Path, path: Path, snippet: str) -> None:
    """Tell the author when an existing entry already answers their snippet: maybe extend that one."""
    from tracebot.knowledge.loader import load_knowledge_base
    from tracebot.matcher import Matcher

    kb, _ = load_knowledge_base(kb_root)
    # The line rules alone: the draft's own example would teach the ranking model to answer it.
    best = Matcher(kb, model=False).diagnose(snippet).best
    if best is None or best.entry_id == path.stem:
        print(f"  the draft answers its snippet first (checked against all {len(kb)} entries)")
    elif best.confident:
        print(
            f"  note: {best.entry_id} answers this snippet first ({best.kind} {best.signature!r}); "
            f"if it is the same problem, add the snippet to that entry's examples instead"
        )


def cmd_kb_import(args: argparse.Namespace) -> int:
    from tracebot.authoring.draft import DraftError
    from tracebot.authoring.importer import import_document

    out_dir = Path(args.out)
    kb_root = _knowledge(args)
    status = 0
    total = 0
    for doc in map(Path, args.docs):
        if not doc.is_file():  # said as it is: a folder or a FIFO given by mistake is no missing file
            why = "no such file" if not doc.exists() else "a directory" if doc.is_dir() else "not a regular file"
            print(f"error: {doc}: {why}; kb import reads a document (Markdown or text)", file=sys.stderr)
            status = 2
            continue
        try:
            report = import_document(doc, out_dir, kb_root if kb_root.is_dir() else None)
        except (DraftError, OSError) as exc:
            print(f"error: {doc}: {exc}", file=sys.stderr)
            status = 2
            continue
        print(
            f"{doc}: {len(report.written)} draft(s), {len(report.sections_without_errors)} section(s) without an error"
        )
        for d in report.drafts:
            where = d.path if d.path else f"not written: {d.skipped}"
            print(f"  § {d.section.heading or '(untitled)'} -> {d.entry_id}: {where}")
        total += len(report.written)
    if total:
        print(f"{total} draft(s) in {out_dir}; move each into {kb_root} once its TODOs are done")
    return status


def cmd_kb_compare(args: argparse.Namespace) -> int:
    from tracebot.authoring.compare import CompareError, compare, comparison_dict, format_comparison
    from tracebot.authoring.evaluate import CaseError, load_cases

    try:
        cases = load_cases(Path(args.cases))
        result = compare(_knowledge(args), cases, args.compare, threshold=args.threshold or DEFAULT_THRESHOLD)
    except (OSError, CaseError, CompareError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        json.dumps(comparison_dict(result), ensure_ascii=False, indent=2)
        if args.json
        else format_comparison(result)
    )
    return 1 if result.worse else 0


def cmd_kb_export_feedback(args: argparse.Namespace) -> int:
    from tracebot.authoring.feedback_export import WontWrite, feedback_cases, write_cases
    from tracebot.store import Store, StoreError

    db = args.db or Config.from_env().db_path
    try:
        cases = feedback_cases(Store.existing(db))
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        write_cases(cases, Path(args.out), force=args.force)
    except WontWrite as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder named as the file, a read-only place: said, not a traceback
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    helpful = sum(1 for c in cases if c["expected"])
    print(
        f"wrote {len(cases)} case(s) to {args.out}: {helpful} helpful, {len(cases) - helpful} 'not this'; "
        "review them, then move the good ones into the corpus"
    )
    return 0


def add_kb_subcommands(kbs: Any, eval_p: argparse.ArgumentParser) -> None:
    """Add ``kb new`` and ``kb import`` to ``kbs`` and ``--compare`` to ``kb eval``."""
    new_p = kbs.add_parser("new", help="write a draft entry, from a pasted error with --from")
    new_p.add_argument("id", nargs="?", help="the new entry's id ([a-z0-9-]+), also its file name")
    new_p.add_argument(
        "--from", dest="from_", metavar="FILE", help="error snippet or log to draft from; '-' reads stdin"
    )
    new_p.add_argument("--area", help="sub-folder of knowledge/ (nccl, cuda, slurm, ...)")
    new_p.add_argument(
        "--from-thread",
        metavar="THREAD.json",
        help="a Slack thread (conversations.replies JSON): its error and the --fix reply become a draft",
    )
    new_p.add_argument("--fix", type=int, metavar="N", help="with --from-thread: the reply (1, 2, ...) that fixed it")
    new_p.add_argument("--permalink", help="with --from-thread: the thread's link, cited as the source")
    new_p.add_argument("--out", help="with --from-thread: where to write the draft (default: here)")
    new_p.add_argument("--knowledge", help="knowledge directory (default: bundled)")
    new_p.set_defaults(func=cmd_kb_new)

    imp = kbs.add_parser("import", help="draft entries from a troubleshooting document (Markdown or text)")
    imp.add_argument("docs", nargs="+", metavar="DOC", help="runbook(s) to split into sections")
    imp.add_argument(
        "--out", default=DEFAULT_DRAFTS_DIR, help=f"where drafts go (default: ./{DEFAULT_DRAFTS_DIR})"
    )
    imp.add_argument(
        "--knowledge", help="knowledge directory whose ids must not be reused (default: bundled)"
    )
    imp.set_defaults(func=cmd_kb_import)

    exp = kbs.add_parser(
        "export-feedback", help="Helpful / Not this votes as labelled corpus cases (JSONL) to review"
    )
    exp.add_argument("--db", help="SQLite file (default: $TRACEBOT_DB)")
    exp.add_argument(
        "--out", default="feedback-cases.jsonl",
        help="where to write (default: %(default)s); an existing file only with --force, never a symlink",
    )
    exp.add_argument("--force", action="store_true", help="write over an existing --out file")
    exp.set_defaults(func=cmd_kb_export_feedback)

    eval_p.add_argument(
        "--compare",
        metavar="BASE_REF",
        help="compare the knowledge base at this git ref with the working tree; exit 1 if the change is worse",
    )
    answer = eval_p.get_default("func")

    def eval_or_compare(args: argparse.Namespace) -> int:
        return cmd_kb_compare(args) if args.compare is not None else int(answer(args) or 0)

    eval_p.set_defaults(func=eval_or_compare)
