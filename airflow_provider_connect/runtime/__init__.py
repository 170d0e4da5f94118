"""The PySpark connect runtime: herder on the driver, task runs as Spark jobs."""

from airflow_provider_connect.runtime.connect import Connect

__all__ = ["Connect"]
