-- One server, two metadata databases: Airflow's and Connect's.
CREATE USER airflow WITH PASSWORD 'airflow';
CREATE DATABASE airflow OWNER airflow;
CREATE USER connect WITH PASSWORD 'connect';
CREATE DATABASE connect OWNER connect;
