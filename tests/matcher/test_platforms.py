"""A platform's words of the trade say a text is about that platform; an entry that names its platform
is an unlikely answer to a text that never uses them (the ranking model's ``off_platform``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support import entry_dict, write_kb
from tracebot.authoring.lint import platform_problems
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher.features import text_info
from tracebot.matcher.model import FEATURES, RankingModel, rows
from tracebot.matcher.platforms import mentioned, patterns

KNOWLEDGE = Path(__file__).resolve().parents[2] / "knowledge"


def test_a_platforms_words_are_found_whole_in_any_case_and_beside_japanese():
    assert mentioned("Our SageMaker job on ml.p4d.24xlarge hangs") == {"sagemaker"}
    assert mentioned("SageMakerのジョブが止まる") == {"sagemaker"}
    assert mentioned("import torch_xla; XLA_FLAGS=--xla_dump_to=/tmp") == {"xla"}
    assert mentioned("slurmstepd: error: *** JOB 42 CANCELLED AT 12:00 ***") == {"slurm"}
    assert mentioned("the Training  Compiler and srun") == {"xla", "slurm"}


def test_plain_training_text_mentions_no_platform():
    assert mentioned("distributed checkpoint set_state_dict hangs on rank 3 of our training job") == frozenset()
    assert mentioned("mysagemakerlike tool, xsrun, xla2, smpl") == frozenset()


def test_the_text_info_carries_the_platforms_the_model_reads():
    assert text_info("smp.save hangs on rank 0", "smp.save hangs on rank 0").platforms == {"sagemaker"}


def test_off_platform_marks_only_entries_whose_platform_the_text_does_not_name():
    model = RankingModel(spaces=[], coef=np.zeros(0), intercept=0.0, entry_words=[" ", " "], roles=np.zeros(2),
                         platforms=[frozenset({"sagemaker"}), frozenset()])
    col = FEATURES.index("off_platform")
    zeros = [np.zeros(2)] * 6  # no similarity to either entry: only the platforms differ
    for text, want in (("checkpoint save hangs", [1.0, 0.0]), ("SageMaker checkpoint save hangs", [0.0, 0.0])):
        x = rows(model, text_info(text, text), {}, zeros, [0, 1])
        assert x[:, col].tolist() == want, text


def test_the_bundled_entries_name_known_platforms_and_lint_refuses_an_unknown_one(tmp_path: Path):
    kb, _ = load_knowledge_base(KNOWLEDGE)
    assert platform_problems(kb) == []
    assert {p for e in kb.entries for p in e.platform} <= set(patterns())
    root = write_kb(tmp_path / "kb", [entry_dict("good", platform="sagemaker"), entry_dict("bad", platform="kubeflow")])
    kb2, errors = load_knowledge_base(root)
    assert errors == [] and kb2.get("good").platform == ["sagemaker"]
    (problem,) = platform_problems(kb2)
    assert str(problem).startswith(f"{root / 'bad.yaml'}:") and "platform 'kubeflow' is not in platforms.yaml" in str(problem)


def test_linux_is_assumed_unless_a_text_names_macos():
    from tracebot.matcher.platforms import contradicted, off

    for text in ("Killed\nexit code 137", "SageMaker job exited with code 137", "dmesg on my Mac OS laptop"):
        assert not off({"linux"}, mentioned(text)) and not contradicted({"linux"}, mentioned(text)), text
    assert off({"linux"}, mentioned("zsh: Killed: 9")) and contradicted({"linux"}, mentioned("zsh: Killed: 9"))
    # a SageMaker entry is off a plain text, but nothing in it rules SageMaker out: its anchors still count
    assert off({"sagemaker"}, mentioned("checkpoint save hangs"))
    assert not contradicted({"sagemaker"}, mentioned("checkpoint save hangs"))


# Written here. macOS's shell reports any SIGKILL as "Killed: 9" (exit status 137): the system killing an unsigned
# or unpermitted binary, a user's kill -9. On Linux the same exit status is the kernel's OOM killer's mark.
MACOS_KILL = "$ sudo py-spy dump --pid 4121\nKilled: 9\nexit status 137, the process itself keeps running on my MacBook"
LINUX_KILL = "$ python train.py --bs 64\nKilled\nexit status 137, the process was using 60 GB of RAM on the node"


def test_a_macos_kill_is_not_answered_as_the_oom_killer(matcher):
    d = matcher.diagnose(MACOS_KILL)
    assert not d.confident and not any(m.entry_id == "host-oom-killed" and m.kind == "regex" for m in d.matches)


def test_the_same_kill_on_linux_is_still_the_oom_killer(matcher):
    d = matcher.diagnose(LINUX_KILL)
    assert d.best is not None and d.best.entry_id == "host-oom-killed" and d.best.confident


# Written here. Node names are a cluster's, and "Darwin" is one (LANL's, Cambridge's): a Linux node named
# darwin-… is no macOS. And a person may say what their laptop runs while pasting what the cluster said: SLURM
# runs on Linux only, so a text that uses SLURM's words is on Linux whatever else it names.
OOM_ON_A_NODE_NAMED_DARWIN = (
    "[Tue Nov 24 10:02:11 2026] Out of memory: Killed process 41235 (python) total-vm:98765432kB\n"
    "my job on darwin-gpu07 keeps dying, why?"
)
SLURM_OOM_FROM_A_MAC = (
    "I submit from my macOS laptop over ssh and the job dies right after loading the checkpoint:\n"
    "srun: error: gpu-n03: task 0: Out Of Memory"
)


SAGEMAKER_OOM_FROM_A_MAC = (
    "I launch the estimator from my MacBook (macOS 14). The training job failed:\n"
    "ClientError: An error occurred (ValidationException): Please use an instance type with more memory, or "
    "reduce the size of your training job."
)


@pytest.mark.parametrize("text", [OOM_ON_A_NODE_NAMED_DARWIN, SLURM_OOM_FROM_A_MAC, SAGEMAKER_OOM_FROM_A_MAC])
def test_the_oom_killer_on_a_linux_node_is_answered_whatever_else_the_text_names(matcher, text: str):
    d = matcher.diagnose(text)
    assert d.best is not None and d.best.entry_id == "host-oom-killed" and d.best.confident, d.matches[:3]


def test_darwin_names_macos_as_an_operating_system_not_as_a_host():
    assert mentioned("Darwin Kernel Version 23.1.0: Mon Oct 9 21:27:24 PDT 2023; root:xnu") == {"macos"}
    assert mentioned("wheel built for darwin-arm64, target aarch64-apple-darwin") == {"macos"}
    assert "macos" not in mentioned("node darwin-fe2 exited on signal 9 (Killed)")
