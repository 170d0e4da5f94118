"""Converter micro-benchmark: a 10-field struct to and from Kafka Connect JSON bytes.

Runs the project's JsonConverter beside two peers in the same process, on the same records:

* ``orjson by hand``: the envelope built as a dict literal and dumped with orjson, the
  fastest hand-written equivalent (no schema checks, no Java number formatting);
* ``stdlib json``: the same by hand with Python's ``json`` module.

Each figure is the median of ``--runs`` runs (min and max beside it). Prints a Markdown
table and, with ``--json PATH``, writes the figures as JSON.

    python bench/converters.py [--records N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.json import JsonConverter

SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.order")
    .field("id", Schema.INT64_SCHEMA)
    .field("customer", Schema.STRING_SCHEMA)
    .field("region", Schema.STRING_SCHEMA)
    .field("quantity", Schema.INT32_SCHEMA)
    .field("price", Schema.FLOAT64_SCHEMA)
    .field("paid", Schema.BOOLEAN_SCHEMA)
    .field("created", Schema.INT64_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("version", Schema.INT32_SCHEMA)
    .build()
)


def make_rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "customer": f"customer-{i % 1000}",
            "region": ("eu", "us", "apac")[i % 3],
            "quantity": i % 17,
            "price": 10.25 + i % 100,
            "paid": i % 2 == 0,
            "created": 1_700_000_000_000 + i,
            "note": None if i % 5 else "gift",
            "score": (i % 997) / 7.0 + 1.0,
            "version": 1,
        }
        for i in range(n)
    ]


def to_struct(row: dict[str, Any]) -> Struct:
    struct = Struct(SCHEMA)
    for name, value in row.items():
        struct.put(name, value)
    return struct


def timed(fn: Callable[[], Any], runs: int, n: int) -> dict[str, float]:
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        rates.append(n / (time.perf_counter() - start))
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates)}


def run(records: int, runs: int) -> dict[str, Any]:
    rows = make_rows(records)
    structs = [to_struct(r) for r in rows]
    converter = JsonConverter()
    converter.configure({}, False)
    schema_json = converter.as_json_schema(SCHEMA)
    wire = [converter.from_connect_data("t", SCHEMA, s) for s in structs]
    stdlib_wire = [json.dumps({"schema": schema_json, "payload": r}).encode() for r in rows]
    assert [orjson.loads(w) for w in wire] == [orjson.loads(w) for w in stdlib_wire]

    encode = {
        "JsonConverter": lambda: [converter.from_connect_data("t", SCHEMA, s) for s in structs],
        "orjson by hand": lambda: [
            orjson.dumps({"schema": schema_json, "payload": r}) for r in rows
        ],
        "stdlib json": lambda: [
            json.dumps({"schema": schema_json, "payload": r}).encode() for r in rows
        ],
    }
    decode = {
        "JsonConverter": lambda: [converter.to_connect_data("t", w) for w in wire],
        "orjson by hand": lambda: [orjson.loads(w)["payload"] for w in wire],
        "stdlib json": lambda: [json.loads(w)["payload"] for w in wire],
    }
    return {
        "records": records,
        "runs": runs,
        "python": sys.version.split()[0],
        "orjson": orjson.__version__,
        "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
        "date": dt.date.today().isoformat(),
        "to_bytes": {name: timed(fn, runs, records) for name, fn in encode.items()},
        "from_bytes": {name: timed(fn, runs, records) for name, fn in decode.items()},
    }


def table(results: dict[str, Any]) -> str:
    lines = [
        f"10-field struct, {results['records']:,} records, median of {results['runs']} runs "
        f"(Python {results['python']}, orjson {results['orjson']}, {results['date']})",
        "",
        "| direction | implementation | records/s (median) | min | max | JsonConverter ÷ this |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for direction in ("to_bytes", "from_bytes"):
        ours = results[direction]["JsonConverter"]["median"]
        for name, figures in results[direction].items():
            lines.append(
                f"| {direction.replace('_', ' ')} | {name} | {figures['median']:,.0f} | "
                f"{figures['min']:,.0f} | {figures['max']:,.0f} | {ours / figures['median']:.2f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    results = run(args.records, args.runs)
    print(table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
