"""The REST API secured as Kafka Connect secures it: an HTTPS listener with a certificate made
here (PEM, its key under a password), HTTP basic auth from Kafka's JAAS and credentials
files (``BasicAuthSecurityRestExtension``), and the admin endpoints moved to their own
listener. A third-party Kafka Connect client (kafka-connect-py) talks to it."""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kafka_connect import KafkaConnect

from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.security import (
    BASIC_AUTH_EXTENSION,
    BasicAuth,
    rest_extensions,
)
from tests_common.broker import free_port
from tests_common.kafka import new_topic
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

USER, PASSWORD = "operator", "s3cret-for-connect"
KEY_PASSWORD = "key-pass"


def certificate(folder: Path) -> tuple[Path, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it; returns the PEM keystore
    (chain and encrypted key) and the CA file."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    now = dt.datetime.now(dt.timezone.utc)
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    keystore, ca_file = folder / "keystore.pem", folder / "ca.pem"
    keystore.write_bytes(
        server.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(KEY_PASSWORD.encode()),
        )
    )
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return keystore, ca_file


def jaas(folder: Path) -> Path:
    """Kafka's JAAS file and the credentials file it names, as a Kafka deployment has them."""
    credentials = folder / "connect.password"
    credentials.write_text(f"{USER}: {PASSWORD}\nreader: another-one\n")
    config = folder / "connect_jaas.conf"
    config.write_text(
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{credentials}";\n'
        "};\n"
    )
    return config


class Secured:
    def __init__(self, connect: Connect, url: str, admin_url: str, ca: Path) -> None:
        self.connect, self.url, self.admin_url, self.ca = connect, url, admin_url, ca


@pytest.fixture(scope="module")
def secured(
    tmp_path_factory: pytest.TempPathFactory, bootstrap: str, spark: Any
) -> Iterator[Secured]:
    folder = tmp_path_factory.mktemp("tls")
    keystore, ca = certificate(folder)
    port, admin_port = free_port(), free_port()
    connect = Connect(
        "secured",
        {
            "bootstrap.servers": bootstrap,
            "metadata.url": f"sqlite:///{folder / 'metadata.db'}",
            "listeners": f"https://127.0.0.1:{port}",
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.keystore.location": str(keystore),
            "listeners.https.ssl.key.password": KEY_PASSWORD,
            "admin.listeners": f"http://127.0.0.1:{admin_port}",
            "rest.extension.classes": BASIC_AUTH_EXTENSION,
            "java.security.auth.login.config": str(jaas(folder)),
            "rest.basic.auth.read.only.users": "reader",
            "task.heartbeat.interval.ms": "100",
        },
    )
    connect.start(rest=True)
    yield Secured(connect, f"https://127.0.0.1:{port}", f"http://127.0.0.1:{admin_port}", ca)
    connect.stop()


def test_a_kafka_connect_client_with_basic_auth_over_tls(
    secured: Secured, bootstrap: str, tmp_path: Path
) -> None:
    client = KafkaConnect(secured.url, auth=f"{USER}:{PASSWORD}", ssl_verify=str(secured.ca))
    assert "version" in client.get_cluster_info()
    (tmp_path / "in.txt").write_text("a\nb\n")
    config = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": new_topic(bootstrap),
    }
    created = client.create_connector({"name": "tls-source", "config": config})
    assert created["name"] == "tls-source"

    def running() -> bool:
        status = client.get_connector_status("tls-source")
        return [t["state"] for t in status["tasks"]] == ["RUNNING"]

    wait_until(running, 60, "RUNNING through the secured API")
    assert "tls-source" in client.list_connectors()
    client.delete_connector("tls-source")
    assert secured.connect.rest is not None
    assert secured.connect.rest.url == secured.url


@pytest.mark.parametrize(
    "auth",
    [None, (USER, "wrong"), ("nobody", PASSWORD), ("", "")],
    ids=["none", "wrong-password", "unknown-user", "empty"],
)
def test_requests_without_valid_credentials_get_401(
    secured: Secured, auth: tuple[str, str] | None
) -> None:
    response = requests.get(f"{secured.url}/connectors", auth=auth, verify=secured.ca, timeout=10)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Basic realm="connect"'
    assert response.json() == {"error_code": 401, "message": "User cannot access the resource."}
    assert PASSWORD not in response.text and "wrong" not in response.text


def test_a_read_only_user_reads_and_gets_403_for_the_rest(secured: Secured) -> None:
    reader = ("reader", "another-one")
    listed = requests.get(f"{secured.url}/connectors", auth=reader, verify=secured.ca, timeout=10)
    assert listed.status_code == 200
    refused = requests.post(
        f"{secured.url}/connectors",
        json={"name": "x", "config": {"connector.class": "FileStreamSink"}},
        auth=reader,
        verify=secured.ca,
        timeout=10,
    )
    assert refused.status_code == 403
    assert refused.json() == {
        "error_code": 403,
        "message": "User reader may only read (rest.basic.auth.read.only.users)",
    }
    assert "another-one" not in refused.text
    assert "x" not in [c.name for c in secured.connect.store.configs.connectors()]


def test_malformed_authorization_headers_get_401(secured: Secured) -> None:
    for header in ("Basic !!!notbase64", "Bearer abc", "Basic " + "x" * 10):
        response = requests.get(
            f"{secured.url}/", headers={"Authorization": header}, verify=secured.ca, timeout=10
        )
        assert response.status_code == 401


def test_plain_http_and_untrusted_clients_get_no_answer(secured: Secured) -> None:
    http_url = secured.url.replace("https://", "http://")
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{http_url}/", auth=(USER, PASSWORD), timeout=10)
    with pytest.raises(requests.exceptions.SSLError):  # a client that does not trust the CA
        requests.get(f"{secured.url}/", auth=(USER, PASSWORD), timeout=10)


def test_the_admin_endpoints_live_on_admin_listeners_only(secured: Secured) -> None:
    api = requests.get(
        f"{secured.url}/admin/loggers", auth=(USER, PASSWORD), verify=secured.ca, timeout=10
    )
    assert api.status_code == 404
    admin = f"{secured.admin_url}/admin/loggers"
    assert requests.get(admin, timeout=10).status_code == 401  # guarded there too
    loggers = requests.get(admin, auth=(USER, PASSWORD), timeout=10).json()
    assert "root" in loggers and loggers["root"]["level"]

    name = "airflow_provider_connect.runtime.driver.herder"
    changed = requests.put(
        f"{admin}/airflow_provider_connect.runtime",
        json={"level": "DEBUG"},
        auth=(USER, PASSWORD),
        timeout=10,
    )
    assert changed.status_code == 200 and name in changed.json()
    assert logging.getLogger(name).getEffectiveLevel() == logging.DEBUG
    one = requests.get(f"{admin}/{name}", auth=(USER, PASSWORD), timeout=10).json()
    assert one["level"] == "DEBUG" and one["last_modified"] > 0
    bad = requests.put(f"{admin}/{name}", json={"level": "LOUD"}, auth=(USER, PASSWORD), timeout=10)
    assert (bad.status_code, bad.json()["message"]) == (404, "invalid log level 'LOUD'.")
    requests.put(
        f"{admin}/airflow_provider_connect.runtime",
        json={"level": "INFO"},
        auth=(USER, PASSWORD),
        timeout=10,
    )


def test_a_misconfigured_extension_stops_the_runtime_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigException, match="Unknown REST extension"):
        rest_extensions(["com.example.Nope"], {}, {})
    with pytest.raises(ConfigException, match="needs a JAAS file"):
        rest_extensions([BASIC_AUTH_EXTENSION], {}, {})
    from_opts = {"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={jaas(tmp_path)}"}
    ((middleware, options),) = rest_extensions(["BasicAuthSecurityRestExtension"], {}, from_opts)
    assert middleware is BasicAuth
    assert options["users"] == {USER: PASSWORD, "reader": "another-one"}
    assert options["read_only"] == frozenset()
