"""Log-based change capture from MySQL and MariaDB's binlog, compatible with Debezium's
``MySqlConnector`` and ``MariaDbConnector`` (``source.py``), on the change-capture core
(``connectors/change_capture/``): only what the binlog and the MySQL family need lives here."""
