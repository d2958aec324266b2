"""Write tests/holdout/cases.jsonl from the case list below (kept in Python so
multi-line pasted text stays readable). Text is copied as users pasted it in the
cited public issue, trimmed of unrelated lines; prose marked `authored (...)` was
written for this set in the voice of a user.

Usage: python tests/holdout/build_cases.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
GH = "https://github.com/"


def c(case_id: str, kind: str, expected: str | None, source: str, text: str | None = None,
      file: str | None = None, also_ok: tuple[str, ...] = ()) -> dict:
    case: dict = {"id": case_id}
    if file is not None:
        case["file"] = file
    else:
        case["text"] = text.strip("\n") if text else text
    case.update({"expected": expected, "also_ok": list(also_ok), "source": source, "kind": kind})
    return case


CASES = [
    # ---------------------------------------------------------------- cuda-oom
    c("oom-new-format-echomimic", "line", "cuda-oom", GH + "antgroup/echomimic_v2/issues/115", """
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.22 GiB. GPU 0 has a total capacity of 15.69 GiB of which 3.71 GiB is free. Including non-PyTorch memory, this process has 11.14 GiB memory in use. Of the allocated memory 10.14 GiB is allocated by PyTorch, and 771.43 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
"""),
    c("oom-old-format-no-space", "line", "cuda-oom", GH + "chnsh/DCRNN_PyTorch/issues/6", """
`RuntimeError:CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 5.80 GiB total capacity; 4.36 GiB already allocated; 6.69 MiB free; 4.63 GiB reserved in total by PyTorch)`
"""),
    c("oom-linear-traceback-other-process", "traceback", "cuda-oom", GH + "FoundationVision/GenerateU/issues/10", """
File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 496.00 MiB. GPU 0 has a total capacty of 14.75 GiB of which 235.06 MiB is free. Process 20398 has 14.52 GiB memory in use. Of the allocated memory 14.06 GiB is allocated by PyTorch, and 330.42 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF
"""),
    c("oom-prose-memory-is-free", "prose", "cuda-oom", GH + "pytorch/pytorch/issues/59778", """
`CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch) `
I am unable to understand this error. If memory is available then why is PyTorch not allocating it?
"""),
    c("oom-ja-prose", "ja", "cuda-oom", "authored (phrasing modeled on https://openillumi.com/pytorch-cuda-oom-fragmentation-fix)", """
学習を回すと数百ステップで「CUDA out of memory. Tried to allocate 304.00 MiB」と出て落ちます。nvidia-smi ではまだ空きがあるように見えるのですが、バッチサイズを下げるしかないですか？
"""),
    c("oom-prose-chat", "prose", "cuda-oom", "authored (user question)", """
my 70b finetune keeps dying on the first backward pass with "Tried to allocate 1.96 GiB", 8x A100 80GB, zero stage 2. what knobs do I turn first?
"""),
    # ---------------------------------------------------- nccl-system-error-gpu-memory
    c("nccl-syserr-ibv-reg-cannot-allocate", "log", "nccl-system-error-gpu-memory", GH + "vllm-project/vllm/issues/19613", """
ERROR 06-13 07:35:59 [core.py:517]   File "cupy_backends/cuda/libs/nccl.pyx", line 129, in cupy_backends.cuda.libs.nccl.check_status
ERROR 06-13 07:35:59 [core.py:517] cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)
[2025-06-16 17:17:39] kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory
"""),
    c("nccl-syserr-bare-vllm", "line", "nccl-system-error-gpu-memory", GH + "vllm-project/vllm/issues/10626", """
[Bug]: about NCCL error：unhandled system error
RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)
""", also_ok=("nccl-shm-too-small",)),
    # ---------------------------------------------------------- nccl-shm-too-small
    c("nccl-shm-vllm-worker-prefix", "log", "nccl-shm-too-small", GH + "vllm-project/vllm/issues/6574", """
(VllmWorkerProcess pid=87) ERROR 07-19 10:59:03 multiproc_worker_utils.py:226] Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5
(VllmWorkerProcess pid=87) ERROR 07-19 10:59:03 multiproc_worker_utils.py:226] ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
(VllmWorkerProcess pid=87) ERROR 07-19 10:59:03 multiproc_worker_utils.py:226] Last error:
(VllmWorkerProcess pid=87) ERROR 07-19 10:59:03 multiproc_worker_utils.py:226] Error while creating shared memory segment /dev/shm/nccl-bWHyCi (size 9637888), Traceback (most recent call last):
""", also_ok=("nccl-system-error-gpu-memory",)),
    c("nccl-shm-posix-fallocate", "log", "nccl-shm-too-small", GH + "NVIDIA/nccl/issues/342", """
include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device
include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 (size 9637888)
"""),
    c("nccl-shm-failed-to-extend-ci", "log", "nccl-shm-too-small", GH + "pytorch/ci-infra/pull/490", """
[2026-04-22 21:34:20] mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No space left on device (28)

[2026-04-22 21:34:20] mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)
mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] NCCL INFO transport/shm.cc:551 -> 2
mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] NCCL INFO transport/shm.cc:493 -> 2
"""),
    c("nccl-shm-nccl-tests-8gpu", "log", "nccl-shm-too-small", GH + "NVIDIA/nccl-tests/issues/166", """
ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)
ubuntu:9621:9688 [3] NCCL INFO transport/shm.cc:114 -> 2
ubuntu:9621:9688 [3] NCCL INFO transport.cc:33 -> 2
ubuntu:9621:9688 [3] NCCL INFO init.cc:1089 -> 2
ubuntu:9621:9688 [3] NCCL INFO group.cc:65 -> 2 [Async thread]

ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 bytes

ubuntu:9621:9691 [6] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-fjwOOB (size 5967872)
"""),
    c("nccl-shm-prose-vllm-tp", "prose", "nccl-shm-too-small", GH + "fal-ai-community/video-diffusion-speedrun/issues/2", """
It almost worked except for the `Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)` when I tried it first time (Docker version 24.0.7). Do I need a docker flag?
"""),
    # -------------------------------------------------------- nccl-watchdog-timeout
    c("watchdog-llamafactory-pid-prefix", "log", "nccl-watchdog-timeout", GH + "hiyouga/LlamaFactory/issues/7396", """
[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.
[80747] [rank4]:[E321 02:07:08.414640780 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600067 milliseconds before timing out.
[80748] [rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.
[80749] [rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.
"""),
    c("watchdog-reduce-scatter", "log", "nccl-watchdog-timeout", GH + "hiyouga/LlamaFactory/issues/6269", """
[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.
[rank0]:[E1206 18:44:12.715588844 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.
[rank4]:[E1206 18:44:12.755262105 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600099 milliseconds before timing out.
"""),
    c("watchdog-old-format-progress-bar", "log", "nccl-watchdog-timeout", GH + "pytorch/pytorch/issues/118369", """
Epoch 0:   6%|██                               | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc, reduced_train_loss=2.590, global_step=3.2e+4, consumed_samples=2.56e+7][E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96117, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625613 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:458] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=64088, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625251 milliseconds before timing out.
"""),
    c("watchdog-ofa-single-node-after-hours", "prose", "nccl-watchdog-timeout", GH + "OFA-Sys/OFA/issues/271", """
I encountered the same problem when training on a **single 8*V100 node** with our own datasets. The code and environment are unchanged and worked fine before yesterday. However, this problem occurs after 6 to 9 hours of training (after tens of epochs randomly).
[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802211 milliseconds before timing out.
"""),
    c("watchdog-broadcast-vs-allreduce-same-seq", "log", "nccl-watchdog-timeout", GH + "NVIDIA/nccl/issues/1409", """
    [rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80078, OpType=BROADCAST, NumelIn=5056, NumelOut=5056, Timeout(ms)=600000) ran for 600026 milliseconds before timing out.
    [rank7]:[E816 01:45:40.184373931 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 7] Exception (either an error or timeout) detected by watchdog at work: 80078, last enqueued NCCL work: 80078, last completed NCCL work: 80077.
    [rank3]:[E816 01:45:40.212150935 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80078, OpType=ALLREDUCE, NumelIn=2106881, NumelOut=2106881, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.
""", also_ok=("collective-mismatch",)),
    c("watchdog-ja", "ja", "nccl-watchdog-timeout", "authored (phrasing modeled on https://openillumi.com/?p=7702)", """
8ノードで事前学習中、数時間後に全ランクで「Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20412, OpType=ALLREDUCE ...) ran for 1800088 milliseconds」が出て止まりました。どのランクが原因か調べる方法はありますか？
"""),
    # ------------------------------------------------------------- rendezvous-timeout
    c("rdzv-client-socket-timeout", "log", "rendezvous-timeout", GH + "pytorch/pytorch/issues/107021", """
[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234
torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.
"""),
    c("rdzv-connect-timed-out-tcpstore", "traceback", "rendezvous-timeout", GH + "pytorch/pytorch/issues/69197", """
Traceback (most recent call last):
  File "/home/ubuntu/miniconda3/envs/py39/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 155, in _create_tcp_store
    store = TCPStore(
RuntimeError: connect() timed out. Original timeout was 60000 ms.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/ubuntu/miniconda3/envs/py39/lib/python3.9/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 345, in wrapper
    return f(*args, **kwargs)
"""),
    c("rdzv-timeout-json-error-handler", "log", "rendezvous-timeout", GH + "facebookresearch/av_hubert/issues/19", r"""
ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{
  "message": {
    "message": "RendezvousTimeoutError: ",
    "extraInfo": {
      "py_callstack": "Traceback (most recent call last):\n  File \"/gs/hs0/tga-tslab/bowen/Anaconda3/envs/avhubert/lib/python3.8/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 345, in wrapper\n    return f(*args, **kwargs)\n  File \"/gs/hs0/tga-tslab/bowen/Anaconda3/envs/avhubert/lib/python3.8/site-packages/torch/distributed/run.py\", line 719, in main\n    run(args)\n"
"""),
    c("rdzv-multiple-nics-stuck", "log", "rendezvous-timeout", GH + "pytorch/pytorch/issues/64926", """
[INFO] 2021-09-13 22:17:26,653 api: Starting elastic_operator with launch configs:
  entrypoint       : main.py
  min_nodes        : 2
  max_nodes        : 2
  nproc_per_node   : 2
  run_id           : 1234
  rdzv_backend     : c10d
  rdzv_endpoint    : 10.28.1.16
  rdzv_configs     : {'timeout': 900}
  max_restarts     : 3

[ERROR] 2021-09-13 22:18:26,678 error_handler: {
  "message": {
    "message": "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
""", also_ok=("nccl-network-hang",)),
    c("rdzv-ja", "ja", "rendezvous-timeout", "authored (user question)", """
2ノード目だけ torchrun が「RendezvousTimeoutError」で終了します。1ノード目は待ち続けています。--rdzv_endpoint はマスターのホスト名:29400 にしています。ファイアウォールでしょうか？
"""),
    # ---------------------------------------------------- cuda-illegal-memory-access
    c("illegal-access-terminate-c10", "log", "cuda-illegal-memory-access", GH + "RVC-Boss/GPT-SoVITS/issues/1341", """
terminate called after throwing an instance of 'c10::Error'
  what():  CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""),
    c("illegal-access-launch-py", "line", "cuda-illegal-memory-access", GH + "mjq11302010044/RRPN_pytorch/issues/42", """
CUDA_VISIBLE_DEVICES="3,4" python -m torch.distributed.launch --nproc_per_node 2 train_net.py
RuntimeError: CUDA error: an illegal memory access was encountered
terminate called without an active exception
"""),
    c("illegal-access-magma-700", "line", "cuda-illegal-memory-access", GH + "facebookresearch/pytorch3d/issues/267", """
CUDA runtime error: an illegal memory access was encountered (700) in magma_queue_destroy_internal at /opt/conda/conda-bld/magma-cuda111_1605822518874/work/interface_cuda/interface.cpp:944
"""),
    # ------------------------------------------------------- cuda-device-side-assert
    c("assert-nllloss2d-blocks", "log", "cuda-device-side-assert", GH + "milesial/Pytorch-UNet/issues/375", """
../aten/src/ATen/native/cuda/NLLLoss2d.cu:103: nll_loss2d_forward_kernel: block: [5,0,0], thread: [996,0,0] Assertion `t >= 0 && t < n_classes` failed.
../aten/src/ATen/native/cuda/NLLLoss2d.cu:103: nll_loss2d_forward_kernel: block: [5,0,0], thread: [997,0,0] Assertion `t >= 0 && t < n_classes` failed.
../aten/src/ATen/native/cuda/NLLLoss2d.cu:103: nll_loss2d_forward_kernel: block: [2,0,0], thread: [783,0,0] Assertion `t >= 0 && t < n_classes` failed.
"""),
    c("assert-runtime-error-59", "log", "cuda-device-side-assert", GH + "isht7/pytorch-deeplab-resnet/issues/19", """
/opt/conda/conda-bld/pytorch_1503966894950/work/torch/lib/THCUNN/SpatialClassNLLCriterion.cu:40: void cunn_SpatialClassNLLCriterion_updateOutput_kernel(T *, T *, T *, long *, T *, int, int, int, int, int, long) [with T = float, AccumT = float]: block: [0,0,0], thread: [769,0,0] Assertion `t >= 0 && t < n_classes` failed.
RuntimeError: cuda runtime error (59) : device-side assert triggered
"""),
    c("assert-copy-if", "line", "cuda-device-side-assert", GH + "joe-siyuan-qiao/DetectoRS/issues/13", """
RuntimeError: copy_if failed to synchronize: device-side assert triggered terminate called after throwing an instance of 'c10::Error'
"""),
    # ------------------------------------------------ nccl-invalid-usage-duplicate-gpu
    c("dup-gpu-mpirun-prefix", "log", "nccl-invalid-usage-duplicate-gpu", GH + "horovod/horovod/issues/3929", """
[1,3]<stdout>:smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:903 -> 5
[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000
[1,2]<stdout>:smc-gpu-03:29880:30398 [0] NCCL INFO init.cc:867 -> 5
[1,4]<stdout>:smc-gpu-03:29882:30400 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 4 and rank 0 both on CUDA device 1000
[1,0]<stdout>:smc-gpu-03:29878:30419 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000
"""),
    c("dup-gpu-megatron-barrier", "traceback", "nccl-invalid-usage-duplicate-gpu", GH + "NVIDIA/Megatron-LM/issues/661", """
torch.distributed  File "/run/megatron/initialize.py", line 156, in _compile_dependencies
.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3
ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
Last error:
Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000
    torch.distributed.barrier()
"""),
    c("dup-gpu-verl-reversed", "log", "nccl-invalid-usage-duplicate-gpu", GH + "verl-project/verl/issues/1096", """
Duplicate GPU detected : rank 9 and rank 1 both on CUDA device 34000
 Last error:
ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5
 work = group.barrier(opts=opts)
"""),
    # -------------------------------------------------------------- host-oom-killed
    c("host-oom-sigkill-prose", "prose", "host-oom-killed", GH + "bmaltais/kohya_ss/issues/1065", """
died with <Signals.SIGKILL: 9>. Is this problem due to my lack of RAM?
"""),
    c("host-oom-exit-137", "line", "host-oom-killed", GH + "noelshin/selfmask/issues/11", """
When I run mask_generator.py, I get Process finished with exit code 137 (interrupted by signal 9:SIGKILL)
It seems that the cpu does not have enough memory
"""),
    c("host-oom-slurmstepd-stepid", "log", "host-oom-killed", GH + "nextflow-io/nextflow/issues/5932", """
slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.
srun: error: sdumont6156: task 0: Out Of Memory
"""),
    c("host-oom-slurmstepd-old-cgroup", "line", "host-oom-killed", GH + "lanl/PyBNF/issues/118", """
slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.
"""),
    c("host-oom-orion-step-cancelled", "log", "host-oom-killed", GH + "hafs-community/HAFS/issues/101", """
slurmstepd: error: Detected 1 oom-kill event(s) in step 3495064.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.
srun: error: Orion-01-01: task 4: Out Of Memory
srun: Terminating job step 3495064.0
slurmstepd: error: *** STEP 3495064.0 ON orion-01-01 CANCELLED AT 2021-10-27T19:35:36 ***
"""),
    c("host-oom-torchrun-exitcode-9", "log", "host-oom-killed", GH + "OpenBMB/MiniCPM-V/issues/770", """
torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: -9) local_rank: 0 (pid: 1322) of binary: /root/miniconda3/bin/python
Traceback (most recent call last):
  File "/root/miniconda3/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/root/miniconda3/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 263, in launch_agent
    raise ChildFailedError(
""", also_ok=("torchrun-child-failed",)),
    c("host-oom-dataloader-killed", "line", "host-oom-killed", GH + "hezhangsprinter/DCPDN/issues/12", """
RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.
"""),
    c("host-oom-ja", "ja", "host-oom-killed", "authored (user question)", """
sacct で見ると State が OUT_OF_MEMORY、ExitCode 0:125 になっていました。GPU メモリではなくノードのメモリ不足という理解で合っていますか？ --mem はどれくらい指定すべきでしょう。
"""),
    # ------------------------------------------------------ dataloader-shm-bus-error
    c("bus-error-gdrnet-full", "log", "dataloader-shm-bus-error", GH + "THU-DA-6D-Pose-Group/GDR-Net/issues/16", """
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)、
RuntimeError: DataLoader worker (pid 3216) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.、
raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str))
RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly。
"""),
    c("bus-error-single-line", "line", "dataloader-shm-bus-error", GH + "codalab/codalab-worksheets/pull/1961", """
`ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).`
"""),
    c("bus-error-then-pil-traceback", "traceback", "dataloader-shm-bus-error", GH + "hezhangsprinter/DCPDN/issues/58", """
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
Traceback (most recent call last):
  File "/home/zyq/anaconda3/envs/dehazepy36/lib/python3.6/site-packages/PIL/ImageFile.py", line 510, in _save
    fh = fp.fileno()
AttributeError: '_idat' object has no attribute 'fileno'
"""),
    # --------------------------------------------------------- ddp-unused-parameters
    c("unused-params-full-message", "line", "ddp-unused-parameters", GH + "va1shn9v/PromptIR/issues/30", """
RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by (1) passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`; (2) making sure all `forward` function outputs participate in calculating loss. If you already have done the above two steps, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list,dict, iterable).
"""),
    c("unused-params-lightning-traceback", "traceback", "ddp-unused-parameters", GH + "pytorch/pytorch/issues/57473", """
Traceback (most recent call last):
  File "/home/exx/anaconda3/envs/spyder-env/lib/python3.8/site-packages/pytorch_lightning/trainer/trainer.py", line 644, in run_train
    self.train_loop.run_training_epoch()
  File "/home/exx/anaconda3/envs/spyder-env/lib/python3.8/site-packages/pytorch_lightning/trainer/training_loop.py", line 492, in run_training_epoch
    batch_output = self.run_training_batch(
RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss.
"""),
    c("unused-params-prose-flag-slow", "prose", "ddp-unused-parameters", GH + "open-mmlab/mmdetection3d/issues/488", """
I was developing a two-stage network and got "Expected to have finished reduction in the prior iteration before starting a new one". It could be resolved by setting find_unused_parameters = True, but I was wondering why this might have been necessary, and whether having this flag slows down training.
"""),
    # --------------------------------------------------------------- master-port-in-use
    c("port-in-use-29500", "line", "master-port-in-use", GH + "showlab/Tune-A-Video/issues/90", """
RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).
"""),
    c("port-in-use-prose", "prose", "master-port-in-use", "authored (user question)", """
second torchrun on the same box dies instantly with EADDRINUSE on the master port. the first job is still training, can I run two jobs on one node?
"""),
    # -------------------------------------------------- process-group-not-initialized
    c("pg-not-init-single-gpu", "line", "process-group-not-initialized", GH + "megvii-model/YOLOF/issues/11", """
hello, when i run with only one GPU, i get the error "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group."
"""),
    c("pg-not-init-lowercase", "line", "process-group-not-initialized", GH + "open-mmlab/mmsegmentation/issues/901", """
runtime error: Default process group has not been initialized, please make sure to call init_process_group
"""),
    # ------------------------------------------------- deepspeed-loss-scale-minimum
    c("ds-loss-scale-interleaved", "log", "deepspeed-loss-scale-minimum", GH + "hiyouga/LlamaFactory/issues/251", """
: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.
    self.loss_scaler.update_scale(has_overflow)
  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/fp16/loss_scaler.py", line 175, in update_scale
    raise Exception(
    Exceptionself.loss_scaler.update_scale(has_overflow):
Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/fp16/loss_scaler.py", line 175, in update_scale
  4%|▍         | 17/387 [05:25<1:57:56, 19.13s/it]
[2023-07-26 15:19:24,960] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45098
[2023-07-26 15:19:27,802] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45099
"""),
    c("ds-loss-scale-prose", "prose", "deepspeed-loss-scale-minimum", GH + "deepspeedai/DeepSpeedExamples/issues/418", """
when i run step 2 (zero stage 3, bloomz-560m) it occurs the following problem: Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run. who can help me?
"""),
    # --------------------------------------------------------------- disk-full-on-save
    c("disk-full-dolly-prefixed", "log", "disk-full-on-save", GH + "databrickslabs/dolly/issues/139", """
2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] 2023-04-29 06:01:12 ERROR [__main__] main failed
2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] Traceback (most recent call last):
2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]   File "/opt/conda/lib/python3.7/site-packages/torch/serialization.py", line 379, in save
2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]     _save(obj, opened_zipfile, pickle_module, pickle_protocol)
2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]     zip_file.write_record(name, storage.data_ptr(), num_bytes)
2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] OSError: [Errno 28] No space left on device
"""),
    c("disk-full-stream-writer", "traceback", "disk-full-on-save", GH + "h2oai/h2o-llmstudio/issues/214", """
Traceback (most recent call last):
File "/root/.local/share/virtualenvs/workspace-dqq3IVyd/lib/python3.10/site-packages/torch/serialization.py", line 441, in save
_save(obj, opened_zipfile, pickle_module, pickle_protocol)
File "/root/.local/share/virtualenvs/workspace-dqq3IVyd/lib/python3.10/site-packages/torch/serialization.py", line 668, in _save
zip_file.write_record(name, storage.data_ptr(), num_bytes)
RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file data/228: file write failed
"""),
    c("disk-full-write-io-error", "traceback", "disk-full-on-save", GH + "pytorch/pytorch/issues/10577", """
  File "train.py", line 250, in <module>
    torch.save(best_model.state_dict(), join(OUTD, "best_model.pt"))
  File "/home/user290/Venvs/pytorch.1.0.1/lib/python3.7/site-packages/torch/serialization.py", line 297, in _save
    serialized_storages[key]._write_file(f, _should_read_directly(f))
RuntimeError: write(): fd 29 failed with Input/output error
"""),
    c("disk-quota-exceeded", "log", "disk-full-on-save", GH + "BinItAI/visdet/issues/95", """
12/09 06:49:23 - mmengine - INFO - Saving checkpoint at 14 epochs
Traceback (most recent call last):
  File "/mnt/wzh/miniconda3/envs/openmmlab/lib/python3.8/site-packages/mmengine/hooks/checkpoint_hook.py", line 345, in after_train_epoch
OSError: [Errno 122] Disk quota exceeded
"""),
    # -------------------------------------------------------- py-spy-permission-denied
    c("pyspy-perm-sudo-hint", "line", "py-spy-permission-denied", GH + "benfred/py-spy/issues/8", """
root@pomegranate-deployment-6844867c8c-49mtx:/app# py-spy --pid 13
Permission Denied: Try running again with elevated permissions by going 'sudo env "PATH=$PATH" !!'
"""),
    c("pyspy-perm-docker-hint", "log", "py-spy-permission-denied", GH + "benfred/py-spy/pull/459", """
Permission Denied

It looks like you are running in a docker container. Please make sure you started your container with the SYS_PTRACE capability. See https://github.com/benfred/py-spy#how-do-i-run-py-spy-in-docker for more details
"""),
    c("pyspy-perm-prose-k8s", "prose", "py-spy-permission-denied", "authored (user question)", """
tried `py-spy dump --pid 1` inside the training pod to see where it hangs and it just says permission denied, even as root. do I need something in the pod spec?
"""),
    # ----------------------------------------------------------------- slurm-time-limit
    c("slurm-time-limit-job-and-step", "log", "slurm-time-limit", GH + "ZettaAI/zetta_utils/issues/671", """
srun: Job step aborted: Waiting up to 47 seconds for job step to finish.
slurmstepd: error: *** JOB 494583 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***
slurmstepd: error: *** STEP 494583.0 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***
"""),
    c("slurm-time-limit-force-terminated", "log", "slurm-time-limit", GH + "desihub/desitarget/issues/628", """
srun: Force Terminated job 32233190
srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
slurmstepd: error: *** STEP 32233190.0 ON nid01934 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***
srun: error: nid01934: tasks 2,4-5,7: Terminated
srun: Terminating job step 32233190.0
srun: error: nid01935: tasks 8-15: Terminated
"""),
    c("slurm-time-limit-no-error-prefix", "line", "slurm-time-limit", GH + "marbl/canu/issues/1067", """
"slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***"
"""),
    c("slurm-time-limit-ja", "ja", "slurm-time-limit", "authored (user question)", """
ログの最後が「CANCELLED AT 2025-03-02T04:00:01 DUE TO TIME LIMIT」になっていました。チェックポイントから再開するとき --time を延ばす以外にやるべきことはありますか？
"""),
    # ------------------------------------------------------------------ slurm-preempted
    c("slurm-preempted-line", "line", "slurm-preempted", "authored (slurmstepd message format as printed by Slurm 22.05)", """
slurmstepd: error: *** JOB 7781204 ON gpu-h100-017 CANCELLED AT 2025-02-11T03:12:44 DUE TO PREEMPTION ***
"""),
    c("slurm-preempted-sacct-prose", "prose", "slurm-preempted", "authored (user question)", """
my run on the `spot` partition vanished overnight; sacct shows State=PREEMPTED and the job didn't come back. how do I make it requeue and resume on its own?
"""),
    # ------------------------------------------------------------------ slurm-node-fail
    c("slurm-node-failure-revoked", "log", "slurm-node-fail", GH + "aws/aws-parallelcluster/issues/4265", """
srun --exclusive -n 1 preprocess.sh
srun: Force Terminated job 1
srun: error: Node failure on compute-dy-p4d24xlarge-1
srun: error: Job allocation 1 has been revoked
"""),
    c("slurm-node-fail-sacct", "log", "slurm-node-fail", "authored (sacct output format)", """
$ sacct -j 5512093 --format=JobID,JobName,State,ExitCode,NodeList
JobID           JobName      State ExitCode        NodeList
------------ ---------- ---------- -------- ---------------
5512093        pretrain  NODE_FAIL      0:0  gpu-[101-116]
5512093.bat+      batch  CANCELLED     0:15          gpu-101
5512093.0        python     FAILED      1:0  gpu-[101-116]
"""),
    # --------------------------------------------- slurm-job-stopped-triage / log search
    c("slurm-triage-prose", "prose", "slurm-job-stopped-triage", "authored (user question)", """
job 881234 isn't in squeue anymore and the .out file just ends mid-epoch, no traceback. how do I find out what state it ended in and why?
"""),
    c("slurm-triage-ja", "ja", "slurm-job-stopped-triage", "authored (user question)", """
昨夜投げたジョブが squeue から消えています。ログには何もエラーが出ていません。どのコマンドで終了理由を確認できますか？
"""),
    c("slurm-log-search-prose", "prose", "slurm-log-error-search", "authored (user question)", """
the sbatch output for our 64-node run is 3 GB of interleaved rank output. what's the fastest way to find the FIRST real error instead of the thousands of cascade messages after it?
"""),
    c("slurm-log-search-ja", "ja", "slurm-log-error-search", "authored (user question)", """
全ノード分のログが混ざった巨大な slurm-12345.out から、最初に出たエラーだけを探したいです。grep で Error や Exception を探すときのコツはありますか？
"""),
    # ---------------------------------------------------- sagemaker capacity / limits
    c("sm-capacity-error-grand-challenge", "line", "sagemaker-insufficient-capacity", GH + "DIAGNijmegen/rse-grand-challenge/issues/2631", """
FailureReason: "CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type."
"""),
    c("sm-capacity-unexpected-status", "line", "sagemaker-insufficient-capacity", GH + "aws/deep-learning-containers/pull/1075", """
E           sagemaker.exceptions.UnexpectedStatusException: Error for Training job test-tf-smdataparallel-1619652004-96b6: Failed. Reason: CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type.
"""),
    c("sm-capacity-studio-space", "line", "sagemaker-insufficient-capacity", GH + "aws/amazon-sagemaker-feedback/issues/99", """
EC2InsufficientCapacityError: Instance type 'ml.g5.48xlarge' is temporarily unavailable in supported availability zones [euw1-az1]. Try again in a few minutes, or try a different instance type.
"""),
    c("sm-limit-zero-instances", "line", "sagemaker-resource-limit-exceeded", GH + "zenml-io/zenml/issues/847", """
ResourceLimitExceeded: An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: The account-level service limit 'ml.p2.xlarge
for training job usage' is 0 Instances, with current utilization of 0 Instances and a request delta of 1 Instances. Please contact AWS support to request an
increase for this limit.
"""),
    c("sm-limit-utilization-exceeds", "line", "sagemaker-resource-limit-exceeded", GH + "aws/amazon-sagemaker-examples/issues/1543", """
ResourceLimitExceeded: An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: The account-level service limit 'ml.p3.8xlarge for training job usage' is 2 Instances, with current utilization of 3 Instances and a request delta of 1 Instances. Please contact AWS support to request an increase for this limit.
"""),
    c("sm-limit-processing-jobs", "line", "sagemaker-resource-limit-exceeded", GH + "data-science-on-aws/data-science-on-aws/issues/200", """
ResourceLimitExceeded: An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: The account-level service limit 'Number of instances across all processing jobs' is 4 Instances, with current utilization of 0 Instances and a request delta of 11 Instances. Please contact AWS support to request an increase for this limit.
"""),
    c("sm-limit-not-in-region", "near-miss", "sagemaker-resource-limit-exceeded", GH + "aws/amazon-sagemaker-examples/issues/1001", """
An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: The requested resource training-job/ml.p2.xlarge is not available in this region
"""),
    # ------------------------------------------------------------------ no-gpu-visible
    c("no-gpu-lazy-init-colab", "traceback", "no-gpu-visible", GH + "AI-secure/CRFL/issues/1", """
  File "/content/gdrive/MyDrive/CRFL/utils/helper.py", line 78, in dp_noise
    noised_layer = torch.cuda.FloatTensor(param.shape).normal_(mean=0, std=sigma)
  File "/usr/local/lib/python3.7/dist-packages/torch/cuda/__init__.py", line 172, in _lazy_init
    torch._C._cuda_init()
RuntimeError: No CUDA GPUs are available
"""),
    c("no-gpu-set-device", "traceback", "no-gpu-visible", GH + "jiaw-z/CoR-GS/issues/23", """
  File "./exp/CoR-GS/utils/general_utils.py", line 139, in safe_state
    torch.cuda.set_device(torch.device("cuda:0"))
  File "./.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 293, in _lazy_init
    torch._C._cuda_init()
RuntimeError: No CUDA GPUs are available
"""),
    c("no-gpu-prose-container", "prose", "no-gpu-visible", "authored (user question)", """
inside the enroot container on the compute node torch.cuda.is_available() is False, but nvidia-smi on the host shows all 8 GPUs. I did request --gres=gpu:8.
"""),
    # ------------------------------------------------ cuda-driver-version-insufficient
    c("driver-old-assertion", "traceback", "cuda-driver-version-insufficient", GH + "wuhuikai/FastFCN/issues/37", """
  File "/home/weizhaoxiang/anaconda3/envs/pytorch1.0/lib/python3.6/site-packages/torch/cuda/__init__.py", line 108, in _check_driver
    of the CUDA driver.\"\"\".format(str(torch._C._cuda_getDriverVersion())))
AssertionError:
The NVIDIA driver on your system is too old (found version 9000).
Please update your GPU driver by downloading and installing a new
version from the URL: http://www.nvidia.com/Download/index.aspx
"""),
    c("driver-old-userwarning", "line", "cuda-driver-version-insufficient", GH + "IEIT-Yuan/Yuan-2.0/issues/65", """
/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11000). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. (Triggered internally at /opt/pytorch/pytorch/c10/cuda/CUDAFunctions.cpp:108.)
"""),
    c("driver-old-with-smi", "log", "cuda-driver-version-insufficient", GH + "lllyasviel/Fooocus/issues/1313", """
RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.

+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.86       Driver Version: 470.86       CUDA Version: 11.4
|-------------------------------+----------------------+----------------------+
"""),
    # ---------------------------------------------------------------- cuda-no-kernel-image
    c("no-kernel-h100-mmcv", "line", "cuda-no-kernel-image", GH + "open-mmlab/mmdetection/issues/11044", """
Problem: error in ms_deformable_im2col_cuda: no kernel image is available for execution on the device Environment: H100, Pytorch==2.0.1 with cuda11.8, torchversion==0.15.2
"""),
    c("no-kernel-llamacpp-209", "line", "cuda-no-kernel-image", GH + "ggml-org/llama.cpp/issues/4215", """
CUDA error 209 at /home/user/Documents/devops/llama.cpp/ggml-cuda.cu:6701: no kernel image is available for execution on the device
"""),
    c("no-kernel-runtime-error", "log", "cuda-no-kernel-image", GH + "YanWenKun/Hunyuan3D-2-WinPortable/issues/67", """
    q = p.to("cuda", non_blocking=True)
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""),
    # ---------------------------------------------------------------- gpu-fallen-off-bus
    c("fallen-off-bus-nvrm-xid79", "log", "gpu-fallen-off-bus", GH + "NVIDIA/open-gpu-kernel-modules/issues/1151", """
NVRM: GPU at PCI:0000:06:00: GPU-0b6b7808-c002-f593-ac86-cd8e57757b94
NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.
NVRM: GPU 0000:06:00.0: GPU has fallen off the bus.
NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.
NVRM: _threadNodeCheckTimeout: API_GPU_ATTACHED_SANITY_CHECK failed!
"""),
    c("fallen-off-bus-no-xid", "log", "gpu-fallen-off-bus", GH + "NVIDIA/NVSentinel/issues/155", """
[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0
               NVRM: (PCI ID: 10de:26b5) installed in this system has
               NVRM: fallen off the bus and is not responding to commands.
[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).
"""),
    c("fallen-off-bus-gpud", "log", "gpu-fallen-off-bus", GH + "leptonai/gpud/issues/604", """
XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00
failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped rows: ERROR_GPU_IS_LOST
"""),
    # -------------------------------------------------------------------- gpu-ecc-error
    c("ecc-runtime-error-39", "log", "gpu-ecc-error", GH + "NVIDIA/semantic-segmentation/issues/33", """
RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265
terminate called without an active exception
"""),
    c("ecc-then-watchdog-thread", "log", "gpu-ecc-error", GH + "kohya-ss/sd-scripts/issues/1434", """
RuntimeError: CUDA error: uncorrectable ECC error encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.

[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered
"""),
    c("ecc-tensorflow-streamexecutor", "line", "gpu-ecc-error", GH + "nagadit/DeepFaceLab_Linux/issues/89", """
F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error Internal: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered
"""),
    # ---------------------------------------------------------------- gpu-zombie-process
    c("zombie-memory-no-pid", "prose", "gpu-zombie-process", GH + "qizhou000/VisEdit/issues/5", """
After stopping the process, it disappears from nvidia-smi and gpustat. However, it still holds GPU memory, and the utilization rate stays at 100%:
`[6] NVIDIA A100 80GB PCIe | 52'C, 100 % | 10151 / 81920 MB | (null)`
Using `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` I can see the PID still occupying memory. When I try `kill -9 <pid>` I get: `no such process`.
"""),
    c("zombie-zh-paddle", "prose", "gpu-zombie-process", GH + "PaddlePaddle/PaddleOCR/issues/2074", """
nohup 启动训练进程之后直接kill主进程显卡不会释放显存
并且nvidia-smi只能看到显存占用，底下看不到这张卡里有进程
"""),
    c("zombie-ja", "ja", "gpu-zombie-process", "authored (user question)", """
前のジョブを scancel した後も nvidia-smi で GPU メモリが 40GB 使われたままで、プロセス一覧には何も出ません。新しいジョブが OOM になります。どう片付ければいいですか？
""", also_ok=("cuda-oom",)),
    # ----------------------------------------------------------------- nccl-remote-error
    c("remote-error-connection-reset", "log", "nccl-remote-error", GH + "NVIDIA/nccl/issues/2076", """
torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5
ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
Last error:
socketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer
"""),
    c("remote-error-ib-completion", "log", "nccl-remote-error", GH + "deepseek-ai/DeepEP/issues/106", """
ith exception: NCCL error: remote process exited or there was a network error, NCCL version 2.20.5  ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.                                                       Last error:                                                                                                                                                   NET/IB : Got completion from peer 172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249                                                      Exception raised from checkForNCCLErrorsInternal at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1736 (most recent call first):
"""),
    c("remote-error-broken-pipe-pcluster", "log", "nccl-remote-error", GH + "NVIDIA/nccl/issues/795", """
a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe
a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO misc/socket.cc:535 -> 6
a100-st-p4d24xlarge-22:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6
a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster<47861>
"""),
    # ------------------------------------------------------------ nccl-unhandled-cuda-error
    c("unhandled-cuda-rank7-invalid-arg", "log", "nccl-unhandled-cuda-error", GH + "NVIDIA/nccl/issues/1410", """
[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5
[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.
[rank7]: Last error:
[rank7]: Cuda failure 1 'invalid argument'
"""),
    c("unhandled-cuda-std-runtime-error", "line", "nccl-unhandled-cuda-error", GH + "TheAtticusProject/cuad/issues/9", """
When I run the training script, I ran into an instance of 'std::runtime_error'
what(): NCCL Error 1: unhandled cuda error
"""),
    c("unhandled-cuda-nccl-tests-symbol", "log", "nccl-unhandled-cuda-error", GH + "NVIDIA/nccl-tests/issues/208", """
NCCL version 2.21.5+cuda11.8

noodle-4090-0:1896106:1896121 [1] enqueue.cc:47 NCCL WARN Cuda failure 'named symbol not found'

noodle-4090-0:1896106:1896121 [1] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'
Test NCCL failure common.cu:954 'unhandled cuda error'
"""),
    # ----------------------------------------------------------------- nccl-network-hang
    c("net-hang-lo-interface", "log", "nccl-network-hang", GH + "horovod/horovod/issues/584", """
paigcr-b-gpu-1012:4152:4206 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>
paigcr-b-gpu-1012:4152:4206 [0] NCCL INFO NET : Using interface eth0:10.151.40.240<0>
paigcr-b-gpu-1012:4152:4206 [0] NCCL INFO NET/Socket : 3 interfaces found

paigcr-b-gpu-1012:4153:4209 [1] include/socket.h:361 NCCL WARN Call to connect timeout : Connection refused
paigcr-b-gpu-1012:4153:4209 [1] NCCL INFO bootstrap.cu:19 -> 2
"""),
    c("net-hang-veth-prose", "prose", "nccl-network-hang", GH + "NVIDIA/nccl/issues/913", """
A docker container was running in bridge networking mode, causing a `veth*` interface to exist, which caused the `ncclCommInitRank()` to hang. I know the default network selection excludes `lo` and `docker` interfaces. Can't it just exclude any interface which isn't able to reach the other nodes?
"""),
    c("net-hang-no-socket-interface", "log", "nccl-network-hang", GH + "marin-community/marin/issues/6940", """
Multi-node GPU training fails at NCCL clique init with `Bootstrap : no socket interface found` and `invalid usage`. The cluster sets
NCCL_SOCKET_IFNAME: =enp90s0np0
""", also_ok=("nccl-invalid-usage-duplicate-gpu",)),
    # --------------------------------------------------------------- collective-mismatch
    c("mismatch-allgather-shape", "line", "collective-mismatch", GH + "aurekaresearch/OpenDDE/issues/23", """
RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=_ALLGATHER_BASE, TensorShape=[359, 1, 1435, 16], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=_ALLGATHER_BASE, TensorShape=[359, 1, 1436, 16], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).
"""),
    c("mismatch-allreduce-numel", "line", "collective-mismatch", GH + "modelscope/ms-swift/pull/9443", """
[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456
"""),
    c("mismatch-nccl-warn-rank39", "line", "collective-mismatch", GH + "NVIDIA/nccl/issues/296", """
`init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs`
"""),
    c("mismatch-barrier-seq", "line", "collective-mismatch", GH + "pytorch/pytorch/issues/148976", """
  RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).
"""),
    # ------------------------------------------------------------------- amd-iommu-hang
    c("iommu-rccl-warn", "log", "amd-iommu-hang", GH + "ROCm/vllm/issues/390", """
supllm:402:402 [0] /longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/src/out/ubuntu-22.04/22.04/build/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!
supllm:402:402 [0] NCCL INFO RCCL version : 2.22.3-HEAD:271856d
"""),
    c("iommu-4090-prose", "prose", "amd-iommu-hang", GH + "NVIDIA/nccl-tests/issues/117", """
This is an AMD system as well, 7402P and Asrock ROMED8-2T, 4xRTX 4090. It works with NCCL_P2P_DISABLE=1. Initialization is successful, but it hangs/freezes right after initialization, both in pytorch and using all_reduce_perf. GPU usage is ~99% after the freeze, but there's no real activity on it.
"""),
    c("iommu-ryzen-all-gather-stuck", "prose", "amd-iommu-hang", GH + "NVIDIA/nccl/issues/120", """
single/all_gather_test is always stuck. My cpu is one AMD Ryzen 7 1700X. The motherboard is AUSU ROG C6H. I have disabled CPU virtualization already.
"""),
    # ------------------------------------------------------------ torchrun-child-failed
    c("child-failed-no-root-detail", "log", "torchrun-child-failed", GH + "Vision-CAIR/MiniGPT-4/issues/237", """
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2023-05-19_16:39:58
  host      : n136-117-136.byted.org
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 78971)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-05-19_16:39:58
  host      : n136-117-136.byted.org
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 78970)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""),
    c("child-failed-accelerate", "log", "torchrun-child-failed", GH + "xiuqhou/Salience-DETR/issues/4", """
[2024-05-08 08:47:31,261] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 5938 closing signal SIGTERM
[2024-05-08 08:47:31,877] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 2 (pid: 5939) of binary: /home/ubuntu/anaconda3/envs/salience_detr/bin/python
Traceback (most recent call last):
  File "/home/ubuntu/anaconda3/envs/salience_detr/bin/accelerate", line 8, in <module>
    sys.exit(main())
  File "/home/ubuntu/anaconda3/envs/salience_detr/lib/python3.8/site-packages/accelerate/commands/launch.py", line 718, in multi_gpu_launcher
    distrib_run.run(args)
"""),
    # --------------------------------------------- hangs: py-spy, isolate GPUs, trace
    c("hang-prose-no-error", "prose", "distributed-hang-py-spy", "authored (user question)", """
our 32-node run has been stuck at step 18200 for 40 minutes. no error in any log, GPU util shows 100% on every GPU. how do I see where each rank is stuck?
"""),
    c("hang-silent-collective-wedge", "prose", "distributed-hang-py-spy", GH + "marin-community/marin/issues/7344", """
grug 512-GPU (8-rack GB200) run silently hangs mid-training (collective wedge, no error)
""", also_ok=("nccl-watchdog-timeout",)),
    c("hang-ja", "ja", "distributed-hang-py-spy", "authored (user question)", """
学習が途中で止まったままエラーも出ません。全ランクのスタックを一度に見る方法はありますか？py-spy を srun で各ノードに流すやり方を知りたいです。
"""),
    c("isolate-bad-gpu-prose", "prose", "isolate-bad-gpus", "authored (user question)", """
one of the 8 GPUs on gpu-207 seems flaky: jobs that land there hang randomly, others are fine. how do I figure out which GPU it is and keep running without it?
"""),
    c("python-trace-prose", "prose", "python-trace-unresponsive", "authored (user question)", """
py-spy dump just hangs too on this process, it doesn't return. is there any other way to see which python line it executes, like tracing every line as it runs?
"""),
    # ------------------------------------------------------------ SageMaker SMP / SDP
    c("smp-debugger-ckpt-prose", "prose", "smp-debugger-checkpoint-uploading", "authored (SageMaker model parallel user question)", """
using smdistributed.modelparallel with Debugger enabled and checkpointing to S3, the job stalls while 'uploading' checkpoints and eventually errors. is Debugger supported together with model parallel checkpoints?
""", also_ok=("smdebug-checkpointing-unsupported",)),
    c("sm-ckpt-internal-error-prose", "prose", "sagemaker-checkpoint-internal-error", "authored (SageMaker user question)", """
training job with a large model and checkpoint_s3_uri set fails with an internal error from SageMaker right when it writes checkpoints. nothing in my script's own logs explains it. should I just retry?
"""),
    c("smp-tf-input-order-prose", "prose", "smp-tf-input-order-convergence", "authored (SageMaker model parallel TF question)", """
TF2 + smp model parallel: loss curve diverges compared to the single-GPU run with the same seed. could the order of the inputs to smp.DistributedModel's call be the issue?
"""),
    c("efa-sg-init-stall-prose", "prose", "efa-security-group-init-stall", "authored (SageMaker data parallel question)", """
smddp job on 2x ml.p4d.24xlarge in my VPC hangs during initialization forever, never prints the first step. single instance works. we use our own security group.
"""),
    c("efa-sg-ja", "ja", "efa-security-group-init-stall", "authored (user question)", """
SageMaker の分散データ並列で VPC 内に 2 インスタンス以上立てると初期化で止まります。EFA を使う場合、セキュリティグループに何か設定が必要ですか？
"""),
    c("smp-ckpt-stall-state-dict-prose", "prose", "smp-checkpoint-stall-state-dict", "authored (SageMaker model parallel question)", """
with smp the job hangs forever when saving a checkpoint. I call model.state_dict() only on rank 0 inside `if smp.rank() == 0:`. single GPU was fine.
"""),
    c("smp-net-timeout-pph-prose", "prose", "smp-network-timeout-processes-per-host", "authored (SageMaker model parallel question)", """
smp training on ml.p3.16xlarge x2 fails with a NetworkTimeout / connection timeout during startup. I set processes_per_host to 16 in the mpi options. is that right for an 8-GPU instance?
"""),
    c("sm-ckpt-uri-reuse-prose", "prose", "sagemaker-checkpoint-s3-uri-reuse", "authored (SageMaker question)", """
started a new training job and it immediately resumed from some old step and then crashed loading shapes that don't match. I reused the same checkpoint_s3_uri as yesterday's experiment. related?
"""),
    c("fsx-large-data-prose", "prose", "fsx-lustre-large-data", "authored (SageMaker question)", """
our dataset in S3 is 6 TB; the training job spends over an hour in "Downloading input data" before each run. what's the recommended input mode for that much data on multi-node jobs?
"""),
    c("smdebug-ckpt-unsupported-prose", "prose", "smdebug-checkpointing-unsupported", "authored (SageMaker data parallel question)", """
with smdistributed.dataparallel, enabling Debugger plus checkpoint_s3_uri makes the job fail. should I turn off the debugger hook config for distributed jobs that checkpoint?
""", also_ok=("smp-debugger-checkpoint-uploading",)),
    c("state-dict-module-prefix", "traceback", "state-dict-unexpected-prefix", "authored (error format of torch.nn.Module.load_state_dict)", """
RuntimeError: Error(s) in loading state_dict for ResNet:
	Missing key(s) in state_dict: "conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var".
	Unexpected key(s) in state_dict: "module.conv1.weight", "module.bn1.weight", "module.bn1.bias", "module.bn1.running_mean", "module.bn1.running_var".
"""),
    c("state-dict-prefix-prose", "prose", "state-dict-unexpected-prefix", "authored (user question)", """
saved the model from the SageMaker data parallel job, now loading it for inference fails: every key starts with "module." so nothing matches. how do I strip that?
"""),
    c("uneven-batches-prose", "prose", "uneven-batches-stall-at-end", "authored (SageMaker data parallel question)", """
distributed training runs fine for the whole epoch and then stalls at the very end of the epoch until it times out. our dataset size isn't divisible by the number of GPUs.
"""),
    c("trcomp-single-gpu-prose", "prose", "trcomp-convergence-single-gpu", "authored (Training Compiler question)", """
after enabling SageMaker Training Compiler on a single ml.p3.2xlarge the loss doesn't go down like it did without the compiler. same hyperparameters.
"""),
    c("trcomp-distributed-prose", "prose", "trcomp-convergence-distributed", "authored (Training Compiler question)", """
Training Compiler with 4 instances: the model converges worse than the non-compiled distributed run. do I need to change how the loss or gradients are synchronized?
"""),
    c("xla-missing-gpu-num-devices", "prose", "xla-missing-gpu-num-devices", "authored (Training Compiler question)", """
my Training Compiler job (PyTorch, distribution={"pytorchxla": {"enabled": True}}) dies right at startup complaining about a missing XLA configuration and GPU_NUM_DEVICES. what am I supposed to set?
"""),
    c("trcomp-no-speedup-prose", "prose", "trcomp-no-speedup", "authored (Training Compiler question)", """
turned on SageMaker Training Compiler for our BERT fine-tune and the epoch time is the same or slower than before. batch size unchanged. what are we missing?
"""),
    c("trcomp-no-speedup-ja", "ja", "trcomp-no-speedup", "authored (user question)", """
SageMaker Training Compiler を有効にしても学習時間がまったく短くなりません。バッチサイズを大きくする必要があるのでしょうか？
"""),
    # ------------------------------------------------------- second search pass
    c("port-in-use-rdzv-29400-warn", "log", "master-port-in-use", GH + "pytorch/pytorch/issues/126510", """
[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - Address already in use).
[W socket.cpp:436] [c10d] The server socket has failed to bind to 0.0.0.0:29400 (errno: 98 - Address already in use).
[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.
"""),
    c("port-in-use-distnetworkerror", "line", "master-port-in-use", GH + "TorchDR/TorchDR/issues/249", """
torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address.
port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use
"""),
    c("port-in-use-old-tcpstore", "traceback", "master-port-in-use", GH + "OpenNMT/OpenNMT-py/issues/1298", """
  File "/home/mengr/.conda/envs/kp_py36/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 354, in init_process_group
    store, rank, world_size = next(rendezvous(url))
  File "/home/mengr/.conda/envs/kp_py36/lib/python3.6/site-packages/torch/distributed/rendezvous.py", line 95, in _tcp_rendezvous_handler
    store = TCPStore(result.hostname, result.port, world_size, start_daemon)
RuntimeError: Address already in use
"""),
    c("slurm-time-limit-lightning-sigterm", "log", "slurm-time-limit", GH + "Lightning-AI/pytorch-lightning/issues/20542", """
Epoch 10:  93%|█████████▎| 18626/20000 [5:43:21<25:19,  0.90it/s, v_num=0txx, train_loss=3.400, denoise_60%_expr=1.290, denoise_60%_emb_independence=0.0694, denoise_60%_cls=0.377, denoise_60%_ecs=0.865, gen_expr=1.490, gen_emb_independence

slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***
srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
[rank: 0] Received SIGTERM: 15
Bypassing SIGTERM: 15
"""),
    c("slurm-preempted-lightning-prose", "prose", "slurm-preempted", GH + "Lightning-AI/pytorch-lightning/issues/4265", """
I used the suggested signal (#SBATCH --signal=SIGUSR1@90) and set distributed_backend to 'ddp'. I did notice successful auto-resubmission this morning whenever my jobs were pre-emptied; however, I now notice that several of them have not completed and are not queued either. Is there a maximum to the number of times the jobs would be re-queued?
"""),
    c("hang-after-checkpoint-nemo", "prose", "distributed-hang-py-spy", GH + "NVIDIA-NeMo/Speech/issues/13739", """
when using the exact same config with multiple gpus using ddp on the same machine it hangs after saving the checkpoint after a validation run if and only if the checkpoint name has `val_loss` value in it. the training hangs and all GPUs show 99% utilization
""", also_ok=("collective-mismatch",)),
    c("hang-ckpt-levanter-no-error", "prose", "distributed-hang-py-spy", GH + "marin-community/levanter/issues/486", """
After saving a checkpoint, the model training may stuck and could not recover from it until restarting. There is no error message in the log. The instance did not crash/restart. I noticed that the log `Saved checkpoint for step xxx` does not print for all nodes.
"""),
    c("xla-missing-config-gpu-colab", "traceback", "xla-missing-gpu-num-devices", GH + "pytorch/xla/issues/2870", """
/usr/local/lib/python3.7/dist-packages/torch_xla/core/xla_model.py in <lambda>()
     16 import torch_xla.utils.keyd_queue as kq
     17
---> 18 _DEVICES = xu.LazyProperty(lambda: torch_xla._XLAC._xla_get_devices())

RuntimeError: tensorflow/compiler/xla/xla_client/computation_client.cc:296 : Missing XLA configuration
"""),
    c("efa-unresponsive-receiver", "line", "efa-security-group-init-stall", GH + "gardener/gardener-extension-provider-aws/issues/1832", """
every NCCL/MPI workload that exercises EFA RDMA fails with `Error 4126: Unresponsive receiver (reachable by EFA device but handshake failed)` until the self-referencing egress rule is added
"""),
    c("efa-ingress-not-egress-prose", "prose", "efa-security-group-init-stall", GH + "open-mpi/ompi/issues/6795", """
mpirun over EFA between two instances: the efa provider gets selected (mtl:ofi:prov: efa;ofi_rxr) but the ranks never connect. I had the ingress rule to the security group itself set but not the egress.
"""),
    # ================================================================= negatives
    c("neg-chat-thanks", "negative", None, "authored (chat)", "thanks, bumping shm fixed it 🙏"),
    c("neg-chat-reservation", "negative", None, "authored (chat)", "who has the H100 reservation next week? I need 4 nodes for the ablation sweep"),
    c("neg-chat-review", "negative", None, "authored (chat)", "can someone review my PR for the tokenizer cache? no rush"),
    c("neg-chat-ja-meeting", "negative", None, "authored (chat)", "明日の定例は15時からに変更になりました。よろしくお願いします。"),
    c("neg-chat-lunch", "negative", None, "authored (chat)", "lunch at 12:30? the ramen place is open again"),
    c("neg-chat-nccl-version-question", "near-miss", None, "authored (chat)", "which NCCL version is baked into the new container image? release notes don't say"),
    c("neg-ja-nccl-question", "near-miss", None, "authored (chat)", "新しいイメージの NCCL のバージョンは 2.21 ですか？特に問題は起きていません。"),
    c("neg-oom-catch-pr-review", "near-miss", None, "authored (code review comment)", "LGTM — we now catch torch.cuda.OutOfMemoryError in the eval loop and retry with half the batch, added a test for it"),
    c("neg-smi-high-usage-fine", "near-miss", None, "authored (chat)", "is it normal that nvidia-smi shows 79 GB / 80 GB used on every GPU while training? no errors, throughput looks fine"),
    c("neg-nccl-timeout-setting-question", "near-miss", None, "authored (chat)", "we bumped the NCCL timeout to 2h for the eval phase, does that also apply to the gloo group used for metrics?"),
    c("neg-slurm-cheatsheet", "near-miss", None, "authored (chat)", "reminder: use `sbatch --time=48:00:00` for the long runs and `--requeue` on the spot partition, see the wiki page"),
    c("neg-nccl-init-complete", "log", None, GH + "NVIDIA/nccl/issues/367", """
26a46eb2b1d3:111315:111399 [0] NCCL INFO Ring 00 : 11[0] -> 12[0] via direct shared memory
26a46eb2b1d3:111336:111404 [0] NCCL INFO Ring 01 : 14[0] -> 15[0] via direct shared memory
26a46eb2b1d3:111329:111403 [0] NCCL INFO comm 0x7fef94002590 rank 13 nranks 16 cudaDev 0 nvmlDev 5 - Init COMPLETE
26a46eb2b1d3:111322:111405 [0] NCCL INFO comm 0x7f04c8002590 rank 12 nranks 16 cudaDev 0 nvmlDev 4 - Init COMPLETE
26a46eb2b1d3:111308:111402 [0] NCCL INFO comm 0x7efca4002590 rank 10 nranks 16 cudaDev 0 nvmlDev 2 - Init COMPLETE
"""),
    c("neg-nccl-socket-channels", "log", None, GH + "NVIDIA/nccl/issues/697", """
dgxa100:1050:1315 [0] NCCL INFO Channel 03/0 : 0[90000] -> 1[1000] [send] via NET/Socket/3
dgxa100:1050:1315 [0] NCCL INFO Channel 04/0 : 0[90000] -> 1[1000] [send] via NET/Socket/4
dgxa100:1050:1315 [0] NCCL INFO Channel 05/0 : 0[90000] -> 1[1000] [send] via NET/Socket/5
dgxa100:1050:1315 [0] NCCL INFO Channel 06/0 : 0[90000] -> 1[1000] [send] via NET/Socket/6
"""),
    c("neg-rccl-tests-bandwidth", "log", None, GH + "ROCm/rccl/issues/1129", """
$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2
# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#   Rank  0 Pid   2303 on deep-visionscaper3 device  0 [0000:2f:00.0] AMD Instinct MI100
#   Rank  1 Pid   2303 on deep-visionscaper3 device  1 [0000:03:00.0] AMD Instinct MI100
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
           8             2     float     sum      -1    13.10    0.00    0.00      0    13.92    0.00    0.00      0
          16             4     float     sum      -1    13.46    0.00    0.00      0    13.64    0.00    0.00      0
"""),
    c("neg-omp-threads-warning", "log", None, GH + "pytorch/pytorch/issues/107021", """
Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.
*****************************************
"""),
    c("neg-master-addr-static-warning", "log", None, GH + "ymcui/Chinese-LLaMA-Alpaca-2/issues/274", """
master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.
WARNING:torch.distributed.run:
*****************************************
"""),
    c("neg-deepspeed-overflow-skip", "near-miss", None, GH + "ymcui/Chinese-LLaMA-Alpaca/issues/534", """
  9%|▉         | 248/2724 [9:10:28<91:21:51, 132.84s/it][2023-06-07 17:28:19,122] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2048, reducing to 1024

  9%|▉         | 249/2724 [9:12:40<91:10:10, 132.61s/it]
{'loss': 1.89, 'learning_rate': 0.00019920353585932578, 'epoch': 0.18}
"""),
    c("neg-nnpack-warning", "log", None, GH + "Sachini/ronin/issues/51", """
Number of train samples: 761740
Total number of parameters:  4634882
Start from epoch 0
[W NNPACK.cpp:53] Could not initialize NNPACK! Reason: Unsupported hardware.
"""),
    c("neg-moe-config-warning", "log", None, GH + "sgl-project/sglang/issues/3204", """
[2025-01-29 08:52:43 TP5] Using default MoE config. Performance might be sub-optimal! Config file not found at /home/ubuntu/.local/lib/python3.10/site-packages/sglang/srt/layers/moe/fused_moe_triton/configs/E=160,N=192,device_name=NVIDIA_A100-SXM4-80GB.json
[2025-01-29 08:52:44 TP2] Using default MoE config. Performance might be sub-optimal! Config file not found at /home/ubuntu/.local/lib/python3.10/site-packages/sglang/srt/layers/moe/fused_moe_triton/configs/E=160,N=192,device_name=NVIDIA_A100-SXM4-80GB.json
"""),
    c("neg-nccl-net-plugin-not-found", "log", None, GH + "NVIDIA/nccl-tests/issues/208", """
noodle-4090-0:1896106:1896106 [0] NCCL INFO Bootstrap : Using eno2:10.33.48.72<0>
noodle-4090-0:1896106:1896106 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)
noodle-4090-0:1896106:1896106 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so
noodle-4090-0:1896106:1896106 [0] NCCL INFO NET/Plugin: Using internal network plugin.
"""),
    c("neg-hf-trainer-saving", "log", None, GH + "hiyouga/LlamaFactory/issues/1223", """
{'loss': 2.9043, 'learning_rate': 4.999641867738336e-05, 'epoch': 0.02}
  1%|▍                                                                           | 10/1856 [04:16<13:02:24, 25.43s/it][INFO|trainer.py:2926] 2023-10-19 09:48:54,430 >> Saving model checkpoint to pt_output/chatglm_pt_checkpoint_deepspeed/checkpoint-10
[INFO|configuration_utils.py:458] 2023-10-19 09:48:55,234 >> Configuration saved in pt_output/chatglm_pt_checkpoint_deepspeed/checkpoint-10/config.json
"""),
    c("neg-detectron-train-loop", "log", None, GH + "ShoufaChen/DiffusionDet/issues/39", """
[12/20 18:16:09 d2.utils.events]:  eta: 19:46:55  iter: 4959  total_loss: 10.31  loss_ce: 0.8514  loss_bbox: 0.3865  loss_giou: 0.4012  time: 0.2815  data_time: 0.0115  lr: 2.5e-05  max_mem: 5418M
[12/20 18:16:14 d2.utils.events]:  eta: 19:46:57  iter: 4979  total_loss: 9.924  loss_ce: 0.7974  loss_bbox: 0.3912  loss_giou: 0.3875  time: 0.2814  data_time: 0.0108  lr: 2.5e-05  max_mem: 5418M
"""),
    c("neg-elastic-launch-config", "log", None, GH + "pytorch/pytorch/issues/64926", """
[INFO] 2021-09-13 22:17:26,651 run: Running torch.distributed.run with args: ['/home/yczhong/.conda/envs/yczhong/lib/python3.6/site-packages/torch/distributed/run.py', '--nnodes=2', '--nproc_per_node=2', '--rdzv_id=1234', '--rdzv_backend=c10d', '--rdzv_endpoint=10.28.1.16', 'main.py']
[INFO] 2021-09-13 22:17:26,653 run: Using nproc_per_node=2.
"""),
    c("neg-sacct-completed", "near-miss", None, "authored (sacct output format)", """
$ sacct -j 4242 --format=JobID,JobName,State,ExitCode,Elapsed
JobID           JobName      State ExitCode    Elapsed
------------ ---------- ---------- -------- ----------
4242           finetune  COMPLETED      0:0   11:42:07
4242.batch        batch  COMPLETED      0:0   11:42:07
4242.0           python  COMPLETED      0:0   11:41:55
"""),
    c("neg-squeue-running", "near-miss", None, "authored (squeue output format)", """
             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
           7781210       h100 pretrain   tanaka  R    3:12:44     16 gpu-h100-[017-032]
           7781211       h100     eval   tanaka PD       0:00      1 (Dependency)
"""),
    c("neg-smi-healthy-ecc-zero", "near-miss", None, "authored (nvidia-smi -q output format)", """
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
"""),
    c("neg-sbatch-time-limit-invalid", "near-miss", None, GH + "ComparativeGenomicsToolkit/cactus/issues/124", """
Operation <bound method Worker.submitJob of <Worker(Thread-161, started 47702471632640)>> failed with code 1: sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)
"""),
    c("neg-srun-alloc-time-limit-invalid", "near-miss", None, GH + "desihub/desitarget/issues/628", """
srun: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)
"""),
    c("neg-tokenizer-json-error", "negative", None, GH + "yangjianxin1/Firefly/issues/32", """
│   113 │   │   │   # We need to convert a slow tokenizer to build the backend                     │
│   114 │   │   │   fast_tokenizer = convert_slow_tokenizer(slow_tokenizer)                        │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
Exception: expected value at line 1 column 1
"""),
    c("neg-size-mismatch-state-dict", "near-miss", None, "authored (error format of torch.nn.Module.load_state_dict)", """
RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:
	size mismatch for lm_head.weight: copying a param with shape torch.Size([32000, 4096]) from checkpoint, the shape in current model is torch.Size([32001, 4096]).
"""),
    c("neg-module-not-found-flash-attn", "negative", None, "authored (common import error)", """
Traceback (most recent call last):
  File "/workspace/train.py", line 12, in <module>
    from flash_attn import flash_attn_func
ModuleNotFoundError: No module named 'flash_attn'
"""),
    c("neg-java-heap-oom", "near-miss", None, "authored (Spark preprocessing error)", """
25/03/21 02:11:09 ERROR Executor: Exception in task 41.0 in stage 3.0 (TID 812)
java.lang.OutOfMemoryError: Java heap space
	at java.base/java.util.Arrays.copyOf(Arrays.java:3537)
"""),
    c("neg-kernel-soft-lockup", "near-miss", None, "authored (kernel message format)", """
[Fri Mar 21 02:14:55 2025] watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [kworker/12:1:48213]
"""),
    c("neg-valueerror-shapes", "negative", None, "authored (common user bug)", """
  File "/workspace/model.py", line 88, in forward
    x = x.view(b, t, self.n_head, c // self.n_head)
RuntimeError: shape '[8, 1024, 32, 128]' is invalid for input of size 33554431
"""),
    c("neg-git-lfs", "negative", None, "authored (chat)", "git lfs pull keeps failing with 'batch response: This repository is over its data quota' on the dataset repo, anyone else?"),
    c("neg-wandb-offline", "negative", None, "authored (common warning)", "wandb: WARNING Network error (ReadTimeout), entering retry loop.\nwandb: Network error resolved after 0:00:21.311092, resuming normal operation."),
    c("neg-ja-healthy-progress", "near-miss", None, "authored (chat)", "学習は順調です。loss は 1.82 まで下がり、GPU 使用率も 98% 前後で安定しています。OOM も NCCL エラーも出ていません。"),
    c("neg-typedstorage-warning", "log", None, "authored (common PyTorch deprecation warning)", """
/opt/conda/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()
  return self.fget.__get__(instance, owner)()
"""),
    c("neg-dataloader-workers-warning", "near-miss", None, "authored (common PyTorch warning)", """
/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 12, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.
"""),
    # ================================================================ long logs
    c("long-torchrun-rank17-oom", "log", "cuda-oom", "synthetic; see header of logs/torchrun_rank17_cuda_oom.log",
      file="logs/torchrun_rank17_cuda_oom.log"),
    c("long-accelerate-default5-ecc", "log", "gpu-ecc-error", "synthetic; see header of logs/accelerate_default5_ecc.log",
      file="logs/accelerate_default5_ecc.log"),
    c("long-srun-task3-host-oom", "log", "host-oom-killed", "synthetic; see header of logs/srun_task3_host_oom.log",
      file="logs/srun_task3_host_oom.log"),
    c("long-mpirun-rank3-shm-bus", "log", "dataloader-shm-bus-error", "synthetic; see header of logs/mpirun_rank3_shm_bus_error.log",
      file="logs/mpirun_rank3_shm_bus_error.log"),
    c("long-sagemaker-algo2-illegal", "log", "cuda-illegal-memory-access", "synthetic; see header of logs/sagemaker_algo2_illegal_memory_access.log",
      file="logs/sagemaker_algo2_illegal_memory_access.log"),
    c("long-torchrun-rank0-disk-full", "log", "disk-full-on-save", "synthetic; see header of logs/torchrun_rank0_disk_full.log",
      file="logs/torchrun_rank0_disk_full.log"),
    c("long-sbatch-time-limit", "log", "slurm-time-limit", "synthetic; see header of logs/sbatch_time_limit.log",
      file="logs/sbatch_time_limit.log"),
    c("long-healthy-negative", "negative", None, "synthetic; see header of logs/healthy_run_negative.log",
      file="logs/healthy_run_negative.log"),
]


def main() -> None:
    out = HERE / "cases.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for case in CASES:
            fh.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"wrote {len(CASES)} cases to {out}")


if __name__ == "__main__":
    main()
