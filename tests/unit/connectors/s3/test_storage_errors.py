"""Which S3 failures are retried: throttling, 5xx, timeouts and broken connections; not a
refusal, a missing bucket or a bad request."""

from __future__ import annotations

import hashlib

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError

from airflow_provider_connect.connectors.s3.storage import (
    is_retriable,
    multipart_etag,
    without_userinfo,
)


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


def test_multipart_etag_is_the_md5_of_the_part_md5s() -> None:
    parts = [hashlib.md5(b, usedforsecurity=False) for b in (b"a", b"b")]
    whole = hashlib.md5(b"".join(p.digest() for p in parts), usedforsecurity=False).hexdigest()
    assert multipart_etag([f'"{p.hexdigest()}"' for p in parts]) == f"{whole}-2"


def test_multipart_etag_of_parts_whose_etags_are_no_md5() -> None:
    assert multipart_etag(['"0123abcd"', '"' + "f" * 32 + '"']) is None


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("http://user:pass@minio:9000", "http://minio:9000"),
        ('URL: "https://k@h/b/k?x=1"', 'URL: "https://h/b/k?x=1"'),
        ("http://minio:9000/a@b", "http://minio:9000/a@b"),
        ("http://u:p@ss@minio:9000/a@b", "http://minio:9000/a@b"),  # an @ in the password
    ],
)
def test_without_userinfo(text: str, shown: str) -> None:
    assert without_userinfo(text) == shown
