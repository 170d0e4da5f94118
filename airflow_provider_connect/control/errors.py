"""The errors of the control layer that every writer answers alike (REST with the status
named on each)."""

from __future__ import annotations

from airflow_provider_connect.connect.errors import ConnectException


class BadRequestError(ConnectException):
    """A request that cannot be carried out as asked (REST answers 400)."""


class NotStoppedError(ConnectException):
    """Offsets can be changed only for a STOPPED connector (REST answers 409)."""


class RequestBodyTooLarge(ConnectException):
    """A request body longer than the limit of the API it was sent to (REST answers 413)."""
