"""The transformation chain over a whole poll (``apply_all``): the same records, drops and
error-handler calls as record by record (``apply``), with Kafka's transformations and
predicates configured as a connector config names them."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect.connect.source import SourceRecord
from airflow_provider_connect.runtime.executor.transformations import (
    TransformationStage,
    transformation_chain,
)

T = "org.apache.kafka.connect.transforms."
CHAIN = {
    "transforms": "insert,skip,cast",
    "transforms.insert.type": T + "InsertField$Value",
    "transforms.insert.static.field": "origin",
    "transforms.insert.static.value": "test",
    "transforms.skip.type": T + "Filter",
    "transforms.skip.predicate": "skipped",
    "transforms.cast.type": T + "Cast$Value",
    "transforms.cast.spec": "n:int32",
    "predicates": "skipped",
    "predicates.skipped.type": T + "predicates.TopicNameMatches",
    "predicates.skipped.pattern": "skip-.*",
}


def record(i: int, topic: str = "orders", n: Any = None) -> SourceRecord:
    return SourceRecord({"p": 0}, {"o": i}, topic, value={"n": str(i) if n is None else n})


class Failures:
    """An error handler that tolerates every failure, noting which stage and origin."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def __call__(self, stage: TransformationStage[Any], record: Any, origin: Any) -> None:
        self.seen.append((type(stage.transformation).__name__, origin))


def test_a_clean_poll_comes_back_whole_with_its_origins() -> None:
    chain = transformation_chain(CHAIN)
    polled = [record(i) for i in range(5)]
    origins = [f"origin {i}" for i in range(5)]
    failures = Failures()

    kept, kept_origins, dropped = chain.apply_all(polled, failures, origins)

    assert [r.value for r in kept] == [{"n": i, "origin": "test"} for i in range(5)]
    assert [r.source_offset for r in kept] == [{"o": i} for i in range(5)]
    assert list(kept_origins) == origins
    assert dropped == []
    assert failures.seen == []
    assert [p.value for p in polled] == [{"n": str(i)} for i in range(5)]  # left as polled


def test_drops_and_failures_match_the_chain_record_by_record() -> None:
    chain = transformation_chain(CHAIN)
    polled = [
        record(0),
        record(1, topic="skip-1"),
        record(2, n="not a number"),
        record(3),
        record(4, topic="skip-4"),
    ]
    origins = [f"origin {i}" for i in range(5)]
    by_record, together = Failures(), Failures()
    expected = [chain.apply(r, by_record, o) for r, o in zip(polled, origins, strict=True)]

    kept, kept_origins, dropped = chain.apply_all(polled, together, origins)

    assert kept == [r for r in expected if r is not None]
    assert [r.value for r in kept] == [{"n": 0, "origin": "test"}, {"n": 3, "origin": "test"}]
    assert list(kept_origins) == ["origin 0", "origin 3"]
    assert dropped == ["origin 1", "origin 2", "origin 4"]
    assert together.seen == by_record.seen == [("CastValue", "origin 2")]
