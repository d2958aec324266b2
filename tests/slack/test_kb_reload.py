"""The knowledge base reloads when its files change; a broken entry keeps the last good one, reported."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from tests.conftest import KNOWLEDGE
from tests.slack import payloads
from tests.slack.blocks import texts
from tests.slack.harness import make_config, running_app
from tests.slack.tiny_kb import ENTRIES, OOM_LINE, write_tiny_kb
from tracebot.service.knowledge import KnowledgeHolder

NEW_ENTRY = (
    ENTRIES["cuda/test-cuda-oom.yaml"]
    .replace("test-cuda-oom", "test-flux-capacitor")
    .replace("CUDA out of memory", "Flux capacitor overheated")
    .replace("torch\\\\.(cuda\\\\.)?OutOfMemoryError", "FluxCapacitorError")
)


def _touch_later(path):
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_a_new_entry_is_picked_up_without_a_restart(tmp_path):
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    assert not holder.reload_if_changed(), "nothing changed, nothing reloaded"
    (root / "cuda" / "test-flux-capacitor.yaml").write_text(NEW_ENTRY.lstrip())
    assert holder.reload_if_changed()
    assert holder.kb.get("test-flux-capacitor") is not None
    assert (
        holder.matcher.diagnose("Flux capacitor overheated at 88 mph").best.entry_id == "test-flux-capacitor"
    )
    assert holder.errors == []


def test_a_broken_entry_keeps_the_last_good_knowledge_base_and_reports_the_error(tmp_path, caplog):
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    good = holder.current
    broken = root / "cuda" / "test-cuda-oom.yaml"
    broken.write_text("id: test-cuda-oom\ntitle: [unclosed\n")
    _touch_later(broken)
    assert holder.reload_if_changed()
    assert holder.current.kb is good.kb and holder.current.rejected
    assert holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom", (
        "still answers from the last good"
    )
    assert any("test-cuda-oom.yaml" in str(e) for e in holder.errors)
    broken.write_text(ENTRIES["cuda/test-cuda-oom.yaml"].lstrip())
    _touch_later(broken)
    caplog.clear()
    assert holder.reload_if_changed()
    assert holder.errors == [] and not holder.current.rejected and holder.current.version == good.version + 1
    # the log that said "keeping the last good knowledge base" says when that is over
    assert "knowledge base reloaded (2 entries): the change that was refused is fixed" in caplog.text


def test_the_app_home_shows_knowledge_base_load_errors_to_admins_and_only_that_there_is_one_to_others(slack):
    """Every viewer saw the errors' details, the server's paths among them."""
    broken = slack.config.knowledge_dir / "nccl" / "test-nccl-watchdog.yaml"
    broken.write_text("id: test-nccl-watchdog\nrole: [\n")
    _touch_later(broken)
    slack.tracebot.knowledge.reload_if_changed()
    shown = {}
    for user in ("U0ADMIN", "U0ALICE"):
        slack.event(payloads.home_opened(user=user))
        views = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish")[len(shown):])
        shown[user] = texts(views[0].params["view"]["blocks"])
    assert "Load errors" in shown["U0ADMIN"] and "test-nccl-watchdog.yaml" in shown["U0ADMIN"]
    alice = shown["U0ALICE"]
    assert "The knowledge base has a problem; admins see the details" in alice
    assert "Load errors" not in alice and "test-nccl-watchdog" not in alice and str(slack.config.knowledge_dir) not in alice
    assert "2 entries" in alice and "2 entries" in shown["U0ADMIN"], "the last good knowledge base is still in use"


def test_a_bot_refuses_to_start_on_an_empty_knowledge_directory(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    with pytest.raises(RuntimeError, match=f"{root}.*no knowledge entries"):
        KnowledgeHolder(root)


def test_emptying_the_knowledge_directory_keeps_the_last_good_knowledge_base(tmp_path):
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    good = holder.current
    for path in list(root.rglob("*.yaml")):
        path.unlink()
    assert holder.reload_if_changed()
    assert holder.current.kb is good.kb and holder.current.rejected
    assert holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom"
    assert any("no knowledge entries" in str(e) for e in holder.errors)


def test_a_repeated_key_keeps_the_last_good_entry_and_names_the_line(tmp_path):
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    path = root / "cuda" / "test-cuda-oom.yaml"
    path.write_text(path.read_text() + "title: A second title\n")
    _touch_later(path)
    assert holder.reload_if_changed()
    assert holder.current.rejected and holder.kb.get("test-cuda-oom").title != "A second title"
    line = len(path.read_text().splitlines())
    assert any(f"test-cuda-oom.yaml:{line}: YAML: duplicate key 'title'" in str(e) for e in holder.errors)


LONG_SILENCE = "silence:\n" + "  - {kind: chat, invented: true, text: 'thanks again and again'}\n" * 5000


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("silence.yaml", LONG_SILENCE, f"file is {len(LONG_SILENCE)} bytes; the limit is 262144"),
        ("sources.yaml", "a.txt: " + "[" * 50_000 + "]" * 50_000 + "\n",
         "YAML: nested too deeply (knowledge files are only a few levels deep)"),
    ],
)
def test_a_hostile_file_beside_the_entries_keeps_the_last_good_knowledge_base(tmp_path, name, text, error):
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    good = holder.current
    (root / name).write_text(text)
    assert holder.reload_if_changed()
    assert holder.current.kb is good.kb and holder.current.rejected
    assert holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom"
    assert [str(e) for e in holder.errors] == [f"kb/{name}:1: {error}"]
    (root / name).unlink()
    assert holder.reload_if_changed()
    assert holder.errors == [] and not holder.current.rejected


def test_a_reload_swaps_in_a_matcher_whose_ranking_model_is_already_trained(tmp_path, monkeypatch):
    # the CLI trains the model at the first paste that needs it; the bot must not make a user's paste wait
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACEBOT_CACHE", str(cache))
    root = tmp_path / "kb"
    shutil.copytree(KNOWLEDGE, root)
    holder = KnowledgeHolder(root)
    assert not holder.matcher.model_pending and holder.matcher.model is not None
    edited = root / "cuda" / "cuda-oom.yaml"
    edited.write_text(re.sub(r"^title: .*$", "title: CUDA ran out of GPU memory", edited.read_text(), count=1, flags=re.M))
    _touch_later(edited)
    assert holder.reload_if_changed() and not holder.current.rejected
    assert not holder.matcher.model_pending  # trained before it was swapped in
    assert len(list(cache.glob("model-*.pkl"))) == 2  # the edited knowledge base's model, beside the first
    answer = holder.matcher.diagnose("my training job runs out of GPU memory at step 100, how can I fix it?").best
    assert answer.entry_id == "cuda-oom" and answer.probability is not None


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _failing_for_the_new_entry(failures: list[Exception]):
    """A matcher factory whose model training fails (with ``failures``, in turn) for the knowledge base with the
    new entry: what a reload sees when training runs out of memory or its helper crashes."""
    from tracebot.matcher import Matcher

    def factory(kb, threshold):
        if kb.get("test-flux-capacitor") is not None and failures:
            raise failures.pop(0)
        return Matcher(kb, threshold=threshold)

    return factory


def test_a_reload_whose_model_fails_to_train_is_retried_with_backoff_and_says_what_failed(tmp_path, caplog):
    root = write_tiny_kb(tmp_path / "kb")
    clock = _Clock()
    failures: list[Exception] = [MemoryError("training ran out of memory"), RuntimeError("helper crashed")]
    holder = KnowledgeHolder(root, matcher_factory=_failing_for_the_new_entry(failures), clock=clock,
                             retry_s=30, retries=3)
    good = holder.current
    (root / "cuda" / "test-flux-capacitor.yaml").write_text(NEW_ENTRY.lstrip())
    assert holder.reload_if_changed()
    assert holder.current.kb is good.kb and holder.current.rejected  # the last good one keeps serving
    assert holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom"
    assert [str(e) for e in holder.errors] == [
        "model training failed: MemoryError: training ran out of memory (retry 1 of 3 in 30 s)"]
    assert "model training failed: MemoryError: training ran out of memory" in caplog.text
    clock.now = 29.9
    assert not holder.reload_if_changed(), "no file changed and the retry is not due"
    clock.now = 30
    assert holder.reload_if_changed()
    assert [str(e) for e in holder.errors] == ["model training failed: RuntimeError: helper crashed (retry 2 of 3 in 60 s)"]
    clock.now = 89
    assert not holder.reload_if_changed()
    clock.now = 90
    assert holder.reload_if_changed()  # trains this time
    assert holder.errors == [] and not holder.current.rejected and holder.current.version == good.version + 1
    assert holder.matcher.diagnose("Flux capacitor overheated at 88 mph").best.entry_id == "test-flux-capacitor"
    clock.now = 10_000
    assert not holder.reload_if_changed(), "nothing left to retry"


def test_a_reload_whose_model_never_trains_gives_up_after_its_retries_until_a_file_changes(tmp_path):
    root = write_tiny_kb(tmp_path / "kb")
    clock = _Clock()
    failures = [RuntimeError(f"failure {n}") for n in range(1, 6)]
    holder = KnowledgeHolder(root, matcher_factory=_failing_for_the_new_entry(failures), clock=clock,
                             retry_s=10, retries=2)
    good = holder.current
    new = root / "cuda" / "test-flux-capacitor.yaml"
    new.write_text(NEW_ENTRY.lstrip())
    attempts = 0
    for clock.now in (0, 10, 30, 1_000_000):  # the first try, then retries after 10 s and 20 s more
        attempts += holder.reload_if_changed()
    assert attempts == 3 and len(failures) == 2  # the first try and two retries, then no more
    assert [str(e) for e in holder.errors] == [
        "model training failed: RuntimeError: failure 3 (gave up after 2 retries; a change under knowledge/ tries again)"]
    assert holder.current.kb is good.kb and holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom"
    _touch_later(new)
    assert holder.reload_if_changed()  # a change starts again
    assert [str(e) for e in holder.errors] == ["model training failed: RuntimeError: failure 4 (retry 1 of 2 in 10 s)"]


def test_the_app_home_of_the_bundled_knowledge_base_points_at_trace_kb_for_what_does_not_fit(
    tmp_path, fake_slack, plugin_host
):
    host, _slow = plugin_host
    with running_app(make_config(tmp_path, fake_slack, KNOWLEDGE), fake_slack, host=host) as slack:
        slack.event(payloads.home_opened())
        view = slack.fake.wait_for(lambda: slack.fake.calls_to("views.publish"))[0].params["view"]
    shown = texts(view["blocks"])
    assert "What I know" in shown
    # An App Home has no thread and no files: nothing there may promise an attached file.
    assert "attached file" not in shown
    assert "`/trace kb <words>` searches every entry" in shown


def test_a_regex_lint_refuses_is_refused_by_a_reload_too_naming_its_file_and_line(tmp_path):
    # A running bot loaded '(a+)+b' (lint refuses it: nested repetition) and answered with it: the reload
    # checked less than lint. The last good knowledge base keeps answering; the error names file and line.
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    good = holder.current
    greedy = root / "cuda" / "test-flux-capacitor.yaml"
    greedy.write_text(re.sub(r"regex: \[.*\]", "regex: ['(a+)+b']", NEW_ENTRY.lstrip()))
    assert holder.reload_if_changed()
    assert holder.current.kb is good.kb and holder.current.rejected
    answer = holder.matcher.diagnose("aaab")
    assert holder.kb.get("test-flux-capacitor") is None and "test-flux-capacitor" not in [m.entry_id for m in answer.matches]
    assert holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom", "still answers from the last good"
    line = next(n for n, text in enumerate(greedy.read_text().splitlines(), 1) if "(a+)+b" in text)
    said = [str(e) for e in holder.errors]
    assert any(s.startswith(f"{root.name}/cuda/test-flux-capacitor.yaml:{line}: regex '(a+)+b' repeats a group that "
                            "itself repeats ((a+)+)") for s in said), said


def test_a_folder_that_becomes_unreadable_keeps_the_last_good_knowledge_base_and_is_named(tmp_path, monkeypatch):
    from tests.kb.test_loader import _unreadable

    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    good = holder.current
    _unreadable(monkeypatch, root / "cuda")  # a deploy that left cuda/ to another user, mode 0700
    assert holder.reload_if_changed()
    assert holder.current.kb is good.kb and holder.current.rejected
    assert holder.matcher.diagnose(OOM_LINE).best.entry_id == "test-cuda-oom", "still answers from the last good"
    assert [str(e) for e in holder.errors] == ["kb/cuda:1: folder cannot be read (Permission denied): no entry in it was loaded"]


def test_an_edit_that_only_moves_a_problem_the_knowledge_base_already_had_is_taken_up(tmp_path):
    # The problems a knowledge base in use already has must not block later reloads; they were compared with
    # their line numbers, so a line added above one (a fix step, in the same file) made it "new" and every
    # later edit was refused while tracebot kept answering from the older text.
    root = write_tiny_kb(tmp_path / "kb")
    oom = root / "cuda" / "test-cuda-oom.yaml"
    oom.write_text(ENTRIES["cuda/test-cuda-oom.yaml"].lstrip() + "related: [test-no-such-entry]\n")
    holder = KnowledgeHolder(root)
    assert [e.message for e in holder.errors] == ["related entry 'test-no-such-entry' does not exist"]
    oom.write_text(oom.read_text().replace("fix:\n", "fix:\n  - \"Free the cache with `torch.cuda.empty_cache()`.\"\n", 1))
    _touch_later(oom)
    assert holder.reload_if_changed()
    assert not holder.current.rejected
    assert holder.kb.get("test-cuda-oom").fix[0] == "Free the cache with `torch.cuda.empty_cache()`."
    assert [e.message for e in holder.errors] == ["related entry 'test-no-such-entry' does not exist"]


def test_a_folder_linked_in_while_the_bot_runs_is_named_and_keeps_the_last_good_knowledge_base(tmp_path):
    root = write_tiny_kb(tmp_path / "kb")
    holder = KnowledgeHolder(root)
    good = holder.current
    (root / "team").symlink_to(root / "cuda")  # a link's target is never read: it could lead anywhere
    assert holder.reload_if_changed(), "a new link is a change"
    assert holder.current.kb is good.kb and holder.current.rejected
    assert [str(e) for e in holder.errors] == ["kb/team:1: a symbolic link to a folder: not followed: no entry in it was loaded"]
