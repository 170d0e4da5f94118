"""Kafka Connect rebuilt in Python on Spark, driven from Apache Airflow."""

__version__ = "0.1.0"
