"""The Kafka client settings a worker config gives its clients."""

from __future__ import annotations

from airflow_provider_connect.runtime.worker_config import WorkerConfig, transactional


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


def test_a_transactional_producer_times_requests_out_within_its_transaction_timeout() -> None:
    """librdkafka refuses a transactional producer whose ``socket.timeout.ms`` passes
    ``transaction.timeout.ms`` + 100: the runtime's 30 s default is lowered to that, an
    explicit lower value kept."""
    from confluent_kafka import Producer

    worker = WorkerConfig(
        {"bootstrap.servers": "127.0.0.1:9", "producer.transaction.timeout.ms": "10000"}
    )
    config = transactional(worker.client_config("producer."), "connect-t-0")
    assert config["socket.timeout.ms"] == "10100" and config["transactional.id"] == "connect-t-0"
    Producer(config)  # accepted
    lower = transactional({"socket.timeout.ms": "5000"}, "t")
    assert lower["socket.timeout.ms"] == "5000"
    assert transactional({}, "t")["socket.timeout.ms"] == "60100"
