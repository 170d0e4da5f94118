"""The control layer: what the REST API, the Airflow hook and the herder share: connector
config validation, secret masking, status in Kafka Connect's shape, and plugin lookup.

It imports no Kafka client and no Spark, so the Airflow side (tasks, the triggerer, the API
server) loads neither; ``tests/unit/project/test_control_imports.py`` holds it to that.
"""
