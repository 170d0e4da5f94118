"""The Kafka client settings a worker config gives its clients."""

from __future__ import annotations

from airflow_provider_connect.runtime.worker_config import WorkerConfig


def test_clients_take_the_worker_prefix_over_the_defaults_and_never_the_rest_apis_keys() -> None:
    """``admin.listeners`` and its ``admin.listeners.https.`` settings belong to the REST
    API: the admin client is given neither (librdkafka refuses keys it does not know). A
    request times out after Kafka's 30 s unless a prefix says otherwise."""
    worker = WorkerConfig(
        {
            "bootstrap.servers": "127.0.0.1:9092",
            "admin.listeners": "http://127.0.0.1:8084",
            "admin.listeners.https.ssl.keystore.location": "/k.jks",
            "admin.retries": "3",
            "consumer.socket.timeout.ms": "10000",
        }
    )
    assert worker.client_config("admin.") == {
        "bootstrap.servers": "127.0.0.1:9092",
        "socket.timeout.ms": "30000",
        "retries": "3",
    }
    assert worker.client_config("consumer.")["socket.timeout.ms"] == "10000"
    assert worker.client_config("producer.")["socket.timeout.ms"] == "30000"
