"""What every log-based change-capture connector shares, whatever the database, as
Debezium's core (``debezium-core``) holds it beside each database's connector: the change
event envelope and its vocabulary (:mod:`.envelope`), the records of change events and
Debezium's rules for which events a row change makes (:mod:`.events`), the offset context that tracks the
position and builds every stored offset (:mod:`.offsets`), transaction metadata
(:mod:`.transactions`), heartbeats (:mod:`.heartbeat`), the coordinator that runs the
snapshot-then-stream handover (:mod:`.snapshot`) and recovers from connection failures
(:mod:`.coordinator`), incremental snapshots (:mod:`.incremental`) and the signals that
start them (:mod:`.signals`).

Not a connector: nothing here is registered as a plugin. A database's connector (e.g.
``connectors/postgres/``) adds its ``source`` block, its positions and its reading of the
log and of the tables."""
