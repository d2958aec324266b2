"""Draft knowledge entries from a troubleshooting document (``tracebot kb import DOC.md``).

A runbook is split into sections at its headings (Markdown ``#``..``######`` or underlined headings in
plain text). In each section the code blocks that look like error output — not shell commands, not
Python source — and inline error messages (```Missing XLA configuration`` error`) become the
signatures and examples of one draft entry, which cites the document and section as its source.
Cause, fix and the prose stay TODO: the author writes them in their own words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from tracebot.authoring.draft import (
    MAX_SIGNATURES,
    DraftError,
    Signature,
    existing_entry,
    line_score,
    pick_signatures,
    render_entry,
)
from tracebot.knowledge.entry import ID_RE
from tracebot.knowledge.loader import parse_entry_text
from tracebot.matcher.normalize import clean

MAX_DOC_BYTES = 4 << 20
MAX_BLOCKS_PER_ENTRY = 4
MAX_ID_CHARS = 60

_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_ANCHOR = re.compile(r"""<a\s+(?:name|id)\s*=\s*["']([^"']+)["']\s*>\s*</a>""", re.I)
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>])")

_CODE_LANGS = {
    "bash",
    "sh",
    "shell",
    "zsh",
    "python",
    "py",
    "yaml",
    "yml",
    "json",
    "toml",
    "ini",
    "dockerfile",
    "make",
    "perl",
    "javascript",
    "js",
    "ts",
    "c",
    "cpp",
    "go",
    "rust",
    "sql",
}
_ERROR_WORDS = re.compile(r"error|exception|traceback|NCCL WARN|fatal|エラー|例外", re.I)
# Prose right before a block that announces an error or a stack dump ("you might see an error that
# looks like the following:", "Here is an example of such a stack trace:").
_PROSE_CUE = re.compile(r"\berror\b|\bexception\b|stack trace|traceback|エラー|例外", re.I)
_SHELL_START = re.compile(
    r"^(?:\$\s+|sudo\s+|(?:[A-Z_][A-Z0-9_]*=\S*\s+)+\S|(?:squeue|sacct|sbatch|srun|salloc|scancel|scontrol|sinfo|"
    r"less|more|tail|head|cat|grep|egrep|awk|sed|ssh|scp|nvidia-smi|py-spy|pgrep|pkill|kill|ps|pip|pip3|conda|"
    r"python|python3|torchrun|deepspeed|accelerate|export|cd|ls|mkdir|rm|cp|mv|docker|kubectl|aws|git|curl|"
    r"wget|ds_ssh|pdsh|function|source|echo|make|ulimit|ifconfig|ip|dmesg|journalctl|systemctl)(?=\s|$))"
)
_PY_SOURCE = re.compile(
    r"^(?:import\s|from\s+[\w.]+\s+import\s|def\s|class\s|if\s.*:$|else:|try:|except\b.*:$|for\s.*:$|"
    r"while\s.*:$|with\s.*:$|return\b|raise\s|print\(|#|@\w|\)|\}|\]|\.\.\.$|"
    r"[\w.\[\]'\"]+\s*=[^=]|[\w.]+\([^)]*\)?\s*$|[\w.]+\s*\+?=)"
)
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_ERROR_AFTER = re.compile(r"\s*(?:error|エラー)", re.I)
_ERROR_BEFORE = re.compile(r"(?:error|エラー)(?:\s+message)?\s*[:：]\s*$", re.I)


@dataclass
class Block:
    text: str
    line_no: int  # 1-based line of the block's first content line in the document
    lang: str = ""
    prose_before: str = ""


@dataclass
class Section:
    heading: str  # heading text, Markdown escapes and anchors removed
    anchor: str | None
    level: int
    number: int  # 1-based position in the document
    line_no: int
    prose: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Draft:
    entry_id: str
    section: Section
    error_blocks: list[str]
    text: str  # YAML
    path: Path | None = None
    skipped: str = ""  # why it was not written


@dataclass
class ImportReport:
    doc: Path
    drafts: list[Draft] = field(default_factory=list)
    sections_without_errors: list[Section] = field(default_factory=list)

    @property
    def written(self) -> list[Draft]:
        return [d for d in self.drafts if d.path is not None]


def clean_heading(text: str) -> tuple[str, str | None]:
    m = _ANCHOR.search(text)
    anchor = m.group(1) if m else None
    text = _ANCHOR.sub("", text)
    text = _MD_ESCAPE.sub(r"\1", text).replace("**", "").strip()
    return text, anchor


def split_sections(text: str) -> list[Section]:
    """Sections at every heading, with the prose and the code blocks of each; code never splits."""
    lines = text.splitlines()
    sections = [Section("", None, 0, 0, 1)]
    fence: tuple[str, str] | None = None  # (marker, indent) of the open fence
    block_lines: list[str] = []
    block_start = 0
    lang = ""
    prev_prose = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        current = sections[-1]
        if fence is not None:
            marker, indent = fence
            if line.strip().startswith(marker[0] * len(marker)) and not line.strip().strip(marker[0]):
                current.blocks.append(
                    Block("\n".join(block_lines).strip("\n"), block_start, lang, prev_prose)
                )
                fence = None
            else:
                block_lines.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
            continue
        m = _FENCE.match(line)
        if m:
            fence, lang = (m.group(2), m.group(1)), m.group(3).lower()
            block_lines, block_start = [], i + 2
            i += 1
            continue
        heading = _ATX.match(line)
        setext = i + 1 < len(lines) and line.strip() and _SETEXT.match(lines[i + 1])
        if heading or (setext and not line.lstrip().startswith(("-", "+", "*", ">"))):
            raw, level = (
                (heading.group(2), len(heading.group(1)))
                if heading
                else (line, 1 if "=" in lines[i + 1] else 2)
            )
            title, anchor = clean_heading(raw)
            sections.append(Section(title, anchor, level, len(sections), i + 1))
            prev_prose = ""
            i += 1 if heading else 2
            continue
        current.prose.append(line)
        if line.strip():
            prev_prose = line
        i += 1
    if fence is not None and block_lines:  # an unclosed fence still holds its text
        sections[-1].blocks.append(Block("\n".join(block_lines).strip("\n"), block_start, lang, prev_prose))
    if not sections[0].prose and not sections[0].blocks:
        sections.pop(0)
    if not any(s.blocks for s in sections):
        for s in sections:
            s.blocks = _plain_blocks(s)
    return sections


def _plain_blocks(section: Section) -> list[Block]:
    """Plain text without fences: indented runs, or runs of lines that read as error output."""
    blocks: list[Block] = []
    run: list[str] = []
    start = 0
    prev = ""
    for n, line in enumerate(section.prose + [""]):
        if line.startswith(("    ", "\t")) or (
            line.strip() and line_score(line.strip()) >= 4 and len(line) < 400
        ):
            if not run:
                start = section.line_no + n + 1
            run.append(line.strip())
            continue
        if run:
            blocks.append(Block("\n".join(run), start, "", prev))
            run = []
        if line.strip():
            prev = line
    return blocks


def _is_code(block: Block) -> bool:
    if block.lang in _CODE_LANGS:
        return True
    lines = [ln.strip() for ln in block.text.splitlines() if ln.strip()]
    if not lines:
        return True
    if any(line_score(clean(ln).text) >= 4 for ln in lines):
        return False  # a console transcript with an error in it is output, whatever else it shows
    shell = sum(1 for ln in lines if _SHELL_START.match(ln))
    source = sum(1 for ln in lines if _PY_SOURCE.match(ln))
    return shell * 2 >= len(lines) or source * 2 >= len(lines)


def is_error_block(block: Block) -> bool:
    """Error output, not a command or source code: an error word in it, or prose announcing one."""
    if _is_code(block):
        return False
    if _ERROR_WORDS.search(block.text):
        return True
    return bool(_PROSE_CUE.search(block.prose_before)) and _looks_like_lines(block.text)


def _looks_like_lines(text: str) -> bool:
    """Log- or dump-shaped: short lines, not a box-drawn table like nvidia-smi's."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    boxed = sum(1 for ln in lines if ln.lstrip()[:1] in "|+=")
    return bool(lines) and boxed * 3 < len(lines) and all(len(ln) < 1000 for ln in lines)


def inline_errors(section: Section) -> list[str]:
    """Error messages quoted inline in prose: "fails with the `Missing XLA configuration` error"."""
    found = []
    for line in section.prose:
        for m in _CODE_SPAN.finditer(line):
            span = m.group(1).strip()
            announced = _ERROR_AFTER.match(line, m.end()) or _ERROR_BEFORE.search(line[: m.start()])
            readable = " " in span or re.search(r"(?:Error|Exception)\b", span)
            if announced and readable and len(span) >= 6 and not re.search(r"[={}]|\w\(|^/", span):
                found.append(span)
    return list(dict.fromkeys(found))


def slugify(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:MAX_ID_CHARS].strip("-")


def section_id(doc: Path, section: Section) -> str:
    """Id from the section's anchor, else its heading; headings without ASCII letters (Japanese) get a
    positional id (``doc-003-section-4``) rather than a guessed transliteration."""
    for candidate in (section.anchor or "", section.heading):
        slug = slugify(candidate)
        if slug and re.search(r"[a-z]", slug) and _mostly_ascii(candidate):
            return slug
    m = re.match(r"\d+", doc.stem)
    return f"doc-{m.group() if m else slugify(doc.stem) or 'doc'}-section-{section.number}"


def _mostly_ascii(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) * 2 > len(letters)


def plan_drafts(doc: Path, text: str) -> tuple[list[Draft], list[Section]]:
    """One draft per section that shows an error; the sections that show none."""
    drafts: list[Draft] = []
    quiet: list[Section] = []
    used: set[str] = set()
    for section in split_sections(text):
        errors = [b.text for b in section.blocks if is_error_block(b)] + inline_errors(section)
        errors = [e for e in errors if e.strip()][:MAX_BLOCKS_PER_ENTRY]
        if not errors:
            quiet.append(section)
            continue
        entry_id = section_id(doc, section)
        base, n = entry_id, 2
        while entry_id in used:
            entry_id, n = f"{base}-{n}", n + 1
        used.add(entry_id)
        source = {"doc": doc.name, "section": section.heading or doc.stem}
        note = (
            f'Drafted by `tracebot kb import` from {doc.name}, section "{section.heading}" (line {section.line_no}).\n'
            "Read that section, then write title, summary, cause and fix in your own words; keep the error\n"
            "text itself as signatures and examples. `tracebot kb lint` lists what is still TODO."
        )
        yaml_text = render_entry(
            entry_id,
            title="",  # the heading is often too generic ("NCCL error") to serve as a phrase
            signatures=signatures_for(errors),
            examples=errors,
            sources=[source],
            note=note,
        )
        drafts.append(Draft(entry_id, section, errors, yaml_text))
    return drafts, quiet


def signatures_for(blocks: list[str]) -> list[Signature]:
    """The best line of every block (so each block, as an example, matches), then the best of the rest."""
    chosen: dict[str, Signature] = {}
    for block in blocks:
        for sig in pick_signatures(block, limit=1):
            chosen.setdefault(sig.regex.lower(), sig)
    for sig in pick_signatures("\n".join(blocks)):
        if len(chosen) >= MAX_SIGNATURES:
            break
        chosen.setdefault(sig.regex.lower(), sig)
    return list(chosen.values())


def import_document(doc: Path, out_dir: Path, kb_root: Path | None = None) -> ImportReport:
    """Write one draft per error-showing section of ``doc`` into ``out_dir``; never overwrite a file.

    A draft whose id already names an entry in ``kb_root`` (the real knowledge base) is not written:
    it would shadow the hand-written entry; the report says which.
    """
    size = doc.stat().st_size
    if size > MAX_DOC_BYTES:
        raise DraftError(f"{doc} is {size} bytes; kb import reads documents up to {MAX_DOC_BYTES} bytes")
    text = doc.read_bytes().decode("utf-8", errors="replace")
    drafts, quiet = plan_drafts(doc, text)
    report = ImportReport(doc, drafts, quiet)
    for d in drafts:
        if not ID_RE.match(d.entry_id):
            d.skipped = f"id {d.entry_id!r} is not a valid entry id"
            continue
        if kb_root is not None and (clash := existing_entry(kb_root, d.entry_id)) is not None:
            d.skipped = f"an entry with this id already exists: {clash}"
            continue
        target = out_dir / f"{d.entry_id}.yaml"
        if target.exists():
            d.skipped = f"{target} already exists (kb import never overwrites)"
            continue
        _, errors = parse_entry_text(d.text, str(target), target)
        if errors:
            d.skipped = "internal error, the draft does not load: " + "; ".join(map(str, errors))
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        with target.open("x", encoding="utf-8") as fh:
            fh.write(d.text)
        d.path = target
    return report
