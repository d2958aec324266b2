"""What leaves tracebot through the terminal and the log: the CLI's text and --json output and every log
line, at every level, come out scrubbed of every kind of secret."""

from __future__ import annotations

import json
import logging

import pytest

from tracebot.cli import main
from tracebot.config import Config
from tracebot.secrets import scrub

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79 GiB"
SECRETS = {
    "slack": "xoxb-2024-1234567890-LeakedBotTokenValue",
    "aws key id": "AKIAZ7QX3LEAKTEST123",
    "aws secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYLEAKTEST99",
    "hugging face": "hf_LeakLeakLeakLeakLeakLeakLeakLeak12",
    "github": "ghp_LeakLeakLeakLeakLeakLeakLeakLeak1234",
    "github pat": "github_pat_11LEAK0_LeakLeakLeakLeakLeak",
    "wandb": "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
    "bearer": "eyJleak.bearer.Token99",
    "password": "hunter2-leaked",
    "jwt": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJsZWFrZWQifQ.c2lnTGVha2VkMTIz",
    "libpq password": "hunter3-leaked",
    "quoted passphrase": "horse battery staple",
    "private key": "MIIEowIBAAKCAQEAleakedKeyBody0123456789",
}
LINES = [
    f"{OOM} token {SECRETS['slack']}",
    f"{OOM} aws_access_key_id={SECRETS['aws key id']} aws_secret_access_key={SECRETS['aws secret']}",
    f"{OOM} huggingface-cli login --token {SECRETS['hugging face']}",
    f"{OOM} git clone https://{SECRETS['github']}@github.com/org/repo {SECRETS['github pat']}",
    f"{OOM} WANDB_API_KEY={SECRETS['wandb']}",
    f"{OOM} curl -H 'Authorization: Bearer {SECRETS['bearer']}'",
    f'{OOM} {{"password": "{SECRETS["password"]}"}}',
    f"{OOM} srun --export=SLURM_JWT env; curl -H 'X-Auth: {SECRETS['jwt']}'",
    f"{OOM} PGPASSWORD={SECRETS['libpq password']} psql -h db1",
    f'{OOM} password: "correct {SECRETS["quoted passphrase"]}"',
    f"{OOM}\n-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRETS['private key']}\n-----END OPENSSH PRIVATE KEY-----",
]


def _leaks(text: str) -> list[str]:
    return [kind for kind, value in SECRETS.items() if value in text]


def test_diagnose_text_and_json_output_carry_no_secret(tmp_path, capsys):
    log = tmp_path / "train.log"
    log.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    for args in (["diagnose", str(log), "--all"], ["diagnose", str(log), "--json", "--all"]):
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "CUDA out of memory" in out and "[redacted]" in out
        assert _leaks(out) == [], args
    assert main(["diagnose", str(log), "--json"]) == 0
    json.loads(capsys.readouterr().out)  # still valid JSON after scrubbing


def test_trace_json_output_and_usage_errors_carry_no_secret(capsys):
    main(["trace", "--json", "diagnose", *"\n".join(LINES).split(" ")])
    out, err = capsys.readouterr()
    assert "CUDA out of memory" in out and _leaks(out + err) == []
    json.loads(out)
    main(["trace", SECRETS["slack"]])  # "Unknown command `xoxb-…`"
    out, err = capsys.readouterr()
    assert "Unknown command" in out and _leaks(out + err) == []


def test_log_lines_at_every_level_and_tracebacks_carry_no_secret(debug_log):
    stream = debug_log(Config(slack_bot_token=SECRETS["slack"]))
    log = logging.getLogger("tracebot.test")
    for level in (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR):
        for line in LINES:
            log.log(level, "read %s", line)
    try:
        raise RuntimeError(f"upload failed with {SECRETS['slack']} and {SECRETS['hugging face']}")
    except RuntimeError:
        log.exception("posting failed")
    written = stream.getvalue()
    assert written.count("read ") == 4 * len(LINES) and "RuntimeError: upload failed" in written
    assert _leaks(written) == []


def test_a_logs_terminal_escape_sequences_reach_the_terminal_as_text_never_as_commands(tmp_path, capsys):
    # a job's log (or name) is its owner's: an admin reading the answer in a terminal must not have
    # their clipboard written (OSC 52), their screen cleared or their title set by it
    hostile = "\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\x1b]0;owned\x07\x9b31m\b\b done"
    log = tmp_path / "bob.log"
    log.write_text(f"{OOM} {hostile}\n", encoding="utf-8")
    for args in (["diagnose", str(log), "--all"], ["diagnose", str(log), "--json", "--all"],
                 ["trace", "diagnose", OOM, hostile]):
        main(args)
        out, err = capsys.readouterr()
        assert "CUDA out of memory" in out, args
        shown = out + err
        assert not [c for c in "\x1b\x07\x9b\b" if c in shown], (args, shown)
        assert "]52;c;Y3VybCBldmlsfHNo" in shown, "what the log says is still shown"



def test_a_logs_bidirectional_overrides_reach_the_terminal_as_text_never_reordering_it(tmp_path, capsys):
    # Unicode's directional overrides and isolates make a terminal show a line's characters in another
    # order than they are ("Trojan Source"): a job's log line could make an admin read a path or a command
    # that is not the one it holds
    hostile = "rm -rf \u202e/ tsil\u202c \u2066x\u2069 \u2067y\u2069 \u2068z\u2069 \u202a\u202b\u202d"
    log = tmp_path / "bob.log"
    log.write_text(f"{OOM} {hostile}\n", encoding="utf-8")
    main(["diagnose", str(log), "--all"])
    out, err = capsys.readouterr()
    assert "CUDA out of memory" in out
    assert not [c for c in out + err if 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069], out + err
    assert "tsil" in out + err, "what the log says is still shown"


def test_a_logs_invisible_direction_marks_reach_the_terminal_as_text_never_turning_a_line_around(tmp_path, capsys):
    # An RLM (or ALM) at a line's start makes a bidi terminal lay the line out right to left: "4411 4412 killed"
    # reads "killed 4412 4411"; an LRM does the same inside right-to-left text. Shown as "?", like the overrides.
    marks = "\u200f\u061c\u200e"
    log = tmp_path / "bob.log"
    log.write_text(f"\u200f{OOM} kill 4411 4412 \u061cjob\u200e 7\n", encoding="utf-8")
    main(["diagnose", str(log), "--all"])
    out, err = capsys.readouterr()
    assert "kill 4411 4412 ?job? 7" in out, "what the log says is still shown"
    assert not [c for c in out + err if c in marks], out + err


@pytest.mark.timeout(60)
def test_a_wandb_login_line_with_many_flags_is_scrubbed_at_once_and_its_key_still_hidden():
    # each "--a" after "wandb login" could be read two ways ("--" + "a" or "-" + "-a"), so a line with n of
    # them and no key was tried 2^n ways: a pasted line or slash command of 250 characters held a worker (or
    # the audit, before Slack's acknowledgement) for longer than anyone waits; 2^60 here
    hostile = f"wandb login {'--a ' * 60}x"
    line = f"{OOM} wandb login --relogin --host-x {SECRETS['wandb']}; {hostile}"
    assert scrub(line) == f"{OOM} wandb login --relogin --host-x [redacted]; {hostile}"


def test_the_directory_tracebot_runs_in_is_shown_not_redacted_as_if_pwd_were_a_password(tmp_path, monkeypatch, capsys):
    # the shell's PWD (and OLDPWD) name directories: "pwd" in a name means a password only in names such
    # as DB_PWD. Read as secrets, every path under the working directory came out as "[redacted]/…": the
    # traceback's own file in a diagnosis, `kb show`'s "file:" line run from the repository
    work = tmp_path / "alice-llm-run"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    monkeypatch.setenv("OLDPWD", str(tmp_path))
    monkeypatch.setenv("MYSQL_PWD", "hunter2-leaked")
    log = work / "train.log"
    log.write_text(f"{OOM} while loading {work}/ckpt/step-900.pt (MYSQL_PWD is hunter2-leaked)\n")
    assert main(["diagnose", str(log), "--json"]) == 0
    out = capsys.readouterr().out
    assert f"{work}/ckpt/step-900.pt" in out and "hunter2-leaked" not in out


def test_a_slurm_jwt_in_tracebots_environment_is_scrubbed_from_its_log(debug_log, monkeypatch):
    # a cluster with AuthAltTypes=auth/jwt hands tracebot its SLURM_JWT: a credential for the controller, as
    # a key or token is, though its name says neither
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJ0cmFjZWJvdCJ9.c2lnbmF0dXJlLWxlYWstdGVzdA"
    monkeypatch.setenv("SLURM_JWT", jwt)
    stream = debug_log(Config())
    logging.getLogger("tracebot.test").error("scontrol failed: auth/jwt rejected token %s", jwt)
    written = stream.getvalue()
    assert "scontrol failed" in written and jwt not in written


@pytest.mark.parametrize("line", [
    "getpwnam failed reading /etc/passwd: No such file or directory",
    "PermissionError: [Errno 13] Permission denied: '/run/secrets/token: mode 600'",
    "PASSWD_FILE=/etc/passwd",
    "mysql --password-file /run/secrets/db_password --host db1",
    "ssl_key: /etc/ssl/private/server.key",
    "HF_TOKEN_PATH=~/.cache/huggingface/token",
])
def test_a_path_is_shown_as_it_is_even_where_a_secret_word_names_it(line: str):
    """A path's last part was read as a NAME (``/etc/passwd: No such file`` hid "No"), and a path given
    as the value of a secret-named setting (a password *file*, a key *file*) was hidden as if it were the
    password. Neither is a secret; the reader needs both to find the fault."""
    assert scrub(line) == line


@pytest.mark.parametrize("line, secret", [
    ("DB_PASSWORD=/xY9/qq", "/xY9/qq"),  # a password may start with a slash: not a path of names
    ("aws_secret_access_key=/K7MDENG/bPxRfiCYLEAKTEST99wJalrXUtnFEMI", "/K7MDENG/bPxRfiCYLEAKTEST99wJalrXUtnFEMI"),
    ("--password /hunter2leaked/Xy7", "/hunter2leaked/Xy7"),
    ("DB_PASSWORD: hunter2-leaked", "hunter2-leaked"),
    # a passphrase shaped like a path, under a name that says it is the secret itself, not where it is
    ("PASSWORD=/correct/horse/staple", "/correct/horse/staple"),
    ("--db-password /summer/holiday", "/summer/holiday"),
])
def test_a_secret_that_starts_with_a_slash_is_still_hidden(line: str, secret: str):
    assert secret not in scrub(line) and "[redacted]" in scrub(line)


@pytest.mark.parametrize("line, shown", [
    # a JWT needs no label: its header and claims are base64url JSON ("eyJ" is '{"')
    ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fw ok", "token [redacted] ok"),
    # a quoted value is hidden to its closing quote, not up to its first space
    ("export PGPASSWORD='correct horse battery' && psql", "export PGPASSWORD='[redacted]' && psql"),
    ('{"api_key": "abc def", "user": "bob"}', '{"api_key": "[redacted]", "user": "bob"}'),
    # a quoted text under a name that holds no secret is read for the pairs inside it
    ('msg: "loaded with password=hunter2 from file"', 'msg: "loaded with password=[redacted] from file"'),
    # a PEM private key, whole or cut short
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\nAoGBAM\n-----END EC PRIVATE KEY-----\nnext",
     "-----BEGIN EC PRIVATE KEY-----[redacted]-----END EC PRIVATE KEY-----\nnext"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "-----BEGIN OPENSSH PRIVATE KEY-----[redacted]"),
    # libpq's and MySQL's one-word names
    ("PGPASSWORD=hunter22 MYSQLPASSWD=hunter33", "PGPASSWORD=[redacted] MYSQLPASSWD=[redacted]"),
    # and what is no secret stays
    ("KeyError: 'password'", "KeyError: 'password'"),
    ("password: ''", "password: ''"),
    ("max_tokens: 'a b'", "max_tokens: 'a b'"),
])
def test_secrets_of_every_shape_are_hidden_and_only_they(line: str, shown: str):
    assert scrub(line) == shown
