"""A real moto server on loopback for the SageMaker plugin, and helpers that set jobs and logs up in it.

How a *Failed* job gets into moto (moto 5.x): moto's SageMaker backend hard-codes every training job
as ``Completed`` (``FakeTrainingJob.__init__``) and, unlike batch, ecs or glue jobs, training jobs have
no state-manager transition (``moto/moto_api/__init__.py`` registers none for sagemaker) and there is
no ``/moto-api/`` endpoint or StopTrainingJob that changes them. So the server runs inside the test
process: ``moto.server.ThreadedMotoServer``, moto's own server class, serving the same WSGI app as the
``moto_server`` command on a free port of 127.0.0.1. Every call the plugin makes still goes through
boto3 → HTTP → moto; the one thing done out of band is :meth:`MotoAws.set_job_state`, which writes the
status, FailureReason and secondary status transitions on moto's backend object for the job, because
no API can. A ``moto_server`` subprocess would leave no honest way to do that.

Everything else is created through the real APIs: training jobs with create_training_job, the
``/aws/sagemaker/TrainingJobs`` log group, one stream per host and the log events through CloudWatch Logs.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest

from tracebot.config import REPO_ROOT
from tracebot.knowledge.loader import load_knowledge_base
from tracebot.matcher import Matcher

REGION = "us-east-1"
LOG_GROUP = "/aws/sagemaker/TrainingJobs"
LOGS_DIR = Path(__file__).parent / "logs"


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"moto server unavailable in CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as exc:  # moto[server] is a test dependency in pyproject.toml
        _unavailable(f"moto[server] is not installed: {exc}")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per call otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(f"{url}/moto-api/data.json", timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError as exc:
            if time.monotonic() > deadline:
                server.stop()
                _unavailable(f"moto server on {url} did not answer: {exc}")
            time.sleep(0.1)
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], None]:
    """Point the standard AWS chain at a loopback endpoint with test credentials, nothing from ~/.aws."""

    def point_at(endpoint: str) -> None:
        for name in (
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_ENDPOINT_URL_SAGEMAKER",
            "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS",
        ):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
        monkeypatch.setenv("AWS_REGION", REGION)
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    return point_at


@dataclass
class MotoAws:
    url: str
    sagemaker: Any
    logs: Any
    log_group_ready: bool = False
    base_time: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(hours=1))

    def job_name(self, stem: str) -> str:
        return f"{stem}-{uuid.uuid4().hex[:8]}"

    def create_job(
        self,
        name: str,
        instance_type: str = "ml.p4d.24xlarge",
        instance_count: int = 2,
        hyperparameters: dict[str, str] | None = None,
        checkpoint_s3_uri: str | None = None,
        debugger: bool = False,
    ) -> str:
        kwargs: dict[str, Any] = {
            "TrainingJobName": name,
            "AlgorithmSpecification": {
                "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311",
                "TrainingInputMode": "File",
            },
            "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
            "OutputDataConfig": {"S3OutputPath": "s3://team-bucket/output"},
            "ResourceConfig": {
                "InstanceType": instance_type,
                "InstanceCount": instance_count,
                "VolumeSizeInGB": 100,
            },
            "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
            "HyperParameters": hyperparameters or {},
        }
        if checkpoint_s3_uri:
            kwargs["CheckpointConfig"] = {"S3Uri": checkpoint_s3_uri, "LocalPath": "/opt/ml/checkpoints"}
        if debugger:
            kwargs["DebugHookConfig"] = {"S3OutputPath": "s3://team-bucket/debug-output"}
        self.sagemaker.create_training_job(**kwargs)
        return name

    def set_job_state(
        self, name: str, status: str, failure_reason: str = "", training_minutes: int = 65
    ) -> None:
        """The out-of-band step (see the module docstring): moto has no API that changes a job's state."""
        from moto.backends import get_backend
        from moto.core import DEFAULT_ACCOUNT_ID

        job = get_backend("sagemaker")[DEFAULT_ACCOUNT_ID][REGION].training_jobs[name]
        start = self.base_time.replace(tzinfo=None)  # moto keeps naive UTC datetimes
        phases = [
            ("Starting", 6, "Preparing the instances for training"),
            ("Downloading", 2, "Downloading input data"),
            ("Training", training_minutes, "Training image download completed. Training in progress."),
        ]
        transitions, t = [], start
        for phase, minutes, message in phases:
            transitions.append(
                {
                    "Status": phase,
                    "StartTime": t,
                    "EndTime": t + timedelta(minutes=minutes),
                    "StatusMessage": message,
                }
            )
            t += timedelta(minutes=minutes)
        if status == "InProgress":
            transitions[-1].pop("EndTime")
        else:
            transitions.append(
                {
                    "Status": status,
                    "StartTime": t,
                    "EndTime": t,
                    "StatusMessage": failure_reason[:100] or status,
                }
            )
        job.training_job_status = status
        job.secondary_status = "Training" if status == "InProgress" else status
        job.secondary_status_transitions = transitions
        job.training_start_time = start + timedelta(minutes=8)
        job.training_end_time = None if status == "InProgress" else t
        if failure_reason:
            job.failure_reason = failure_reason

    def ensure_log_group(self) -> None:
        if not self.log_group_ready:
            self.logs.create_log_group(logGroupName=LOG_GROUP)
            self.log_group_ready = True

    def put_log(
        self, job: str, host: str, lines: list[str], start_offset_s: float = 0.0, step_s: float = 1.0
    ) -> str:
        """Create ``<job>/<host>-<epoch>`` in the SageMaker log group and put ``lines`` as its events."""
        self.ensure_log_group()
        stream = f"{job}/{host}-{int(self.base_time.timestamp())}"
        self.logs.create_log_stream(logGroupName=LOG_GROUP, logStreamName=stream)
        t0 = int((self.base_time.timestamp() + start_offset_s) * 1000)
        events = [{"timestamp": t0 + int(i * step_s * 1000), "message": line} for i, line in enumerate(lines)]
        for i in range(0, len(events), 5000):  # PutLogEvents takes at most 10,000 events / 1 MB per call
            self.logs.put_log_events(
                logGroupName=LOG_GROUP, logStreamName=stream, logEvents=events[i : i + 5000]
            )
        return stream


@pytest.fixture
def fixture_lines() -> Callable[[str], list[str]]:
    """Reads a log fixture from ``logs/`` without its first line, which says where the text comes from."""

    def read(name: str) -> list[str]:
        return (LOGS_DIR / name).read_text(encoding="utf-8").splitlines()[1:]

    return read


@pytest.fixture
def moto_aws(moto_url: str, aws_env: Callable[[str], None]) -> MotoAws:
    """A moto emptied by its own reset endpoint, with the AWS chain pointing at it."""
    req = urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST", data=b"")
    with urllib.request.urlopen(req, timeout=5):
        pass
    aws_env(moto_url)
    return MotoAws(
        moto_url, boto3.client("sagemaker", region_name=REGION), boto3.client("logs", region_name=REGION)
    )


@dataclass
class FakeAwsErrors:
    """Counts the requests it answered; every answer is the same AWS JSON-protocol error document."""

    url: str
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def aws_error_endpoint() -> Iterator[Callable[[int, str, str], FakeAwsErrors]]:
    """A loopback HTTP server that answers every AWS call with one error (see test_aws_errors.py)."""
    servers: list[ThreadingHTTPServer] = []

    def start(status: int, code: str, message: str) -> FakeAwsErrors:
        record = FakeAwsErrors(url="")
        body = json.dumps({"__type": code, "message": message}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                record.requests.append(self.headers.get("X-Amz-Target", ""))
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        record.url = f"http://127.0.0.1:{server.server_address[1]}"
        return record

    try:
        yield start
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


# A tiny knowledge base of our own, in the CONTRIBUTING.md format, so that these tests do not move when
# the bundled entries are edited; one test also runs against the bundled knowledge base.
TINY_ENTRIES = {
    "tiny-cuda-oom": """
id: tiny-cuda-oom
title: "CUDA out of memory"
summary: A rank asked the GPU for more memory than it had free.
role: root-cause
priority: 75
recognise:
  anchors: ["CUDA out of memory"]
cause: The step needs more GPU memory than the device has free.
fix: ["Lower the micro-batch size."]
sources:
  - doc: "000_2f07280e1d145d25.txt"
    section: "Stalling or Crashing Distributed Training Jobs"
examples:
  match: ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."]
""",
    "tiny-nccl-watchdog": """
id: tiny-nccl-watchdog
title: "NCCL watchdog timeout"
summary: A collective did not finish in time; another rank usually failed first.
role: symptom
priority: 40
recognise:
  anchors: ["Watchdog caught collective operation timeout"]
cause: A peer rank stopped taking part in the collective.
fix: ["Look for the first rank that failed."]
sources:
  - doc: "003_7e992738102f1530.txt"
    section: "NCCL watchdog timeout"
examples:
  match: ["[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"]
""",
    "tiny-smp-debugger": """
id: tiny-smp-debugger
title: "Debugger with model parallel"
summary: Debugger is not available with SageMaker distributed model parallel.
role: root-cause
priority: 80
recognise:
  regex: ['FileNotFoundError: .*\\.sagemaker-uploading']
cause: Debugger moves the checkpoint files being uploaded.
fix: ["Pass debugger_hook_config=False."]
sources:
  - doc: "000_2f07280e1d145d25.txt"
    section: "Considerations for Using SageMaker Debugger with SageMaker Distributed Model Parallel"
examples:
  match: ["FileNotFoundError: [Errno 2] No such file or directory: '/opt/ml/checkpoints/metadata.json.sagemaker-uploading'"]
""",
}


@pytest.fixture
def tiny_matcher(tmp_path: Path) -> Matcher:
    root = tmp_path / "knowledge"
    root.mkdir()
    for entry_id, text in TINY_ENTRIES.items():
        (root / f"{entry_id}.yaml").write_text(text.lstrip(), encoding="utf-8")
    kb, errors = load_knowledge_base(root)
    assert not errors, errors
    assert len(kb.entries) == len(TINY_ENTRIES)
    return Matcher(kb)


@pytest.fixture(scope="session")
def bundled_matcher() -> Matcher:
    kb, _errors = load_knowledge_base(REPO_ROOT / "knowledge")  # linting entries is tests/test_kb_*'s job
    return Matcher(kb)
