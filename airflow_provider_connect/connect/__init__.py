"""The connector API: what connector authors import.

Mirrors ``org.apache.kafka.connect.*`` in Pythonic form. Pure Python: nothing here imports
Spark, Airflow or a Kafka client, so connectors can be written and unit-tested anywhere.
"""
