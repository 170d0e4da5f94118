#!/usr/bin/env bash
# The stack's roles, one per compose service; anything else runs as a command.
set -euo pipefail
case "${1:-}" in
  init)  # once: both schemas (Airflow's, then Connect's), then the runtime's DAG unpaused
    airflow db migrate
    connect-runtime db migrate --metadata-url "${CONNECT_METADATA_URL}"
    ;;
  spark-master)
    exec "${SPARK_HOME}/bin/spark-class" org.apache.spark.deploy.master.Master \
      --host 0.0.0.0 --port 7077 --webui-port 8080
    ;;
  spark-worker)
    exec "${SPARK_HOME}/bin/spark-class" org.apache.spark.deploy.worker.Worker \
      --cores "${SPARK_WORKER_CORES:-2}" --memory "${SPARK_WORKER_MEMORY:-2g}" \
      --webui-port 8081 "${SPARK_MASTER_URL}"
    ;;
  deploy-runtime)  # the runtime, deployed by its DAG once the dag-processor has parsed it
    until airflow dags unpause connect_runtime; do sleep 2; done
    exec airflow dags trigger connect_runtime --conf "{\"worker_config\": ${CONNECT_WORKER_CONFIG}}"
    ;;
  *)
    exec "$@"
    ;;
esac
