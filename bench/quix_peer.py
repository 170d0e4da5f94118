"""The Quix Streams peer, run by ``bench/quix.py`` with the interpreter of the Quix Streams
virtualenv (its pins conflict with Airflow's, so it cannot share the project's).

    quix_peer.py source BOOTSTRAP TOPIC SCHEMAS FILE...   lines → JSON values → topic
    quix_peer.py sink BOOTSTRAP TOPIC COUNT DIRECTORY     topic → JSON lines files
    quix_peer.py postgres BOOTSTRAP TOPIC COUNT DIRECTORY HOST PORT DBNAME USER TABLE
                                                          topic (the JDBC benchmark's schema'd
                                                          JSON orders) → PostgreSQLSink
    quix_peer.py s3 BOOTSTRAP TOPIC COUNT DIRECTORY ENDPOINT REGION KEY SECRET BUCKET FORMAT
        COMMIT_EVERY                                      topic (JSON envelopes: their payloads)
                                                          → S3FileSink, json or parquet, a
                                                          commit (one object per partition)
                                                          every COMMIT_EVERY records

Prints the records/s it measured: the source from its first read to its final flush, the
sinks from their first record to the end of their last write.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
import uuid
from typing import Any

from quixstreams import Application
from quixstreams.sinks.base import BaseSink
from quixstreams.sinks.community.file.local import LocalFileSink
from quixstreams.sinks.community.file.s3 import S3FileSink
from quixstreams.sinks.community.postgresql import PostgreSQLSink

STRING_SCHEMA = {"type": "string", "optional": False}


def source(
    bootstrap: str, topic_name: str, schemas: bool, paths: list[str], state_dir: str
) -> float:
    app = Application(broker_address=bootstrap, auto_create_topics=False, state_dir=state_dir)
    topic = app.topic(topic_name, value_serializer="json")
    count = 0
    started = time.monotonic()
    with app.get_producer() as producer:
        for path in paths:
            with open(path, "rb") as f:
                for line in f:
                    text = line[:-1].decode()
                    value = {"schema": STRING_SCHEMA, "payload": text} if schemas else text
                    message = topic.serialize(value=value)
                    producer.produce(topic.name, message.value)
                    count += 1
        producer.flush()
    return count / (time.monotonic() - started)


def timed_sink(
    bootstrap: str, topic_name: str, count: int, directory: str, make: Any, **options: Any
) -> float:
    """Runs ``count`` records of the topic through ``make(dataframe)`` into a sink;
    ``options`` go to the Application (e.g. ``commit_every``)."""
    app = Application(
        broker_address=bootstrap,
        consumer_group=f"quix-{uuid.uuid4().hex[:8]}",
        state_dir=f"{directory}/state",
        auto_offset_reset="earliest",
        consumer_extra_config={"session.timeout.ms": 6000, "fetch.queue.backoff.ms": 0},
        **options,
    )
    topic = app.topic(topic_name, value_deserializer="json")
    first: list[float] = []
    sdf = app.dataframe(topic)
    sdf = sdf.update(lambda _value: first or first.append(time.monotonic()))
    sdf, sink = make(sdf)
    sdf.sink(sink)
    app.run(count=count, timeout=60)
    return count / (time.monotonic() - first[0])


def files(sdf: Any, directory: str) -> tuple[Any, BaseSink]:
    return sdf, LocalFileSink(directory=directory)


def postgres(
    sdf: Any, host: str, port: str, dbname: str, user: str, table: str
) -> tuple[Any, BaseSink]:
    """The JDBC sink's work: the envelope's payload as a row, ``at`` from epoch ms."""
    epoch = dt.datetime(1970, 1, 1)

    def row(value: dict[str, Any]) -> dict[str, Any]:
        payload = value["payload"]
        return {**payload, "at": epoch + dt.timedelta(milliseconds=payload["at"])}

    sink = PostgreSQLSink(
        host=host,
        port=int(port),
        dbname=dbname,
        user=user,
        password="",
        table_name=table,
        include_metadata=False,
    )
    return sdf.apply(row), sink


def s3(
    sdf: Any, endpoint: str, region: str, key: str, secret: str, bucket: str, form: str
) -> tuple[Any, BaseSink]:
    """The S3 sink's work: the envelope's payload into objects of ``bucket``."""
    sink = S3FileSink(
        bucket=bucket,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        region_name=region,
        endpoint_url=endpoint,
        directory="quix",
        format=form,
    )
    return sdf.apply(lambda value: value["payload"]), sink


if __name__ == "__main__":
    mode, bootstrap, topic = sys.argv[1:4]
    if mode == "source":
        paths = sys.argv[5:]
        print(source(bootstrap, topic, sys.argv[4] == "true", paths, f"{paths[0]}.quix-state"))
    elif mode == "sink":
        directory = sys.argv[5]
        print(
            timed_sink(
                bootstrap, topic, int(sys.argv[4]), directory, lambda sdf: files(sdf, directory)
            )
        )
    elif mode == "s3":
        *target, every = sys.argv[6:13]
        print(
            timed_sink(
                bootstrap,
                topic,
                int(sys.argv[4]),
                sys.argv[5],
                lambda sdf: s3(sdf, *target),
                commit_every=int(every),
                commit_interval=3600,
            )
        )
    else:
        target = sys.argv[6:11]
        print(
            timed_sink(
                bootstrap, topic, int(sys.argv[4]), sys.argv[5], lambda sdf: postgres(sdf, *target)
            )
        )
