"""The Schema Registry of the tests: :class:`demo.schema_registry.TestSchemaRegistry`, or a
real registry when ``SCHEMA_REGISTRY_URL`` names one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from demo.schema_registry import URL_ENV, TestSchemaRegistry

__all__ = ["TestSchemaRegistry", "schema_registry", "skip_if_external"]


@contextmanager
def schema_registry(**kwargs: Any) -> Iterator[str]:
    """The URL of a started :class:`TestSchemaRegistry` (``kwargs`` to its constructor),
    stopped after the block; or, when ``SCHEMA_REGISTRY_URL`` is set, that registry's URL
    (then ``kwargs``, which only the stand-in honors, skip the calling test)."""
    external = os.environ.get(URL_ENV)
    if external:
        if kwargs:
            skip_if_external(f"a registry with {', '.join(kwargs)}")
        yield external
        return
    with TestSchemaRegistry(**kwargs) as registry:
        yield registry.url


def skip_if_external(needs: str) -> None:
    """Skips the calling test when ``SCHEMA_REGISTRY_URL`` names a real registry: ``needs``
    (fault injection, auth, recorded requests) is only the stand-in's."""
    external = os.environ.get(URL_ENV)
    if external:
        pytest.skip(f"needs {needs}, which only TestSchemaRegistry has ({URL_ENV}={external})")
