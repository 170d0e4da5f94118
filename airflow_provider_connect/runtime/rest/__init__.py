"""Kafka Connect's REST API (``app.create_app`` with one router per resource), its admin
endpoints, Prometheus metrics, request limits, REST extensions and the uvicorn servers of
every listener. It imports neither the driver nor the executor room."""
