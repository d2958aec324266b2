"""At TRACEBOT_LOG_LEVEL=DEBUG botocore logs every request it signs, SigV4 ``Authorization`` header
(with the AWS access key id) included: tracebot's log filter must hide it (moto server on loopback)."""

from __future__ import annotations

from tracebot.config import Config
from tracebot.plugins.sagemaker.trace import trace_training_job

KEY_ID = "AKIAZ7QX3DEBUGTEST12"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYDEBUGTEST9"


def test_botocore_debug_lines_never_show_the_key_id_or_the_signature_header(
    moto_aws, make_ctx, fixture_lines, monkeypatch, debug_log
):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)  # moto takes any credentials
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    job = moto_aws.create_job(moto_aws.job_name("debug-log"))
    moto_aws.set_job_state(job, "Failed", "AlgorithmError: ExitCode 1")
    stream = debug_log(Config())

    result = trace_training_job(make_ctx(is_admin=True), job)

    written = stream.getvalue()
    assert "is Failed" in result.summary
    assert "botocore" in written and "Authorization" in written, "botocore logged its signed requests"
    assert KEY_ID not in written and SECRET_KEY not in written
    assert "Credential=" not in written and "Signature=" not in written
