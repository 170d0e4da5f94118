"""An S3 endpoint per test module (moto's server, or S3_ENDPOINT_URL) and a bucket per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests_common.s3 import S3Endpoint


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with S3Endpoint() as endpoint:
        yield endpoint


@pytest.fixture
def bucket(s3: S3Endpoint) -> str:
    return s3.new_bucket()


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
