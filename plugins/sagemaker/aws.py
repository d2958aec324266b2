"""boto3 clients for the SageMaker plugin, and AWS failures turned into sentences a user can act on.

Region and credentials come from the standard AWS chain (environment, shared config/credentials files,
container or instance role). The endpoint comes from ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_SAGEMAKER``
(honoured by botocore itself since 1.31) or from ``sagemaker.endpoint_url`` in the TRACEBOT_CONFIG file.
Nothing here ever formats a credential or an AWS error message into user-facing text: AWS messages
can carry account ids and principal ARNs, so users get our own wording plus the error code.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.config
import botocore.loaders
import botocore.session
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 20.0
MAX_ATTEMPTS = 3  # standard retry mode: throttling and 5xx are retried with backoff, then surfaced

_ACCESS_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess"}
_THROTTLED = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "LimitExceededException",
}
_BAD_CREDENTIALS = {
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "ExpiredTokenException",
    "RequestExpired",
}


class AwsProblem(Exception):
    """An AWS call failed in a way the user should be told about; ``str()`` is the user message."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class JobNotFound(AwsProblem):
    """describe_training_job said the job does not exist (in this account and region)."""


@dataclass
class AwsClients:
    sagemaker: Any
    logs: Any
    region: str


def make_clients(settings: dict[str, Any] | None = None) -> AwsClients:
    """Build the two clients with bounded timeouts and retries; set-up problems become :class:`AwsProblem`."""
    settings = settings or {}
    try:
        return _build_clients(settings)
    except ProfileNotFound as exc:
        profile = exc.kwargs.get("profile", "")
        raise AwsProblem(
            f"The AWS profile {profile!r} (AWS_PROFILE) is not in the AWS config files.", "NoProfile"
        ) from exc
    except BotoCoreError as exc:
        raise AwsProblem(
            f"Could not set up the AWS clients: {type(exc).__name__}.", type(exc).__name__
        ) from exc


def _build_clients(settings: dict[str, Any]) -> AwsClients:
    botocore_session = botocore.session.Session()  # fresh: re-reads the environment and ~/.aws each time
    botocore_session.register_component("data_loader", _shared_loader())
    # botocore reads AWS_DEFAULT_REGION and the config file but not AWS_REGION, which the other AWS SDKs
    # (and Lambda / ECS containers) set: honour it when botocore's own chain has no region.
    region_name = (
        settings.get("region")
        or botocore_session.get_config_variable("region")
        or os.environ.get("AWS_REGION")
    )
    session = boto3.session.Session(botocore_session=botocore_session, region_name=region_name or None)
    region = session.region_name
    if not region:
        raise AwsProblem(
            "No AWS region is configured for tracebot. Set AWS_REGION (or AWS_DEFAULT_REGION), "
            "a region in ~/.aws/config, or `sagemaker: {region: ...}` in the TRACEBOT_CONFIG file.",
            code="NoRegion",
        )
    try:
        attempts = int(settings.get("max_attempts", MAX_ATTEMPTS))
    except (TypeError, ValueError) as exc:
        raise AwsProblem(
            "`sagemaker.max_attempts` in TRACEBOT_CONFIG must be a whole number.", "BadConfig"
        ) from exc
    config = botocore.config.Config(
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        retries={"total_max_attempts": max(1, attempts), "mode": "standard"},
    )
    endpoint = settings.get("endpoint_url") or None
    try:
        return AwsClients(
            sagemaker=session.client("sagemaker", config=config, endpoint_url=endpoint),
            logs=session.client("logs", config=config, endpoint_url=endpoint),
            region=region,
        )
    except ValueError as exc:  # botocore refuses a malformed endpoint URL or region name
        raise AwsProblem(
            f"The AWS endpoint URL or region ({region!r}) is not valid: check AWS_ENDPOINT_URL and AWS_REGION.",
            "BadEndpoint",
        ) from exc


@functools.cache
def _shared_loader() -> botocore.loaders.Loader:
    """The service-model loader, shared: parsing the SageMaker model takes ~0.5 s, so do it once."""
    return botocore.loaders.create_loader()


def explain(exc: Exception, action: str, region: str) -> AwsProblem:
    """Turn a boto3/botocore failure of ``action`` (an IAM action name) into an :class:`AwsProblem`."""
    if isinstance(exc, AwsProblem):
        return exc
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return AwsProblem(
            "No AWS credentials found. tracebot uses the standard AWS chain: AWS_ACCESS_KEY_ID / "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE with ~/.aws/credentials, or an instance/container role.",
            code="NoCredentials",
        )
    if isinstance(exc, NoRegionError):
        return AwsProblem("No AWS region is configured: set AWS_REGION.", code="NoRegion")
    if isinstance(exc, ConnectTimeoutError | ReadTimeoutError | EndpointConnectionError):
        return AwsProblem(
            f"Could not reach AWS in {region} for {action} (network error or timeout). "
            "Check the bot host's network / AWS_ENDPOINT_URL and try again.",
            code="Unreachable",
        )
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        message = str(exc.response.get("Error", {}).get("Message", ""))
        if code in _ACCESS_DENIED:
            return AwsProblem(
                f"AWS denied {action} ({code}) in {region}: the IAM identity tracebot runs as needs "
                f"permission for `{action}`.",
                code=code,
            )
        if code in _THROTTLED:
            return AwsProblem(
                f"AWS is throttling {action} in {region} ({code}) even after {MAX_ATTEMPTS} attempts. "
                "Nothing is wrong with the job; try again in a minute.",
                code=code,
            )
        if code in _BAD_CREDENTIALS:
            return AwsProblem(
                f"AWS rejected tracebot's credentials ({code}): they are invalid or expired.", code=code
            )
        if is_not_found(code, message):
            return JobNotFound(f"AWS says the resource for {action} does not exist in {region}.", code=code)
        return AwsProblem(f"{action} failed in {region} with AWS error {code or 'unknown'}.", code=code)
    return AwsProblem(f"{action} failed in {region}: {type(exc).__name__}.", code=type(exc).__name__)


def is_not_found(code: str, message: str) -> bool:
    """SageMaker reports a missing job as ValidationException "Requested resource not found"."""
    if code in {"ResourceNotFound", "ResourceNotFoundException", "NoSuchEntity"}:
        return True
    lowered = message.lower()
    return code == "ValidationException" and ("not found" in lowered or "could not find" in lowered)
