"""The S3 sink's storage against a real S3 REST endpoint: objects appear whole on commit
and never before, aborts leave nothing, failures name the bucket and endpoint (never the
secret), a missing bucket and refused credentials are told apart at the probe."""

from __future__ import annotations

import logging

import pytest

from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connectors.s3.config import S3_CONFIG_DEF
from airflow_provider_connect.connectors.s3.storage import S3Storage
from airflow_provider_connect.runtime.executor.task_base import trace_of
from tests.integration.connectors.s3.conftest import sink_config
from tests_common.broker import free_port
from tests_common.s3 import S3Endpoint
from tests_common.s3_faults import FaultyEndpoint

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


def through(proxy: FaultyEndpoint, s3: S3Endpoint, bucket: str, **extra: str) -> S3Storage:
    """The storage of ``bucket`` reached through the proxy, with 5 MiB parts and short backoff."""
    settings = {"s3.part.size": str(PART), "s3.retry.backoff.ms": "1", **extra}
    return storage(s3, bucket, **{"store.url": proxy.url, **settings})


def uploads(s3: S3Endpoint, bucket: str) -> list[object]:
    return s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])  # type: ignore[attr-defined,no-any-return]


def two_parts(store: S3Storage, key: str) -> tuple[object, bytes]:
    """An upload of two full parts, both uploaded: its commit is CompleteMultipartUpload only."""
    data = bytes(range(256)) * (2 * PART // 256)
    upload = store.upload(key)
    upload.write(data)
    assert len(upload.parts) == 2 and not upload.buffer
    return upload, data


def test_a_completion_whose_answer_was_lost_is_found_done(
    s3: S3Endpoint, bucket: str, proxy: FaultyEndpoint
) -> None:
    """CompleteMultipartUpload reaches the endpoint, its answer does not: the retry is told
    NoSuchUpload, and the object found whole (size and multipart ETag) makes it a commit."""
    upload, data = two_parts(through(proxy, s3, bucket), "lost-answer")
    proxy.script("close_after_forward", "no_such_upload", matching="uploadId=")
    upload.commit()  # type: ignore[attr-defined]
    assert proxy.faults == 2
    assert s3.objects(bucket) == {"lost-answer": data} and uploads(s3, bucket) == []


def test_a_retry_told_no_such_upload_fails_when_the_object_is_not_this_upload(
    s3: S3Endpoint, bucket: str, proxy: FaultyEndpoint
) -> None:
    """An object of other content has the name (the upload gone elsewhere): the retried
    completion's NoSuchUpload is not taken for a commit."""
    upload, _ = two_parts(through(proxy, s3, bucket), "other")
    s3.client().put_object(Bucket=bucket, Key="other", Body=b"older content")  # type: ignore[attr-defined]
    proxy.script("close", "no_such_upload", matching="uploadId=")
    with pytest.raises(ConnectException, match="NoSuchUpload") as e:
        upload.commit()  # type: ignore[attr-defined]
    assert not isinstance(e.value, RetriableException)
    assert s3.objects(bucket) == {"other": b"older content"}


def test_abort_is_retried(s3: S3Endpoint, bucket: str, proxy: FaultyEndpoint) -> None:
    upload, _ = two_parts(through(proxy, s3, bucket), "aborted")
    proxy.inject("slow_down", count=1, matching="DELETE")
    upload.abort()  # type: ignore[attr-defined]
    assert proxy.faults == 1
    assert s3.objects(bucket) == {} and uploads(s3, bucket) == []


def test_abort_failing_past_its_retries_is_logged_not_raised(
    s3: S3Endpoint, bucket: str, proxy: FaultyEndpoint, caplog: pytest.LogCaptureFixture
) -> None:
    upload, _ = two_parts(through(proxy, s3, bucket, **{"s3.part.retries": "2"}), "kept")
    proxy.inject("internal_error", matching="DELETE")
    with caplog.at_level(logging.WARNING):
        upload.abort()  # type: ignore[attr-defined]
    assert proxy.faults == 2
    assert any("aborting the upload of kept failed" in r.getMessage() for r in caplog.records)
    assert s3.objects(bucket) == {}


def test_abort_of_an_upload_already_gone_is_quiet(
    s3: S3Endpoint, bucket: str, caplog: pytest.LogCaptureFixture
) -> None:
    upload, _ = two_parts(storage(s3, bucket, **{"s3.part.size": str(PART)}), "gone")
    s3.client().abort_multipart_upload(Bucket=bucket, Key="gone", UploadId=upload.upload_id)  # type: ignore[attr-defined]
    with caplog.at_level(logging.WARNING):
        upload.abort()  # type: ignore[attr-defined]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_zero_part_retries_is_one_attempt(
    s3: S3Endpoint, bucket: str, proxy: FaultyEndpoint
) -> None:
    """Confluent's ``s3.part.retries``: "Zero means no retries"; 2 is two attempts in all."""
    proxy.inject("slow_down", count=1)
    with pytest.raises(RetriableException, match="SlowDown"):
        through(proxy, s3, bucket, **{"s3.part.retries": "0"}).upload("k").commit()
    assert proxy.requests == 1
    proxy.inject("slow_down", count=1)
    through(proxy, s3, bucket, **{"s3.part.retries": "2"}).upload("k").commit()
    assert proxy.requests == 3 and s3.objects(bucket) == {"k": b""}


def test_the_userinfo_of_store_url_is_in_no_message(s3: S3Endpoint) -> None:
    """boto3 gets store.url as given; messages name it without ``user:password@``."""
    url = f"http://sink-user:url-secret@127.0.0.1:{free_port()}"  # nothing listens there
    store = storage(s3, "bkt", **{"store.url": url, "s3.part.retries": "1"})
    assert store.endpoint == url
    assert store.where == f"bucket bkt at http://127.0.0.1:{url.rpartition(':')[2]}"
    with pytest.raises(RetriableException) as e:
        store.upload("k").commit()
    assert "bucket bkt at http://127.0.0.1:" in str(e.value)
    # the status's trace holds the exception's causes too
    assert "url-secret" not in trace_of(e.value) and "sink-user" not in trace_of(e.value)
