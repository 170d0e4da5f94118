"""KIP-959's converters on the runtime (real broker, Spark, SQLite): listed as plugins, and
writing keys, values and headers as Kafka's serializers write them."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from tests_common.kafka import new_topic, read_messages

pytestmark = pytest.mark.integration
C = "org.apache.kafka.connect.converters."
T = "org.apache.kafka.connect.transforms."
KIP_959 = ["Boolean", "Double", "Float", "Integer", "Long", "Short"]
NUMBERS = [-(2**40), -1, 0, 1234, 2**53]


def test_numbers_and_booleans_reach_kafka_as_kafkas_serializers_write_them(
    connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    source = tmp_path / "numbers.txt"
    source.write_text("".join(f"{n}\n" for n in NUMBERS))
    with TestClient(create_app(connect.store, connect.worker)) as rest:
        plugins = rest.get("/connector-plugins?connectorsOnly=false").json()
        numbers = {f"{C}{name}Converter" for name in KIP_959}
        listed = {(p["class"], p["type"]) for p in plugins if p["class"] in numbers}
        assert listed == {  # each is both, as Kafka lists its converters
            (f"{C}{name}Converter", kind)
            for name in KIP_959
            for kind in ("converter", "header_converter")
        }
        # Each line becomes an INT64 key and a FLOAT64 value, with a BOOLEAN header.
        config = {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": str(source),
            "topic": topic,
            "key.converter": C + "LongConverter",
            "value.converter": C + "DoubleConverter",
            "header.converter": C + "BooleanConverter",
            "transforms": "hoist,cast,key,unkey,unvalue,double,flag",
            "transforms.hoist.type": T + "HoistField$Value",
            "transforms.hoist.field": "n",
            "transforms.cast.type": T + "Cast$Value",
            "transforms.cast.spec": "n:int64",
            "transforms.key.type": T + "ValueToKey",
            "transforms.key.fields": "n",
            "transforms.unkey.type": T + "ExtractField$Key",
            "transforms.unkey.field": "n",
            "transforms.unvalue.type": T + "ExtractField$Value",
            "transforms.unvalue.field": "n",
            "transforms.double.type": T + "Cast$Value",
            "transforms.double.spec": "float64",
            "transforms.flag.type": T + "InsertHeader",
            "transforms.flag.header": "parsed",
            "transforms.flag.value.literal": "true",
        }
        created = rest.post("/connectors", json={"name": "numbers", "config": config})
        assert created.status_code == 201, created.text

    messages = read_messages(bootstrap, topic, len(NUMBERS), quiet_s=0.5)
    assert [(m.key(), m.value(), m.headers()) for m in messages] == [
        (struct.pack(">q", n), struct.pack(">d", n), [("parsed", b"\x01")]) for n in NUMBERS
    ]
