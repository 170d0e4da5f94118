"""The Airflow UI plugin: a "Connectors" page inside Airflow's API server."""
