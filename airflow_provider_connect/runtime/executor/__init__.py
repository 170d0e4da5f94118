"""What a Spark executor's Python worker loads to run a task: the task runner and the PySpark
daemon that preloads it, the source, sink and exactly-once source loops, their contexts,
converters, error handling, transformation chains, heartbeats and metrics, and the reader of
committed Kafka logs. It imports neither the driver nor the REST server: only the runtime's
top-level modules, the store and the connector API."""
