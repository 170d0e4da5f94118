"""An S3 endpoint per test module (moto's server, or S3_ENDPOINT_URL), a bucket per test, and
a proxy in front of the endpoint that fails on demand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests_common.s3 import S3Endpoint
from tests_common.s3_faults import FaultyEndpoint


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with S3Endpoint() as endpoint:
        yield endpoint


@pytest.fixture
def bucket(s3: S3Endpoint) -> str:
    return s3.new_bucket()


@pytest.fixture
def proxy(s3: S3Endpoint) -> Iterator[FaultyEndpoint]:
    """A proxy to ``s3`` that fails on demand (plain HTTP endpoints only)."""
    if not s3.url.startswith("http://"):
        pytest.skip(f"the faulty proxy forwards plain HTTP only, not to {s3.url}")
    with FaultyEndpoint(s3.url) as endpoint:
        yield endpoint


def sink_config(s3: S3Endpoint, bucket: str, **extra: str) -> dict[str, str]:
    """A config of the sink writing to ``bucket`` of ``s3``."""
    return {
        "s3.bucket.name": bucket,
        "store.url": s3.url,
        "s3.region": s3.region,
        "aws.access.key.id": s3.access_key,
        "aws.secret.access.key": s3.secret_key,
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "flush.size": "3",
        **extra,
    }
