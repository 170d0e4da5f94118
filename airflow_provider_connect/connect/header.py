"""Record headers, as ``org.apache.kafka.connect.header``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from airflow_provider_connect.connect.data.schema import Schema


class Header(NamedTuple):
    """One header: a key, and a value with its schema (None for a schemaless value)."""

    key: str
    schema: Schema | None
    value: Any


class Headers:
    """The ordered headers of a record; a key may occur more than once, as in Kafka."""

    __slots__ = ("_headers",)

    def __init__(self, headers: Iterable[Header | tuple[str, Any]] = ()) -> None:
        self._headers: list[Header] = []
        for header in headers:
            if isinstance(header, Header):
                self._headers.append(header)
            else:
                key, value = header
                self.add(key, value)

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """Appends a header; returns self so calls chain."""
        if not isinstance(key, str):
            raise TypeError(f"header key must be a str, got {type(key).__name__}")
        self._headers.append(Header(key, schema, value))
        return self

    def last_with_name(self, key: str) -> Header | None:
        return next((h for h in reversed(self._headers) if h.key == key), None)

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self._headers if h.key == key]

    def remove(self, key: str) -> Headers:
        """Drops every header called ``key``; returns self."""
        self._headers = [h for h in self._headers if h.key != key]
        return self

    def copy(self) -> Headers:
        return Headers(self._headers)

    def __iter__(self) -> Iterator[Header]:
        return iter(self._headers)

    def __len__(self) -> int:
        return len(self._headers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and self._headers == other._headers

    __hash__ = None  # type: ignore[assignment]  # unhashable: mutable, compared by value

    def __repr__(self) -> str:
        return f"Headers({self._headers!r})"
