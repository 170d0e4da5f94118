"""What only the runtime's driver process runs: the herder reconciling the metadata
database's desired state, the Spark runner submitting one Spark job per task run, the run
watcher reading Spark's status tracker, and the fencing of exactly-once producers before a
new generation starts. It may import the executor room (the task specs it submits, the
outcomes it gets back); the executor room never imports it."""
