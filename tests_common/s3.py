"""A real S3 REST endpoint for tests: moto's server (``python -m moto.server``) on a free
loopback port, in memory, started as a subprocess and stopped by its PID; or, when
``S3_ENDPOINT_URL`` is set, that endpoint (a real S3 or MinIO) with the AWS credentials of
the environment.

moto accepts any credentials unless told otherwise: ``check_credentials=True`` starts it
with ``INITIAL_NO_AUTH_ACTION_COUNT`` and spends the free calls on an IAM user whose keys
:attr:`S3Endpoint.access_key`/:attr:`S3Endpoint.secret_key` are, so that other keys are refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from tests_common.broker import free_port
from tests_common.processes import Started, wait_until

REGION = "us-east-1"
_FREE_CALLS = 4  # the readiness probe, create_user, create_access_key, put_user_policy


@dataclass
class S3Endpoint(Started):
    """An S3 endpoint: :attr:`url`, :attr:`access_key`, :attr:`secret_key`, :attr:`region`,
    known from construction (moto's keys change on :meth:`start` with ``check_credentials``).
    :meth:`freeze` and :meth:`thaw` stop and continue moto's process (SIGSTOP/SIGCONT)."""

    check_credentials: bool = False
    url: str = field(default="", init=False)
    access_key: str = "testing-key"
    secret_key: str = "testing-secret"
    region: str = REGION
    port: int | None = field(default=None, init=False)
    """moto's port; None for ``S3_ENDPOINT_URL``."""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        external = os.environ.get("S3_ENDPOINT_URL")
        if external:
            self.url = external
            self.access_key = os.environ["AWS_ACCESS_KEY_ID"]
            self.secret_key = os.environ["AWS_SECRET_ACCESS_KEY"]
            self.region = os.environ.get("AWS_REGION", REGION)
        else:
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Endpoint:
        if self.port is None:
            return self
        port = self.port
        env = {**os.environ}
        if self.check_credentials:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(_FREE_CALLS)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            wait_until(self._answers, 30, f"moto's server answers on {self.url}")
            if self.check_credentials:
                self._create_user()
        except BaseException:
            self.stop()  # __exit__ does not run when __enter__ fails
            raise
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"moto's server exited with {self.process.returncode}")
        try:
            self.client().list_buckets()
        except (BotoCoreError, ClientError):
            return False
        return True

    def _create_user(self) -> None:
        iam = boto3.client(
            "iam",
            endpoint_url=self.url,
            region_name=self.region,
            aws_access_key_id="bootstrap",
            aws_secret_access_key="bootstrap",
        )
        iam.create_user(UserName="sink")
        keys = iam.create_access_key(UserName="sink")["AccessKey"]
        self.access_key, self.secret_key = keys["AccessKeyId"], keys["SecretAccessKey"]
        policy = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
        }
        iam.put_user_policy(UserName="sink", PolicyName="all", PolicyDocument=json.dumps(policy))

    def client(self, **config: object) -> object:
        """A boto3 S3 client of this endpoint (path-style addressing)."""
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, **config),
        )

    def new_bucket(self, name: str = "") -> str:
        """Creates bucket ``name`` (blank: a new unique name); returns its name."""
        name = name or f"b-{uuid.uuid4().hex[:12]}"
        where = {} if self.region == REGION else {"LocationConstraint": self.region}
        self.client().create_bucket(
            Bucket=name, **({"CreateBucketConfiguration": where} if where else {})
        )  # type: ignore[attr-defined]
        return name

    def objects(self, bucket: str, prefix: str = "") -> dict[str, bytes]:
        """Every object under ``prefix``, by key."""
        s3 = self.client()
        found: dict[str, bytes] = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):  # type: ignore[attr-defined]
            for item in page.get("Contents", []):
                found[item["Key"]] = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()  # type: ignore[attr-defined]
        return found

    def freeze(self) -> None:
        assert self.process is not None, "only moto's server started here can be frozen"
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None
