"""S3 over boto3: one client per task, objects written whole or not at all.

Why boto3 (botocore) and not pyarrow's S3 filesystem or s3fs: it gives the multipart
lifecycle an exactly-once sink needs (create, upload parts, complete, or *abort*: pyarrow's
output stream completes on close, publishing a partial object), structured error codes to
tell retriable failures from fatal ones, ``endpoint_url`` for any S3-compatible endpoint, and
the AWS default credential chain (environment, profile, container, instance role). It is also
the client of Airflow's Amazon provider.

Guarantees: :meth:`Upload.commit` makes the object appear whole (a single PutObject when it
fits in one part, else CompleteMultipartUpload); :meth:`Upload.abort` leaves nothing visible.
Every request is attempted ``s3.part.retries`` times in all (0 and 1: once, no retry), with
full-jitter exponential backoff from ``s3.retry.backoff.ms``, on throttling (429, 503
SlowDown), 5xx, timeouts and broken connections; what still fails raises
:class:`RetriableException` (retriable kinds) or :class:`ConnectException`, with a message
naming the bucket and the endpoint, never the credentials (nor userinfo in ``store.url``).

A retried request may meet the effect of an attempt whose answer was lost: a retried
CompleteMultipartUpload answered NoSuchUpload counts as done when the object is there whole
(its size, and the multipart ETag of these parts); an abort answered NoSuchUpload found the
upload already gone.
"""

from __future__ import annotations

import hashlib
import io
import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    HTTPClientError,
    NoCredentialsError,
)

from airflow_provider_connect.connect.config import Password
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connectors.s3 import config as c

log = logging.getLogger(__name__)

_RETRIABLE_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestTimeout",
        "RequestTimeTooSkewed",
        "InternalError",
        "ServiceUnavailable",
        "TooManyRequests",
    }
)
_MAX_BACKOFF_S = 20.0


def is_retriable(error: Exception) -> bool:
    """Whether retrying the request may succeed: throttling, a 5xx, a timeout or a broken
    connection; not a refusal (403), a missing bucket (404) or a bad request."""
    if isinstance(error, ClientError):
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return error_code(error) in _RETRIABLE_CODES or status == 429 or status >= 500
    return isinstance(error, (ConnectionError, HTTPClientError))


_USERINFO = re.compile(r"(?<=//)[^/?#\s\"']*@")
"""A URL's userinfo: up to its authority's last ``@`` (a password may hold one)."""


def without_userinfo(text: str) -> str:
    """``text`` with the userinfo (``user:password@``) of every URL in it removed."""
    return _USERINFO.sub("", text)


def _cause(error: Exception) -> Exception | None:
    """What a failure keeps as its cause: S3's answer (a ClientError, whose text quotes no
    URL), not a connection error, whose text quotes the endpoint URL, userinfo included."""
    return error if isinstance(error, ClientError) else None


def error_code(error: BaseException | None) -> str:
    """S3's error code of a ClientError (``NoSuchUpload``, ``SlowDown``…); "" for others."""
    if isinstance(error, ClientError):
        return str(error.response.get("Error", {}).get("Code", ""))
    return ""


def multipart_etag(part_etags: list[str]) -> str | None:
    """The ETag S3 gives an object completed from parts of these ETags: the MD5 of their
    binary MD5s, then ``-<number of parts>``; None when a part's ETag is no MD5 (encrypted
    with SSE-KMS or SSE-C)."""
    digests = []
    for etag in part_etags:
        text = etag.strip('"')
        if not re.fullmatch(r"[0-9a-fA-F]{32}", text):
            return None
        digests.append(bytes.fromhex(text))
    return f"{hashlib.md5(b''.join(digests), usedforsecurity=False).hexdigest()}-{len(digests)}"


def endpoint_of(parsed: Mapping[str, Any]) -> str | None:
    """``store.url`` with ``https://`` when it has no scheme; None when blank."""
    url = (parsed.get(c.STORE_URL) or "").strip()
    if not url:
        return None
    return url if "://" in url else f"https://{url}"


class S3Storage:
    """The bucket of a sink's config, reached as the config says (endpoint, region,
    addressing, credentials, timeouts, retries)."""

    def __init__(self, parsed: Mapping[str, Any]) -> None:
        self.bucket: str = parsed[c.BUCKET]
        self.endpoint = endpoint_of(parsed)
        shown = without_userinfo(self.endpoint) if self.endpoint else None
        self.shown_endpoint = shown or "AWS"
        """The endpoint as messages name it: without userinfo (boto3 is given it whole)."""
        self.where = (
            f"bucket {self.bucket} at {shown or 'the AWS endpoint of region ' + parsed[c.REGION]}"
        )
        self.part_size: int = parsed[c.PART_SIZE]
        self.attempts = max(1, parsed[c.PART_RETRIES])
        self.backoff_s = parsed[c.S3_RETRY_BACKOFF_MS] / 1000
        secret = parsed.get(c.SECRET_ACCESS_KEY)
        secret_text = secret.value if isinstance(secret, Password) else secret
        key_id = (parsed.get(c.ACCESS_KEY_ID) or "").strip()
        static = bool(key_id and secret_text and secret_text.strip())
        session = boto3.session.Session(
            aws_access_key_id=key_id if static else None,
            aws_secret_access_key=secret_text if static else None,
        )
        self.client = session.client(
            "s3",
            region_name=parsed[c.REGION],
            endpoint_url=self.endpoint,
            config=Config(
                s3={"addressing_style": "path" if parsed[c.PATH_STYLE] else "auto"},
                retries={"total_max_attempts": 1},  # retried here, with s3.retry.backoff.ms
                connect_timeout=parsed[c.CONNECT_TIMEOUT_MS] / 1000,
                read_timeout=parsed[c.READ_TIMEOUT_MS] / 1000,
                user_agent_extra="airflow-provider-connect-s3-sink",
            ),
        )

    def call(
        self,
        operation: str,
        done_before: Callable[[ClientError], bool] | None = None,
        **kwargs: Any,
    ) -> Any:
        """One S3 request, attempted up to ``s3.part.retries`` times; see the module.
        ``done_before`` is asked about a non-retriable error of a *retry*: when it says an
        earlier attempt took effect (its answer lost), the call returns None."""
        method: Callable[..., Any] = getattr(self.client, operation)
        for attempt in range(self.attempts):
            try:
                return method(Bucket=self.bucket, **kwargs)
            except (BotoCoreError, ClientError) as e:
                if isinstance(e, ClientError) and attempt > 0 and done_before and done_before(e):
                    log.info(
                        "S3 %s on %s: a retry found the earlier attempt done (%s)",
                        operation,
                        self.where,
                        error_code(e),
                    )
                    return None
                if not is_retriable(e) or attempt == self.attempts - 1:
                    raise self.failure(operation, e) from _cause(e)
                delay = random.uniform(0, min(_MAX_BACKOFF_S, self.backoff_s * 2**attempt))
                log.warning(
                    "S3 %s on %s failed (%s); retrying in %.2fs",
                    operation,
                    self.where,
                    without_userinfo(str(e)),
                    delay,
                )
                time.sleep(delay)
        raise AssertionError("unreachable")

    def failure(self, operation: str, error: Exception) -> ConnectException:
        """The exception for a failed request: retriable or not, naming the operation,
        the bucket and the endpoint (botocore's messages name no secret; the userinfo of
        an endpoint URL they quote is removed)."""
        kind = RetriableException if is_retriable(error) else ConnectException
        return kind(f"S3 {operation} on {self.where} failed: {without_userinfo(str(error))}")

    def probe(self) -> None:
        """Checks that the bucket exists and the credentials may list it (ListObjectsV2, as
        a HEAD would take a 403 for "exists"); raises ConnectException saying why not."""
        try:
            self.client.list_objects_v2(Bucket=self.bucket, MaxKeys=1)
        except NoCredentialsError as e:
            raise ConnectException(
                f"No AWS credentials for {self.where}: set aws.access.key.id and "
                "aws.secret.access.key, or provide them through the AWS default chain"
            ) from e
        except ClientError as e:
            code = error_code(e)
            if code == "NoSuchBucket":
                raise ConnectException(
                    f"Non-existent S3 bucket: {self.bucket} (at {self.shown_endpoint})"
                ) from e
            if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403"):
                raise ConnectException(
                    f"The credentials were refused by {self.where} ({code}): check "
                    "aws.access.key.id and aws.secret.access.key or the AWS default chain"
                ) from e
            raise self.failure("ListObjectsV2", e) from e
        except BotoCoreError as e:
            raise self.failure("ListObjectsV2", e) from None  # its text may quote the URL

    def upload(self, key: str) -> Upload:
        return Upload(self, key)


class Upload(io.RawIOBase):
    """A writable stream to one object: bytes are buffered up to ``s3.part.size``; a full
    buffer starts (once) a multipart upload and becomes a part. Nothing is visible until
    :meth:`commit`; :meth:`abort` discards what was uploaded."""

    def __init__(self, storage: S3Storage, key: str) -> None:
        super().__init__()
        self.storage, self.key = storage, key
        self.buffer = bytearray()
        self.upload_id: str | None = None
        self.parts: list[dict[str, Any]] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        n = len(data)
        self.buffer += data
        self.size += n
        while len(self.buffer) >= self.storage.part_size:
            self._upload_part(bytes(self.buffer[: self.storage.part_size]))
            del self.buffer[: self.storage.part_size]
        return n

    def tell(self) -> int:
        return self.size

    def _upload_part(self, data: bytes) -> None:
        if self.upload_id is None:
            answer = self.storage.call("create_multipart_upload", Key=self.key)
            self.upload_id = answer["UploadId"]
        number = len(self.parts) + 1
        answer = self.storage.call(
            "upload_part", Key=self.key, UploadId=self.upload_id, PartNumber=number, Body=data
        )
        self.parts.append({"ETag": answer["ETag"], "PartNumber": number})

    def commit(self) -> None:
        """Makes the object visible, whole: PutObject when it is one part, else the last
        part and CompleteMultipartUpload."""
        if self.upload_id is None:
            self.storage.call("put_object", Key=self.key, Body=bytes(self.buffer))
        else:
            if self.buffer or not self.parts:
                self._upload_part(bytes(self.buffer))
            self.storage.call(
                "complete_multipart_upload",
                self._completed,
                Key=self.key,
                UploadId=self.upload_id,
                MultipartUpload={"Parts": self.parts},
            )
        self.buffer.clear()
        self.upload_id = None

    def _completed(self, error: ClientError) -> bool:
        """Whether a retried CompleteMultipartUpload answered NoSuchUpload had completed
        the upload (the answer of the earlier attempt lost): the object is there with this
        upload's size and the multipart ETag of these parts (only ``-<parts>`` as the ETag's
        end when the parts' ETags are no MD5s). A retriable failure of the HeadObject is
        raised; any other (404, 403) means not known to be completed."""
        if error_code(error) != "NoSuchUpload":
            return False
        try:
            head = self.storage.call("head_object", Key=self.key)
        except ConnectException as e:
            if isinstance(e, RetriableException):
                raise
            return False  # not there (404), or not to be seen: not known to be completed
        etag = str(head.get("ETag", "")).strip('"')
        expected = multipart_etag([p["ETag"] for p in self.parts])
        same = etag == expected if expected else etag.endswith(f"-{len(self.parts)}")
        return bool(head.get("ContentLength") == self.size and same)

    def abort(self) -> None:
        """Discards the object: aborts its multipart upload, retried as every request;
        a final failure is only logged (an upload left behind is invisible, and a bucket
        lifecycle rule can expire it). NoSuchUpload means the upload is already gone."""
        self.buffer.clear()
        if self.upload_id is not None:
            upload_id, self.upload_id = self.upload_id, None
            try:
                self.storage.call("abort_multipart_upload", Key=self.key, UploadId=upload_id)
            except ConnectException as e:
                if error_code(e.__cause__) != "NoSuchUpload":
                    log.warning("aborting the upload of %s failed: %s", self.key, e)
