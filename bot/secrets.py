"""Secrets never leave tracebot: the one scrubber for text that goes to Slack, a terminal or a log.

:class:`Scrubber` replaces, with ``[redacted]``,

- the values it was given (the Slack tokens and signing secret) and the values of tracebot's own
  environment variables whose names say KEY/TOKEN/SECRET/PASSWORD/JWT (:func:`secret_env_values`);
- secrets recognisable by their shape: Slack tokens (``xox?-``, ``xapp-``), AWS access key ids and
  secret keys, Hugging Face (``hf_``), GitHub (``ghp_``..., ``github_pat_``), W&B keys after
  ``wandb login`` or in a netrc, ``Authorization:`` header values and bearer tokens, passwords in URLs;
- the value of every ``NAME=value`` / ``NAME: value`` / ``--name value`` whose name says
  KEY/TOKEN/SECRET/PASSWORD/JWT (``WANDB_API_KEY=…``, ``"password": "…"``, ``--hf-token …``), unless the
  value is a path of names (``--password-file /run/secrets/db``: where a secret is, not the secret), and
  never taking a path's last part for a name (``/etc/passwd: No such file``).

It is applied at the egress seams, not by callers: the service's outbox wrapper
(:mod:`tracebot.service.egress`), the CLI's standard output and error (:class:`ScrubbingStream`) and
a :class:`ScrubLogFilter` on the root log handlers (which also hides botocore's SigV4 header at DEBUG).
The terminal's stream also defuses control characters (escape sequences) from logs and job names.
Binary uploads (PNG) are left as they are; tracebot never puts text into them.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

REDACTED = "[redacted]"
# Known values shorter than this are not searched for: "testing" or "1" would blank ordinary words.
MIN_KNOWN_SECRET = 8

# "jwt": SLURM_JWT, the controller's credential where the cluster allows auth/jwt
_SECRET_WORDS = {"key", "token", "secret", "password", "passwd", "pwd", "credential", "credentials", "jwt"}
# Compounds written as one word (``apikey``, ``authToken`` is split by its capital anyway).
# PGPASSWORD (libpq's), MYSQLPASSWORD, CLIENTSECRET: one word, so no part of it is "password" or "secret".
_SECRET_SUFFIXES = ("apikey", "accesskey", "secretkey", "privatekey", "authtoken", "accesstoken", "apitoken",
                    "password", "passwd", "secret")
# The shell's working directories: "pwd" there is "print working directory", not a password (a path
# scrubbed as a secret hid every file under the directory tracebot was started in).
_SHELL_DIRECTORIES = frozenset({"PWD", "OLDPWD"})
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

# Shapes that are secrets wherever they appear.
_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])xox[a-z]-[A-Za-z0-9-]+"  # Slack bot/user/app-config tokens
    r"|(?<![A-Za-z0-9])xapp-[A-Za-z0-9-]+"  # Slack app-level tokens
    r"|(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])"
    r"|(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub classic / OAuth / app tokens
    r"|(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|(?<![A-Za-z0-9-])local-[0-9a-f]{40}(?![0-9a-f])"  # W&B keys of a local (self-hosted) server
    # A JSON Web Token (SLURM_JWT's value, an OIDC id token, a bearer token in a curl line): its header and
    # claims are base64url JSON, so both start with "eyJ" ('{"'), wherever the token stands
    r"|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
)
# An AWS secret access key: 40 characters of base64. Checked further in _aws_secret (mixed case, digits).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# Keep the label, hide what follows it.
_LABELLED = [
    # Any Authorization header value: Bearer, Basic, botocore's "AWS4-HMAC-SHA256 Credential=AKIA…/…".
    re.compile(r"""(?i)(\bauthorization\\?["']?\s*[:=]\s*(?:b?\\?["'])?)([^"'\\\n]+)"""),
    re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})"),
    # Each flag read one way only (possessive): "--a" was "--" + "a" or "-" + "-a", so n flags and no key were
    # tried 2^n ways (a 170-character line, days).
    re.compile(r"(?i)(\bwandb\s+login\s+(?:--?+[\w-]++\s++)*+)([0-9a-f]{40}|local-[0-9a-f]{40})"),
    re.compile(r"(?i)(\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+)(\S+)"),  # netrc (W&B writes one)
    re.compile(r"(://[^\s/:@]+:)([^\s/@]+)(@)"),  # https://user:password@host
    # A PEM private key (ssh, TLS, PGP), its body to the END line, or to the text's end when it was cut
    re.compile(r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)([\s\S]+?)(-----END [A-Z0-9 ]*PRIVATE KEY"
               r"(?: BLOCK)?-----|\Z)"),
]
# NAME=value, NAME: value, "name": "value", 'X-Amz-Security-Token': b'…'; the name is judged in Python.
# The name is a whole run of name characters, taken without backtracking (nothing that may follow it is a
# name character): a name could start after each "-" of a run, and each start read the rest of the run
# again, so one 40,000-character word "a-a-a-…" (a slash command, a log line) took 16 s to scrub.
# Not after "/": a path's last part is no name (``/etc/passwd: No such file`` hid "No").
_NAME_AND_SEPARATOR = (
    r"""(?<![A-Za-z0-9_./-])(?P<name>[A-Za-z0-9_.-]++)"""
    r"""(?P<close>\\?["']?)(?P<sep>[ \t]*[:=][ \t]*)"""
)
_PAIR = re.compile(_NAME_AND_SEPARATOR + r"""(?P<open>(?:b?\\?["'])?)(?P<value>[^\s"'\\,;&})\]]+)""")
# The same with a quoted value, taken whole to its closing quote: 'PGPASSWORD="correct horse battery"' lost
# only its first word to the pattern above. Only a closed quote on the same line counts (the value of a name
# that holds no secret is left for the pattern above, which reads the pairs inside it).
_QUOTED_PAIR = re.compile(_NAME_AND_SEPARATOR + r"""(?P<open>b?\\?(?P<q>["']))(?P<value>[^"'\n\\]++)(?=\\?(?P=q))""")
_FLAG = re.compile(r"(?<![\w-])(?P<name>--?[A-Za-z][\w-]*)(?P<sep>[ \t]+)(?P<value>[^\s-][^\s]*)")


def is_secret_name(name: str) -> bool:
    """True when a variable, key or flag name says it holds a secret (``WANDB_API_KEY``, ``hfToken``,
    ``db-password``), and not for names that merely contain the word (``KeyError``, ``max_tokens``)."""
    if name in _SHELL_DIRECTORIES:
        return False
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    if not parts:
        return False
    return (
        parts[-1] in _SECRET_WORDS
        or any(p in ("secret", "password", "passwd") for p in parts)
        or name.lower().endswith(_SECRET_SUFFIXES)
    )


def secret_env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment variables whose names say they are secrets (and AWS's key id)."""
    env = os.environ if environ is None else environ
    return [
        value
        for name, value in env.items()
        if value and len(value) >= MIN_KNOWN_SECRET and (is_secret_name(name) or name == "AWS_ACCESS_KEY_ID")
        and not _is_path(value, name)  # DB_PASSWORD_FILE=/run/secrets/db: where the secret is, not the secret
    ]


def without_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment without the variables :func:`secret_env_values` would name (Slack's tokens and
    signing secret, cloud and API keys) and AWS's key id: what a command tracebot starts elsewhere needs
    (``srun`` onto a job's nodes), which has no use for tracebot's credentials."""
    env = os.environ if environ is None else environ
    return {name: value for name, value in env.items() if not (is_secret_name(name) or name == "AWS_ACCESS_KEY_ID")}


def _looks_random(s: str) -> bool:
    return any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)


def _aws_secret(m: re.Match[str]) -> str:
    s = m.group(0)
    # A path of exactly 40 characters (``/opt/ml/...``) is not a key: keys start anywhere, rarely with /.
    return REDACTED if _looks_random(s) and not s.startswith("/") and s.count("/") <= 2 else s


# An absolute or home path of two parts or more: ``/etc/passwd``, ``/run/secrets/db_password``.
_PATH = re.compile(r"~?(?:/[\w.@+-]+){2,}/?")


# A setting's name that says it holds where a secret is (``--password-file``, ``HF_TOKEN_PATH``), and a
# path's last part that names a file by its kind (``server.key``, ``token.json``).
_WHERE_NAME = re.compile(r"(?i)(?:file|path|dir|directory|location)s?$")
_FILE_NAME = re.compile(r"[\w@+-]+\.[A-Za-z][A-Za-z0-9]{0,7}/?$")


def _is_path(value: str, name: str = "") -> bool:
    """``value``, given to the secret-named setting ``name``, is where a secret is (a password *file*, a key
    *file*), which is no secret: a path of names (a slash, then parts none of which mixes cases and digits as
    a key or a password does: ``/K7MDENG/bPxRfiCY…``, an AWS secret key, may start with a slash) that the
    name says is a place or whose last part is a file's name with its kind. ``PASSWORD=/correct/horse/staple``
    says neither: a passphrase may look like a path, and it stays hidden."""
    if not _PATH.fullmatch(value) or any(_looks_random(part) for part in value.split("/")):
        return False
    return bool(_WHERE_NAME.search(name.strip("-\"'")) or _FILE_NAME.search(value))


def _ticks(value: str) -> str:
    """The backticks ``value`` ends with: the close of the code span or block a reply quotes the line in
    (``password=hunter2```), which redacted with the value left the rest of the reply unformatted."""
    return value[len(value.rstrip("`")) :]


def _pair(m: re.Match[str]) -> str:
    if not is_secret_name(m["name"]) or m["value"].startswith("[redacted") or _is_path(m["value"], m["name"]):
        return m.group(0)
    return f"{m['name']}{m['close']}{m['sep']}{m['open']}{REDACTED}{_ticks(m['value'])}"


def _flag(m: re.Match[str]) -> str:
    if not is_secret_name(m["name"].lstrip("-")) or m["value"].startswith("[redacted") or _is_path(m["value"], m["name"]):
        return m.group(0)
    return f"{m['name']}{m['sep']}{REDACTED}{_ticks(m['value'])}"


class Scrubber:
    """Replaces known secret values and secret-shaped text with ``[redacted]``."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        known = {s for s in secrets if s and len(s) >= MIN_KNOWN_SECRET}
        # Longest first, so a secret that contains another one is removed whole.
        self.known = sorted(known, key=len, reverse=True)

    @classmethod
    def for_process(cls, extra: Iterable[str | None] = ()) -> Scrubber:
        """The given values plus tracebot's own secret environment values."""
        return cls([*extra, *secret_env_values()])

    def text(self, text: str) -> str:
        for secret in self.known:
            if secret in text:
                text = text.replace(secret, REDACTED)
        text = _SHAPES.sub(REDACTED, text)
        for pattern in _LABELLED:
            text = pattern.sub(lambda m: m.group(1) + REDACTED + _ticks(m.group(2)) + (m.group(3) if m.lastindex == 3 else ""), text)
        text = _QUOTED_PAIR.sub(_pair, text)
        text = _PAIR.sub(_pair, text)
        text = _FLAG.sub(_flag, text)
        return _AWS_SECRET.sub(_aws_secret, text)

    def data(self, value: Any) -> Any:
        """``value`` with every string in it (dict values, list items, recursively) scrubbed."""
        return map_strings(value, self.text)

    def content(self, data: bytes) -> bytes:
        """A file's bytes: scrubbed when it is UTF-8 text, unchanged when binary (an image)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        return self.text(text).encode("utf-8")


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it: dict values and list items, recursively."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_strings(v, fn) for v in value)
    return value


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with each of ``secrets`` and every secret-shaped string replaced by ``[redacted]``."""
    return Scrubber(secrets).text(text)


class ScrubLogFilter(logging.Filter):
    """On a handler: every record's message, arguments and traceback leave scrubbed, at every level."""

    def __init__(self, scrubber: Scrubber) -> None:
        super().__init__()
        self.scrubber = scrubber

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: the handler reports it, with nothing substituted
            message = str(record.msg)
        record.msg, record.args = self.scrubber.text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrubber.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrubber.text(record.stack_info)
        return True


def install_log_filter(scrubber: Scrubber, logger: logging.Logger | None = None) -> ScrubLogFilter:
    """Put one :class:`ScrubLogFilter` on every handler of ``logger`` (the root logger by default)."""
    logger = logger or logging.getLogger()
    log_filter = ScrubLogFilter(scrubber)
    for handler in logger.handlers:
        for old in [f for f in handler.filters if isinstance(f, ScrubLogFilter)]:
            handler.removeFilter(old)
        handler.addFilter(log_filter)
    return log_filter


# Control characters a terminal acts on (ESC starts a sequence that can set the title, clear the screen
# or write the clipboard; C1's CSI does the same alone; BEL, backspace): a job's log and name are its
# owner's, and an admin reads them here. Tab, newline and carriage return (tracebot's progress bar) stay.
# Unicode's directional overrides and isolates (U+202A-202E, U+2066-2069) reorder what the terminal shows,
# and so do its invisible marks (U+200E LRM, U+200F RLM, U+061C ALM) in a terminal that lays out
# bidirectional text (VTE, Konsole, mlterm): a mark is a strong letter of its direction, so one at a
# line's start turns the line right-to-left ("4411 4412 killed" shows as "killed 4412 4411") and one
# beside numbers or punctuation reorders them. None of them is text a log needs; all are shown as "?".
BIDI_CONTROLS = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TERMINAL_CONTROLS = dict.fromkeys([*range(0x20), 0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS], "?")
for _kept in "\t\n\r":
    del _TERMINAL_CONTROLS[ord(_kept)]


class ScrubbingStream:
    """A text stream (standard output or error) whose every write is scrubbed first, and whose terminal
    control characters and bidirectional controls (overrides, isolates, marks) are shown as ``?`` instead of
    acted on."""

    def __init__(self, inner: TextIO, scrubber: Scrubber) -> None:
        self.inner = inner
        self.scrubber = scrubber

    def write(self, text: str) -> int:
        self.inner.write(self.scrubber.text(text).translate(_TERMINAL_CONTROLS))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno... of the real stream
        return getattr(self.inner, name)


# Who wrote or ran something is nobody's business in a stored example: Slack mentions, e-mail addresses
# and home directories name people.
_PEOPLE = [
    (re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>"), "<@user>"),
    (re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+"), "user@example.com"),  # linear (see _PAIR)
    (re.compile(r"(/(?:home|Users|scratch|fsx/home|u)/)[^/\s]+"), r"\1user"),
    (re.compile(r"(?<![\w.])@[a-z][\w.-]{1,30}\b"), "@user"),
]


def without_people(text: str) -> str:
    """``text`` with user mentions, e-mail addresses, @handles and home-directory names replaced."""
    for pattern, placeholder in _PEOPLE:
        text = pattern.sub(placeholder, text)
    return text


def for_keeping(text: str, scrubber: Scrubber | None = None) -> str:
    """Text tracebot stores or exports as an example: secrets scrubbed and people's names removed."""
    return without_people((scrubber or Scrubber.for_process()).text(text))
