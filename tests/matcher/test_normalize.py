import json

import pytest

from tracebot.matcher.normalize import LocalRanks, clean, mask

SEED_LINE = (
    "slurm0-a3-ghpc-8: [rank17]:[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=9437184, NumelOut=9437184, Timeout(ms)=600000) "
    "ran for 600070 milliseconds before timing out."
)


def test_host_and_rank_prefixes_are_removed_and_remembered():
    c = clean(SEED_LINE)
    assert c.text.startswith("[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught")
    assert (c.rank, c.host, c.prefixed) == ("17", "slurm0-a3-ghpc-8", True)


def test_stacked_timestamp_host_and_rank_prefixes():
    c = clean("2024-04-28 22:15:57,123 node017: [rank3]: torch.OutOfMemoryError: CUDA out of memory.")
    assert c.text == "torch.OutOfMemoryError: CUDA out of memory."
    assert (c.rank, c.host) == ("3", "node017")


def test_a_host_followed_by_a_space_keeps_its_rank_and_host(matcher):
    # "<timestamp> <host> [rankN]: …" (a log shipper's prefix, no colon after the host) left the host and the
    # rank in the message: the answer could not say which ranks, on which nodes, failed.
    c = clean("2026-01-02T03:04:05Z gpu-node-07 [rank0]: RuntimeError: CUDA error: an illegal memory access was encountered")
    assert c.text == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert (c.rank, c.host) == ("0", "gpu-node-07")
    log = "\n".join(
        f"2026-01-02T03:04:0{i}Z gpu-node-{7 + i // 8:02d} [rank{i}]: torch.OutOfMemoryError: CUDA out of memory. "
        f"Tried to allocate 2.00 GiB. GPU {i % 8} has a total capacity of 79.11 GiB of which 1.02 GiB is free."
        for i in (3, 9)
    )
    best = matcher.diagnose(log).best
    assert best is not None and best.entry_id == "cuda-oom"
    assert (best.ranks, best.hosts) == (["3", "9"], ["gpu-node-07", "gpu-node-08"])
    # a word that is not a node stays in the message: no rank prefix follows it
    assert clean("Step 42 [rank0]: loss is nan").host is None


def test_launcher_prefixes_give_the_rank():
    assert clean("[default5]:RuntimeError: boom").rank == "5"
    assert clean("12: RuntimeError: boom").rank == "12"
    assert clean("[1,7]<stderr>:RuntimeError: boom").rank == "7"
    c = clean("[1,mpirank:3,algo-2]<stderr>:RuntimeError: boom")
    assert (c.rank, c.host, c.text) == ("3", "algo-2", "RuntimeError: boom")


def test_exception_names_are_not_mistaken_for_host_names():
    for line in ("RuntimeError: CUDA error", "torch.distributed.DistBackendError: NCCL error", "ncclSystemError: x"):
        c = clean(line)
        assert c.text == line and c.host is None and not c.prefixed


def test_ansi_colours_and_fullwidth_characters_are_normalised():
    assert clean("\x1b[31mERROR\x1b[0m: disk full").text == "ERROR: disk full"
    assert clean("ＣＵＤＡ out of memoryが出ました").text == "CUDA out of memoryが出ました"


def test_syslog_timestamp_line_of_nvidia_smi_is_a_prefix_only():
    assert clean("Sun Apr 28 22:15:57 2024       ").text == ""


def test_variable_parts_are_masked_so_they_never_decide():
    a = mask(clean("[rank3]: CUDA error at 0x7f3a2c00 on 10.0.0.12:29500 in /opt/conda/lib/x.so pid 4242").text)
    b = mask(clean("[rank9]: CUDA error at 0x55aa on 192.168.1.3:1234 in /usr/lib/y.so pid 77").text)
    assert a == b == "cuda error at <hex> on <ip> in <path> pid <n>"


def test_wrappers_from_real_pastes_are_removed():
    assert clean("node7: node7:5512:5530 [3] NCCL WARN NET/IB : Got completion with error").text.startswith("NCCL WARN")
    c = clean("(RayTrainWorker pid=4242, ip=10.0.3.7) RuntimeError: CUDA error: an illegal memory access")
    assert (c.text, c.host) == ("RuntimeError: CUDA error: an illegal memory access", "10.0.3.7")
    assert clean("stderr: RuntimeError: boom").text == "RuntimeError: boom"
    assert clean("[80746] [rank0]: RuntimeError: boom").rank == "0"
    loguru = "2024-05-01 10:00:00.123 | ERROR    | trainer:step:135 - CUDA error: device-side assert triggered"
    assert clean(loguru).text == "CUDA error: device-side assert triggered"


def test_slack_html_escapes_are_undone():
    assert clean("Tried to allocate &gt; 2 GiB &amp; failed &lt;here&gt;").text == "Tried to allocate > 2 GiB & failed <here>"


def test_a_markdown_link_reads_as_its_text():
    # a path a rendered issue page linkified, pasted back: the entry's regex reads the message
    line = "Error while creating shared memory segment [/dev/shm/nccl-Ab12Cd](https://example.org/dev/shm/nccl-Ab12Cd) (size 7340384)"
    assert clean(line).text == "Error while creating shared memory segment /dev/shm/nccl-Ab12Cd (size 7340384)"
    # brackets that are not a link stay: a rank tag, a list, a link without a scheme
    assert clean("step [3/10] loss [0.5](approx)").text == "step [3/10] loss [0.5](approx)"


def test_a_linkified_path_still_finds_its_entry(matcher):
    text = "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
    text += "Error while creating shared memory segment [/dev/shm/nccl-Ab12Cd](https://example.org/dev/shm/nccl-Ab12Cd) (size 7340384)"
    assert "nccl-shm-too-small" in [m.entry_id for m in matcher.diagnose(text).matches if m.confident]


def test_slurmstepd_node_prefix_names_the_node():
    # Slurm 22.05 on the multi-node test cluster (scripts/slurm/start.sh --nodes 4), verbatim:
    c = clean("slurmstepd-tbnode1: error: *** STEP 644.0 ON tbnode1 CANCELLED AT 2026-11-23T21:10:50 ***")
    assert c.host == "tbnode1" and c.text.startswith("error: *** STEP 644.0 ON tbnode1 CANCELLED")


def test_torchruns_local_rank_is_the_rank_only_when_no_node_is_named():
    one_node = clean("[default5]:RuntimeError: boom")
    assert (one_node.rank, one_node.local) == ("5", "5")
    several = clean("algo-2: [default3]:RuntimeError: boom")
    assert (several.rank, several.host, several.local, several.text) == (None, "algo-2", "3", "RuntimeError: boom")
    named = clean("algo-2: [default3]:[rank11]:[E501 ProcessGroupNCCL.cpp:607] boom")
    assert (named.rank, named.host, named.local) == ("11", "algo-2", "3")


def test_local_ranks_are_placed_by_the_launch_command_or_a_line_that_names_both():
    ranks = LocalRanks()
    ranks.resolve(clean("algo-2: torchrun --nnodes 2 --nproc-per-node=8 --node-rank=1 train.py"))
    assert ranks.resolve(clean("algo-2: [default3]:boom")).rank == "11"
    assert ranks.resolve(clean("algo-1: [default3]:boom")).rank is None  # algo-1's start not told
    ranks.resolve(clean("algo-1: [default2]:[rank2]: hello"))
    assert ranks.resolve(clean("algo-1: [default2]:boom")).rank == "2"


def test_srun_labels_are_the_rank_unless_the_line_names_one():
    assert (clean("3: RuntimeError: boom").rank, clean("3: RuntimeError: boom").task) == ("3", None)
    # srun --label running one torchrun per node: the label is the node's task, the [rankN] the rank
    per_node = clean("1: [rank11]: RuntimeError: boom")
    assert (per_node.rank, per_node.task, per_node.text) == ("11", "1", "RuntimeError: boom")
    local = clean("1: [default3]:RuntimeError: boom")
    assert (local.rank, local.local, local.node) == (None, "3", "task 1")


def test_rank_numbers_too_long_to_be_ranks_are_not_read_as_ranks():
    ranks = LocalRanks()
    ranks.resolve(clean(f"algo-1: torchrun --nproc_per_node 8 --node_rank {'9' * 5000} train.py"))
    ranks.resolve(clean("algo-2: torchrun --nproc_per_node 99999 --node_rank 99999 train.py"))
    assert ranks.resolve(clean(f"algo-1: [default{'9' * 5000}]:RuntimeError: boom")).rank is None
    assert ranks.resolve(clean("algo-2: [default3]:RuntimeError: boom")).rank is None  # beyond any world


def test_the_latest_line_naming_both_ranks_places_a_process():
    # an elastic restart gives the nodes new ranks
    ranks = LocalRanks()
    ranks.resolve(clean("algo-2: [default3]:[rank11]: started"))
    ranks.resolve(clean("algo-2: [default3]:[rank3]: restarted"))
    assert ranks.resolve(clean("algo-2: [default3]:boom")).rank == "3"


COLOURED_LOG = (
    "\x1b[32m2024-05-02 10:00:01\x1b[0m node3: [rank0]: step 100 loss 2.31\n"
    "\x1b[32m2024-05-02 10:00:04\x1b[0m node3: [rank1]: \x1b[1;31mtorch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free.\x1b[0m\n"
    "\x1b[32m2024-05-02 10:00:05\x1b[0m node3: [rank0]: \x1b[33m[E ProcessGroupNCCL.cpp:523] [Rank 0] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE) ran for 600070 milliseconds "
    "before timing out.\x1b[0m\n"
)


@pytest.mark.parametrize("source", ["paste", "file"])
def test_a_log_from_a_coloured_terminal_is_quoted_as_the_terminal_showed_it(matcher, tmp_path, source):
    """The reply quotes the line without the colour codes the person never saw: in Slack, in the
    console's and the CLI's text, and in --json."""
    from tests.slack.blocks import texts
    from tracebot.render.slack import answer
    from tracebot.render.text import render_diagnosis

    if source == "file":
        path = tmp_path / "train.log"
        path.write_bytes(COLOURED_LOG.encode())
        d = matcher.diagnose_file(path)
    else:
        d = matcher.diagnose(COLOURED_LOG)
    best = d.confident[0]
    assert best.line.startswith("2024-05-02 10:00:04 node3: [rank1]: torch.OutOfMemoryError: CUDA out of memory.")
    rendered = answer(d, diagnosis_id=1, always_answer=True)
    assert rendered is not None
    shown = [rendered[0], texts(rendered[1]), render_diagnosis(d, show_all=True), json.dumps(d.to_dict())]
    for view in shown:
        assert "[0m" not in view and "[1;31m" not in view and "\x1b" not in view, view
    assert "torch.OutOfMemoryError: CUDA out of memory" in shown[1]


def test_a_line_coloured_by_tput_is_quoted_and_matched_without_its_reset(matcher):
    # `tput sgr0` (a shell launcher's "$(tput setaf 1)ERROR$(tput sgr0)") writes ESC ( B before ESC [ m on
    # xterm: a character-set choice, formatting the person never saw, like the colour it ends
    text = "step 1\n\x1b[31mRuntimeError: CUDA error: an illegal memory access was encountered\x1b(B\x1b[m\nstep 2\n"
    best = matcher.diagnose(text).confident[0]
    assert best.line == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert clean("\x1b[1m\x1b[31mERROR\x1b(B\x1b[m: disk full").text == "ERROR: disk full"
