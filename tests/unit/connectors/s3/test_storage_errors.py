"""Which S3 failures are retried: throttling, 5xx, timeouts and broken connections; not a
refusal, a missing bucket or a bad request."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError

from airflow_provider_connect.connectors.s3.storage import is_retriable


def client_error(status: int, code: str) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "PutObject",
    )


@pytest.mark.parametrize(
    ("status", "code", "retriable"),
    [
        (503, "SlowDown", True),
        (429, "TooManyRequests", True),
        (500, "InternalError", True),
        (400, "RequestTimeout", True),
        (403, "AccessDenied", False),
        (403, "InvalidAccessKeyId", False),
        (404, "NoSuchBucket", False),
        (400, "InvalidArgument", False),
    ],
)
def test_answers(status: int, code: str, retriable: bool) -> None:
    assert is_retriable(client_error(status, code)) is retriable


def test_connection_failures_are_retried() -> None:
    assert is_retriable(EndpointConnectionError(endpoint_url="http://127.0.0.1:9"))
    assert is_retriable(ConnectTimeoutError(endpoint_url="http://127.0.0.1:9"))
