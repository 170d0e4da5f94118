"""What the tests, the demos (``demo``) and the benchmarks (``bench``) share to run the
project's services on loopback: the test broker and its readers, a private PostgreSQL
cluster, a Schema Registry, a Spark standalone cluster, the production stack as processes,
the runtime as a process, and the fixtures of the store-outage and Connectors-page checks.

Checkout-only, as Airflow keeps its shared test support in ``tests_common``: not part of the
distribution (pyproject.toml's package discovery takes ``airflow_provider_connect`` alone),
and it imports neither ``demo``, ``bench`` nor ``tests`` (pyproject.toml's import contracts).
"""
