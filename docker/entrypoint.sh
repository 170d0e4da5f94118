#!/usr/bin/env bash
# The image's roles, one per service of tests_common/stack.py; anything else runs as a command.
set -euo pipefail
role="${1:-}"
shift || true
case "${role}" in
  init)  # once: both schemas, Airflow's then Connect's
    airflow db migrate
    connect-runtime db migrate --metadata-url "${CONNECT_METADATA_URL}"
    ;;
  spark-master)
    exec "${SPARK_HOME}/bin/spark-class" org.apache.spark.deploy.master.Master "$@"
    ;;
  spark-worker)
    exec "${SPARK_HOME}/bin/spark-class" org.apache.spark.deploy.worker.Worker "$@"
    ;;
  deploy-runtime)  # the runtime, deployed by its DAG once the dag-processor has parsed it
    until airflow dags unpause connect_runtime; do sleep 2; done
    exec airflow dags trigger connect_runtime --conf "{\"worker_config\": ${CONNECT_WORKER_CONFIG}}"
    ;;
  *)
    exec "${role}" "$@"
    ;;
esac
