"""The Quix Streams peer, run by ``bench/quix.py`` with the interpreter of the Quix Streams
virtualenv (its pins conflict with Airflow's, so it cannot share the project's).

    quix_peer.py source BOOTSTRAP TOPIC SCHEMAS FILE...   lines → JSON values → topic
    quix_peer.py sink BOOTSTRAP TOPIC COUNT DIRECTORY     topic → JSON lines files

Prints the records/s it measured: the source from its first read to its final flush, the
sink from its first record to its last.
"""

from __future__ import annotations

import sys
import time
import uuid

from quixstreams import Application
from quixstreams.sinks.community.file.local import LocalFileSink

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


def sink(bootstrap: str, topic_name: str, count: int, directory: str) -> float:
    app = Application(
        broker_address=bootstrap,
        consumer_group=f"quix-{uuid.uuid4().hex[:8]}",
        state_dir=f"{directory}/state",
        auto_offset_reset="earliest",
        consumer_extra_config={"session.timeout.ms": 6000, "fetch.queue.backoff.ms": 0},
    )
    topic = app.topic(topic_name, value_deserializer="json")
    first: list[float] = []
    sdf = app.dataframe(topic)
    sdf = sdf.update(lambda _value: first or first.append(time.monotonic()))
    sdf.sink(LocalFileSink(directory=directory))
    app.run(count=count, timeout=60)
    return count / (time.monotonic() - first[0])


if __name__ == "__main__":
    mode, bootstrap, topic = sys.argv[1:4]
    if mode == "source":
        paths = sys.argv[5:]
        print(source(bootstrap, topic, sys.argv[4] == "true", paths, f"{paths[0]}.quix-state"))
    else:
        print(sink(bootstrap, topic, int(sys.argv[4]), sys.argv[5]))
