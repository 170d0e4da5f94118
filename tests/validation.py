"""The per-field errors a config gets from validation, for tests of bad configs."""

from __future__ import annotations

import pytest

from airflow_provider_connect.control.validation import ConfigValidationError, ensure_valid


def config_errors(config: dict[str, str]) -> dict[str, list[str]]:
    """The errors of each field of an invalid ``config`` (fails the test if it is valid)."""
    with pytest.raises(ConfigValidationError) as e:
        ensure_valid({"name": "bad", **config})
    return {
        c["value"]["name"]: c["value"]["errors"]
        for c in e.value.infos["configs"]
        if c["value"]["errors"]
    }
