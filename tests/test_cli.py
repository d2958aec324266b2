"""The ``tracebot`` command line, run as a user runs it (a real subprocess of the installed script)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import entry_dict, write_kb

REPO = Path(__file__).resolve().parent.parent
TRACEBOT = [sys.executable, "-m", "tracebot.cli"]


def run(*args: str, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACEBOT, *args], input=stdin, capture_output=True, cwd=REPO, timeout=timeout)


CASCADE = "\n".join(
    ["slurm0-a3-ghpc-0: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    + [
        f"slurm0-a3-ghpc-{r // 8}: [rank{r}]:[E ProcessGroupNCCL.cpp:523] [Rank {r}] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE) ran for 600070 milliseconds before timing out."
        for r in range(4, 64)
    ]
)


def test_diagnose_a_log_file_names_the_root_cause_with_line_rank_host_and_fix(tmp_path: Path):
    log = tmp_path / "job.out"
    log.write_text(CASCADE)
    out = run("diagnose", str(log))
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    lead, first = text.split("\n\n")[:2]
    assert lead.startswith("First failure: line 1 (rank 3, host slurm0-a3-ghpc-0)") and "→ cuda-oom" in lead
    assert "[cuda-oom]" in first and "line 1 (rank 3 on slurm0-a3-ghpc-0)" in first
    assert "fix:" in first and "source:" in first
    assert "After the first failure: 60 watchdog timeouts on 60 ranks follow it." in text
    assert text.index("[cuda-oom]") < text.index("[nccl-watchdog-timeout]")


def test_diagnose_json_from_stdin_and_gzip(tmp_path: Path):
    out = run("diagnose", "--json", "-", stdin=gzip.compress(CASCADE.encode()))
    d = json.loads(out.stdout)
    assert d["matches"][0]["entry_id"] == "cuda-oom" and d["matches"][0]["confident"] is True
    assert d["matches"][0]["ranks"] == ["3"]


def test_diagnose_says_a_question_resembles_an_entry_not_that_it_was_found_at_one():
    # "found at the question resembles “…”" was how a prose question's match was placed.
    out = run("diagnose", "-", stdin=b"my training keeps running out of GPU memory, how do I fix it?\n")
    text = out.stdout.decode()
    assert out.returncode == 0 and "   why: the question resembles “" in text, text
    assert "found at the question" not in text


def test_diagnose_batch_prints_one_line_per_case_best_first_at_most_five(tmp_path: Path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "a", "text": CASCADE}) + "\n" + json.dumps({"id": "b", "text": "thanks!"}) + "\n"
    )
    out = run("diagnose", "--batch", str(cases), "--json")
    lines = [json.loads(x) for x in out.stdout.decode().splitlines()]
    assert [x["id"] for x in lines] == ["a", "b"]
    first = lines[0]["matches"][0]
    # the first answer's shown score is its own (only a later one is shown at most as sure as the one above it)
    assert first == {"id": "cuda-oom", "score": first["score"], "score_shown": first["score"], "confident": True}
    assert len(lines[0]["matches"]) <= 5
    assert not any(m["confident"] for m in lines[1]["matches"])


def test_diagnose_a_missing_file_is_a_clear_error():
    out = run("diagnose", "/nonexistent/job.out")
    assert out.returncode == 2 and b"no such file" in out.stderr


def test_a_threshold_off_the_0_to_100_scale_is_refused_not_silently_making_every_match_unconfident(tmp_path: Path):
    log = tmp_path / "oom.txt"
    log.write_text(CASCADE)
    for bad in ("500", "-1", "nan", "high"):
        out = run("diagnose", str(log), "--threshold", bad)
        assert out.returncode == 2, (bad, out.stdout.decode())
        assert b"--threshold" in out.stderr and b"from 0 to 100" in out.stderr
    assert run("diagnose", str(log), "--threshold", "90").returncode == 0


def test_diagnose_a_directory_or_a_fifo_says_what_it_is_and_a_bad_batch_file_is_explained(tmp_path: Path):
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    binary = tmp_path / "cases.jsonl"
    binary.write_bytes(b'\xff\xfe{"text": "x"}\n')
    core = tmp_path / "core.log"  # a core dump's bytes read as a log gave error guesses from their noise
    core.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64)
    expected = [
        (("diagnose", str(core)), b"not a text file (binary content)"),
        (("diagnose", str(tmp_path)), b"a directory, not a file"),
        (("diagnose", str(fifo)), b"not a regular file"),
        (("diagnose", "--batch", str(tmp_path / "missing.jsonl")), b"no such file"),
        (("diagnose", "--batch", str(binary)), b"not UTF-8 text (byte 0xff at offset 0)"),
    ]
    for args, said in expected:
        out = run(*args)
        assert out.returncode == 2 and said in out.stderr and b"Traceback" not in out.stderr, (args, out.stderr)


def test_a_batch_with_bad_lines_names_every_one_and_answers_none_rather_than_stopping_halfway(tmp_path: Path):
    # it printed the cases before the first bad line, then stopped: a CI step got half its answers, and
    # each run told one more bad line ("list indices must be integers or slices, not str")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join([
        json.dumps({"id": "a", "text": "CUDA out of memory"}),
        json.dumps(["CUDA out of memory"]),
        json.dumps({"id": "c", "txt": "typo"}),
        '{"id": "d", "text": "unterminated',
        json.dumps({"id": "e", "text": "NCCL watchdog timeout"}),
    ]) + "\n")
    out = run("diagnose", "--batch", str(cases), "--json")
    assert out.returncode == 2 and out.stdout == b"", out.stdout
    err = out.stderr.decode()
    assert f"{cases}:2: a JSON array, not an object with 'text'" in err, err
    assert f"{cases}:3: no 'text' in this object" in err and f"{cases}:4: not JSON" in err, err
    assert "Traceback" not in err and ":1:" not in err and ":5:" not in err


def test_diagnose_a_missing_file_says_so_before_reading_the_knowledge_base(tmp_path: Path):
    # the file is checked first: a typo in its name is told at once, not after the knowledge base has been
    # parsed and its model trained (seconds at 1,000 entries), nor hidden behind a knowledge base's problem
    empty = tmp_path / "knowledge"
    empty.mkdir()
    out = run("diagnose", "--knowledge", str(empty), str(tmp_path / "misspelt.log"))
    assert out.returncode == 2, out.stderr
    assert b"misspelt.log: no such file" in out.stderr and b"no knowledge entries" not in out.stderr, out.stderr


def test_kb_lint_fails_with_file_and_line_for_a_broken_entry(tmp_path: Path):
    root = write_kb(tmp_path / "knowledge", [entry_dict("fine"), entry_dict("broken", role="whatever")])
    out = run("kb", "lint", "--knowledge", str(root))
    assert out.returncode == 1
    assert "broken.yaml:4: 'role' must be one of root-cause, symptom" in out.stdout.decode()


def test_kb_lint_reports_an_example_that_another_entry_steals(tmp_path: Path):
    thief = entry_dict("thief", recognise={"anchors": ["victim happened"]}, priority=90)
    root = write_kb(tmp_path / "knowledge", [entry_dict("victim"), thief])
    out = run("kb", "lint", "--knowledge", str(root)).stdout.decode()
    assert "victim.yaml" in out and "does not make victim win: first was thief" in out
    # and what to do about it: the example moves, or one of the patterns changes
    assert "if thief is the answer an on-call engineer wants first, the example belongs there" in out


def test_kb_lint_says_what_to_do_about_an_example_nothing_answers_or_a_near_miss_that_fires(tmp_path: Path):
    lonely = entry_dict("lonely", examples={"match": ["my training froze at step 9"], "no_match": ["lonely happened again"]})
    out = run("kb", "lint", "--knowledge", str(write_kb(tmp_path / "knowledge", [lonely]))).stdout.decode()
    assert "does not make lonely win: nothing matched (quote its error line in an anchor or regex of lonely" in out
    assert "examples.no_match[0] confidently matched by anchor 'lonely happened'" in out
    assert "make it say what this near miss does not, or drop the near miss if lonely is its answer" in out


def test_kb_list_show_and_search():
    listed = json.loads(run("kb", "list", "--json").stdout)
    assert any(e["id"] == "nccl-watchdog-timeout" and e["role"] == "symptom" for e in listed)
    shown = run("kb", "show", "master-port-in-use").stdout.decode()
    assert "fix:" in shown and "source:" in shown
    found = run("kb", "search", "GPU", "memory", "held", "by", "a", "dead", "process").stdout.decode()
    assert "gpu-zombie-process" in found.splitlines()[0]
    assert run("kb", "show", "no-such-entry").returncode == 2


def test_kb_search_lists_only_entries_that_use_the_words_or_says_nothing_matched():
    # "/trace kb flux" listed cuda-illegal-memory-access and a TensorFlow convergence entry: they share
    # letters with "flux" (fluent, influx), not a word.
    assert run("kb", "search", "flux").stdout.decode().strip() == "no entry resembles that"
    found = [line.split()[0] for line in run("kb", "search", "zombie").stdout.decode().splitlines()]
    assert found == ["gpu-zombie-process"]
    preempted = [line.split()[0] for line in run("kb", "search", "preemption").stdout.decode().splitlines()]
    assert preempted == ["slurm-preempted"]
    # a form of a word or a slip still finds what uses it; asking words alone find nothing
    assert "amd-iommu-hang" in run("kb", "search", "hanging").stdout.decode()
    assert "nccl-watchdog-timeout" in run("kb", "search", "timeouts").stdout.decode()
    assert run("kb", "search", "dataloder").stdout.decode().split()[0] == "dataloader-shm-bus-error"
    assert run("kb", "search", "how to fix this error").stdout.decode().strip() == "no entry resembles that"


def test_kb_eval_reports_accuracy_and_fails_below_a_floor(tmp_path: Path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "oom", "text": CASCADE, "expected": "cuda-oom"},
                {"id": "chat", "text": "thanks, that fixed it!", "expected": None},
                {"id": "wrong-label", "text": CASCADE, "expected": "amd-iommu-hang"},
            ]
        )
    )
    out = run("kb", "eval", str(cases), "--json")
    rep = json.loads(out.stdout)
    assert (rep["positives"], rep["negatives"], rep["top1"], rep["false_positive_rate"]) == (2, 1, 0.5, 0.0)
    assert rep["misses"][0]["id"] == "wrong-label"
    assert run("kb", "eval", str(cases), "--min-top1", "0.9").returncode == 1


def test_trace_usage_in_a_terminal_names_the_command_a_shell_runs():
    out = run("trace", "job")
    assert out.returncode == 2
    assert "Which job? Give its id." in out.stdout.decode()
    assert "Usage: `tracebot trace job <jobid>`" in out.stdout.decode() and "Usage: `/trace" not in out.stdout.decode()
    unknown = run("trace", "nosuch").stdout.decode()
    assert "Usage: `tracebot trace help`" in unknown


def test_kb_eval_of_a_missing_cases_file_says_so_in_words_and_has_no_cwd_relative_default(tmp_path: Path):
    for args in (["kb", "eval", str(tmp_path / "casse.jsonl")], ["kb", "eval", str(tmp_path / "casse.jsonl"), "--compare", "main"]):
        out = run(*args)
        assert out.returncode == 2
        assert out.stderr.decode().strip() == f"error: {tmp_path / 'casse.jsonl'}: no such cases file"
    assert "Is a directory" in run("kb", "eval", str(tmp_path)).stderr.decode()
    # run from anywhere, `kb eval` with no file asks for one rather than looking for tests/corpus there
    bare = subprocess.run([*TRACEBOT, "kb", "eval"], capture_output=True, cwd=tmp_path, timeout=60)
    assert bare.returncode == 2 and "CASES.jsonl" in bare.stderr.decode() and "Errno" not in bare.stderr.decode()


def test_diagnose_s_fast_exit_prints_the_whole_answer_with_the_exit_code_of_a_normal_exit(tmp_path: Path, capsys):
    # `diagnose` ends without the interpreter's teardown (cli.exit_now): its output, block-buffered into a
    # pipe, must still all arrive, and say what the in-process command says
    from tracebot.cli import main

    log = tmp_path / "job.out"
    log.write_text(CASCADE)
    out = subprocess.run([*TRACEBOT, "diagnose", "--json", "--all", str(log)], capture_output=True, cwd=REPO,
                         timeout=60, env=BUFFERED)
    assert out.returncode == 0, out.stderr
    assert main(["diagnose", "--json", "--all", str(log)]) == 0
    assert out.stdout.decode() == capsys.readouterr().out and json.loads(out.stdout)["matches"]
    assert run("diagnose", str(tmp_path / "missing.log")).returncode == 2


BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # output to a pipe waits for a flush


def _exit_now_in_a_child(body: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", f"import atexit, sys, threading\nfrom tracebot.cli import exit_now\n{body}"],
        capture_output=True, text=True, timeout=60, check=False, env=BUFFERED,
    )


def test_exit_now_flushes_output_and_runs_the_exit_handlers_it_stands_in_for():
    # weakref.finalize's callbacks among them: a matcher whose model was never needed stops its idle
    # training helper through one (tracebot.matcher.loading.matcher_of)
    out = _exit_now_in_a_child(
        "import weakref\n"
        "class Matcher: pass\n"
        "alive = Matcher()\n"
        "weakref.finalize(alive, print, 'helper stopped')\n"
        "atexit.register(lambda: print('exit handler ran'))\n"
        "print('answer', end='')\n"  # block-buffered into the pipe, and no newline: only a flush writes it
        "sys.stderr.write('note')\n"
        "exit_now(3)\n"
        "print('not reached')"
    )
    assert (out.returncode, out.stdout, out.stderr) == (3, "answerexit handler ran\nhelper stopped\n", "note")


def test_exit_now_leaves_the_exit_to_the_interpreter_while_a_thread_is_still_working():
    # a thread that is not a daemon is work the normal exit waits for: exit_now returns, and the caller exits
    out = _exit_now_in_a_child(
        "go = threading.Event()\n"
        "worker = threading.Thread(target=lambda: (go.wait(), print('thread finished')))\n"
        "worker.start()\n"
        "exit_now(3)\n"
        "print('returned')\n"
        "go.set()\n"
        "sys.exit(4)"
    )
    assert (out.returncode, out.stdout) == (4, "returned\nthread finished\n"), out.stderr


def test_exit_now_leaves_a_failing_flush_to_the_interpreter_s_own_exit():
    # standard output closed by the reader: the normal exit reports it (status 120), as it did before
    out = _exit_now_in_a_child("import os\nprint('x' * 100)\nos.close(1)\nexit_now(0)\nprint('returned', file=sys.stderr)")
    assert out.returncode == 120 and "returned" in out.stderr


def test_diagnose_whose_output_cannot_be_written_says_so_in_one_line(tmp_path: Path):
    # `> /dev/full` printed an OSError traceback; `>&-` (stdout closed) an AttributeError one (review16)
    log = tmp_path / "job.out"
    log.write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    with open("/dev/full", "wb") as full:
        out = subprocess.run([*TRACEBOT, "diagnose", str(log)], stdout=full, stderr=subprocess.PIPE, cwd=REPO,
                             timeout=60, env=BUFFERED)
    assert out.returncode == 1 and b"Traceback" not in out.stderr, out.stderr
    assert b"error: could not write the output: No space left on device" in out.stderr
    closed = subprocess.run([*TRACEBOT, "diagnose", str(log)], stderr=subprocess.PIPE, cwd=REPO, timeout=60,
                            preexec_fn=lambda: os.close(1))
    assert closed.returncode == 2 and b"Traceback" not in closed.stderr, closed.stderr
    assert b"standard output is closed" in closed.stderr


def test_diagnose_typed_with_no_file_says_it_is_reading_the_terminal_and_answers_the_paste():
    """`tracebot diagnose` with nothing after it waited in silence for standard input, looking hung."""
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([*TRACEBOT, "diagnose"], stdin=follower, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=REPO)
        os.close(follower)
        os.write(leader, b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n\x04")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
    assert "paste it, then press Ctrl-D" in err.decode()
    assert "[cuda-oom]" in out.decode()
    assert "Ctrl-D" not in run("diagnose", stdin=b"RuntimeError: CUDA out of memory.\n").stderr.decode()


def test_diagnosing_blank_input_says_there_is_nothing_to_diagnose_not_three_closest_entries(tmp_path: Path):
    """Blank space piped in, or a blank or empty file, was answered 'No confident match. Closest entries:'
    with three entries matched to nothing (device-side asserts, ECC errors)."""
    blank, empty = tmp_path / "blank.log", tmp_path / "empty.log"
    blank.write_text("   \n\n\t\n")
    empty.write_bytes(b"")
    for out in (run("diagnose", "-", stdin=b"  \n \n"), run("diagnose", str(blank)), run("diagnose", str(empty))):
        said = out.stdout.decode()
        assert out.returncode == 0 and "nothing to diagnose" in said and "Closest entries" not in said, said
        assert "[" not in said, "no entry is named"
    # (a text naming a failure, that is: a chat line naming none is asked for the error, test_views_agree.py)
    assert "Closest entries" in run("diagnose", "-", stdin=b"my training hangs after a few hours, any idea\n").stdout.decode()


def test_stats_and_audit_on_a_database_that_is_not_there_say_so_and_create_nothing(tmp_path: Path):
    """They created the database, and its folder, wherever a mistyped TRACEBOT_DB pointed, then said
    'No diagnoses recorded yet in …' about the file they had just made."""
    missing = tmp_path / "typo" / "tracebot.sqlite3"
    env = {**os.environ, "TRACEBOT_DB": str(missing)}
    for args in (["stats"], ["stats", "--unanswered"], ["audit"], ["stats", "--json"], ["audit", "--json"]):
        out = subprocess.run([*TRACEBOT, *args], capture_output=True, cwd=REPO, timeout=60, env=env)
        assert out.returncode == 0, out.stderr
        said = out.stdout.decode()
        assert ("--json" in args and json.loads(said)) or f"there is no database at {missing}" in said, said
    assert not missing.parent.exists()


def _run_env(*args: str, stdin: bytes | None = None, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TRACEBOT_", "PORT"))}
    return subprocess.run(
        [*TRACEBOT, *args], input=stdin, capture_output=True, cwd=REPO, timeout=60, env={**base, **env}
    )


def test_a_bad_port_in_the_environment_stops_only_the_commands_that_listen_with_one_line():
    """``PORT=abc`` was read when the parser was built: every command, ``--help`` and ``diagnose`` too,
    ended in a ValueError traceback."""
    assert _run_env("--help", PORT="abc").returncode == 0
    out = _run_env("diagnose", "-", stdin=b"CUDA out of memory\n", PORT="abc")
    assert out.returncode == 0 and b"cuda-oom" in out.stdout, out.stderr
    listening = (
        _run_env("serve", PORT="abc"),
        _run_env("run", PORT="abc", SLACK_BOT_TOKEN="xoxb-x", SLACK_SIGNING_SECRET="s"),
    )
    # `run` has no --port (it reads $PORT alone): the hint names the flag only where it exists
    for out, hint in zip(listening, (" (or give --port)", ""), strict=True):
        said = out.stderr.decode()
        assert out.returncode == 1 and said == f"error: PORT {NOT_A_PORT % 'abc'}{hint}\n", said
    out = _run_env("serve", "--port", "abc")
    assert out.returncode == 2 and f"argument --port: {NOT_A_PORT % 'abc'}" in out.stderr.decode()


NOT_A_PORT = "must be a port number from 1 to 65535, got '%s'"


def test_a_port_out_of_range_is_refused_not_wrapped_round_by_waitress():
    """``serve --port 99999`` listened on 34463 (waitress takes it modulo 65536) and said nothing."""
    for port in ("99999", "65536", "0", "-1"):
        out = _run_env("serve", "--port", port)
        assert out.returncode == 2 and f"argument --port: {NOT_A_PORT % port}" in out.stderr.decode(), port
        out = _run_env("serve", PORT=port)
        assert out.returncode == 1 and out.stderr.decode() == f"error: PORT {NOT_A_PORT % port} (or give --port)\n"


def test_serve_and_run_help_say_where_they_listen_and_the_defaults():
    said = " ".join(_run_env("serve", "--help").stdout.decode().split())
    assert "--port PORT port to listen on, 1-65535 (default: $PORT, else 3000)" in said, said
    assert "--host HOST address to listen on (default: 0.0.0.0" in said, said
    said = " ".join(_run_env("run", "--help").stdout.decode().split())
    assert "on 0.0.0.0, port $PORT or 3000" in said, said


def test_tracebot_model_switched_off_in_any_of_the_usual_words_is_off_and_an_unknown_word_is_refused():
    """Only ``0`` turned the model off: ``off``, ``false`` and ``no`` silently left it on."""
    paste = b"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"

    def scores(model: str) -> list[tuple[str, float]]:
        out = _run_env("diagnose", "--json", "-", stdin=paste, TRACEBOT_MODEL=model)
        assert out.returncode == 0, out.stderr
        return [(m["entry_id"], m["score"]) for m in json.loads(out.stdout)["matches"]]

    without, with_model = scores("0"), scores("1")
    assert without != with_model  # what the switch changes, on this paste
    assert all(scores(word) == without for word in ("off", "false", "No", " OFF "))
    assert all(scores(word) == with_model for word in ("on", "true", "yes"))
    out = _run_env("diagnose", "-", stdin=paste, TRACEBOT_MODEL="of")
    said = out.stderr.decode()
    assert out.returncode == 1 and said == (
        "error: TRACEBOT_MODEL must be on or off (also true/false, yes/no, 1/0), got 'of'\n"
    ), said


def test_the_listening_line_gives_a_url_that_opens_for_an_ipv6_host_too():
    from tracebot.cli import listen_url

    assert listen_url("::", 3000, "/slack/events") == "http://[::]:3000/slack/events"
    assert listen_url("::1", 8080, "/slack/events") == "http://[::1]:8080/slack/events"
    assert listen_url("0.0.0.0", 3000, "/slack/events") == "http://0.0.0.0:3000/slack/events"


def test_kb_eval_cv_seed_deals_the_sources_into_other_folds(tmp_path: Path):
    from tracebot.authoring.evaluate import CV_SEED, Case, folds_by_source

    cases = [Case(id=f"c{i}", expected=None, also_ok=[], source=f"https://github.com/o/r/issues/{i}") for i in range(40)]
    default = folds_by_source(cases, 5, CV_SEED)
    assert folds_by_source(cases, 5, CV_SEED) == default  # the same seed, the same folds
    assert folds_by_source(cases, 5, 1) != default
    assert sorted(set(default.values())) == [0, 1, 2, 3, 4]
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "oom", "text": CASCADE, "expected": "cuda-oom", "source": "https://github.com/o/r/issues/1"},
                {"id": "chat", "text": "thanks, that fixed it!", "expected": None, "source": "https://github.com/o/r/issues/2"},
            ]
        )
    )
    rep = json.loads(run("kb", "eval", str(path), "--cv", "2", "--cv-seed", "3", "--cv-kb-only", "--json").stdout)
    assert (rep["folds"], rep["positives"], rep["top1"], rep["false_positive_rate"]) == (2, 1, 1.0, 0.0)


def test_diagnose_json_says_when_standard_input_was_cut(monkeypatch, capsys):
    # Standard input past 512 MB was cut with a note on stderr only: --json read as the whole input.
    import io

    from tracebot import cli

    monkeypatch.setattr(cli, "MAX_STDIN_BYTES", 4096)
    paste = b"step 1 loss 2.0\n" * 1000 + b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(paste)))
    assert cli.main(["diagnose", "-", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["truncated"] is True and said["bytes_read"] <= 4096
    assert "standard input: read the first 4 KB only (limit)" in said["notes"]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(paste)))
    assert cli.main(["diagnose", "-"]) == 0
    assert "note: standard input: read the first 4 KB only (limit)" in capsys.readouterr().out


def test_kb_eval_refuses_a_gzip_log_fixture_that_unpacks_past_its_limit(tmp_path: Path, monkeypatch, capsys):
    # A case's .gz fixture was unpacked whole (gzip.decompress): a few KB unpacking to gigabytes took the
    # evaluating machine's memory. It is read up to a limit and refused with the reason.
    from tracebot import cli
    from tracebot.authoring import evaluate

    monkeypatch.setattr(evaluate, "MAX_FIXTURE_BYTES", 1 << 20)
    (tmp_path / "bomb.log.gz").write_bytes(gzip.compress(b"\0" * (3 << 20)))
    (tmp_path / "ok.log.gz").write_bytes(gzip.compress(CASCADE.encode()))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "ok", "file": "ok.log.gz", "expected": "cuda-oom"}) + "\n")
    assert cli.main(["kb", "eval", str(cases)]) == 0
    cases.write_text(cases.read_text() + json.dumps({"id": "bomb", "file": "bomb.log.gz", "expected": "cuda-oom"}) + "\n")
    capsys.readouterr()
    assert cli.main(["kb", "eval", str(cases)]) == 2
    said = capsys.readouterr().err
    assert f"error: {tmp_path / 'bomb.log.gz'}: unpacks to more than 1 MB; a case's log fixture must be smaller" in said


def test_a_batch_file_too_large_to_be_one_is_refused_before_it_is_read_whole(tmp_path: Path, capsys, monkeypatch):
    # `--batch` read the whole file into memory before looking at a line: a core dump or disk image given by
    # mistake took the machine's memory
    from tracebot import cli

    monkeypatch.setattr(cli, "MAX_BATCH_BYTES", 1 << 20, raising=False)
    batch = tmp_path / "cases.jsonl"
    line = json.dumps({"id": "x", "text": "CUDA out of memory"}) + "\n"
    batch.write_text(line * ((2 << 20) // len(line)))
    assert cli.main(["diagnose", "--batch", str(batch), "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and f"error: {batch}: larger than 1 MB; a --batch file is JSON lines" in out.err
