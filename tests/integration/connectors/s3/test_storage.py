"""The S3 sink's storage against a real S3 REST endpoint: objects appear whole on commit
and never before, aborts leave nothing, failures name the bucket and endpoint (never the
secret), a missing bucket and refused credentials are told apart at the probe."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connectors.s3.config import S3_CONFIG_DEF
from airflow_provider_connect.connectors.s3.storage import S3Storage
from tests.integration.connectors.s3.conftest import sink_config
from tests_common.s3 import S3Endpoint

pytestmark = pytest.mark.integration

PART = 5 * 1024 * 1024


def storage(s3: S3Endpoint, bucket: str, **extra: str) -> S3Storage:
    return S3Storage(S3_CONFIG_DEF.parse(sink_config(s3, bucket, **extra)))


def test_one_part_object_appears_only_on_commit(s3: S3Endpoint, bucket: str) -> None:
    upload = storage(s3, bucket).upload("topics/t/partition=0/t+0+0000000000.json")
    upload.write(b'{"a":1}\n')
    assert s3.objects(bucket) == {}
    upload.commit()
    assert s3.objects(bucket) == {"topics/t/partition=0/t+0+0000000000.json": b'{"a":1}\n'}


def test_multipart_object_is_whole_after_commit(s3: S3Endpoint, bucket: str) -> None:
    data = bytes(range(256)) * (PART * 2 // 256 + 1000)
    upload = storage(s3, bucket, **{"s3.part.size": str(PART)}).upload("big")
    for i in range(0, len(data), 1 << 20):
        upload.write(data[i : i + (1 << 20)])
    assert upload.upload_id is not None and len(upload.parts) == 2
    assert s3.objects(bucket) == {}
    upload.commit()
    assert s3.objects(bucket)["big"] == data


def test_abort_leaves_no_object_and_no_upload(s3: S3Endpoint, bucket: str) -> None:
    upload = storage(s3, bucket, **{"s3.part.size": str(PART)}).upload("partial")
    upload.write(b"x" * (PART + 10))
    upload.abort()
    assert s3.objects(bucket) == {}
    assert s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []  # type: ignore[attr-defined]


def test_missing_bucket_is_named(s3: S3Endpoint) -> None:
    with pytest.raises(ConnectException, match="Non-existent S3 bucket: no-such-bucket"):
        storage(s3, "no-such-bucket").probe()


def test_refused_endpoint_is_retriable_and_named_without_the_secret(s3: S3Endpoint) -> None:
    from tests_common.broker import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    store = storage(
        s3, "bkt", **{"store.url": url, "s3.part.retries": "2", "s3.retry.backoff.ms": "1"}
    )
    with pytest.raises(RetriableException) as e:
        store.upload("k").commit()
    assert f"bucket bkt at {url}" in str(e.value) and s3.secret_key not in str(e.value)


def test_refused_credentials_fail_the_probe() -> None:
    with S3Endpoint(check_credentials=True) as s3:
        bucket = s3.new_bucket()
        storage(s3, bucket).probe()  # the IAM user's keys are accepted
        bad = storage(s3, bucket, **{"aws.secret.access.key": "wrong-secret"})
        with pytest.raises(ConnectException, match="credentials were refused") as e:
            bad.probe()
        assert "wrong-secret" not in str(e.value) and bucket in str(e.value)
