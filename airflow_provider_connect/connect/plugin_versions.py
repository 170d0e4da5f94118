"""Plugin version requirements (KIP-891): the values of ``connector.plugin.version``,
``key.converter.plugin.version``, ``value.converter.plugin.version``,
``header.converter.plugin.version``, ``transforms.<alias>.plugin.version`` and
``predicates.<alias>.plugin.version``, read as Kafka Connect reads them.

A requirement is a Maven version spec (``VersionRange.createFromVersionSpec``): a soft version
``1.2``, or one or more ranges such as ``[1.0,2.0)``, ``(,1.0]``, ``[1.2]`` or
``(,1.0],[1.2,)``, joined by commas. As in Kafka Connect (``PluginUtils.
connectorVersionRequirement``), a soft version requires exactly that version, and ``latest``
or no value requires none; beyond Kafka, a blank value requires none either.

Python installs one version of a distribution at a time, so a requirement is checked against
the installed version of the plugin, never used to choose among several. Versions are ordered
as Python orders package versions (PEP 440, with ``packaging``), not as Maven orders them:
a range's bounds must be PEP 440 versions. A single version (``1.2``, ``[1.2]``) may be any
string: it matches a PEP 440-equal version (``1.2`` matches ``1.2.0``), or the same string
when either is not a PEP 440 version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from airflow_provider_connect.connect.config import LambdaValidator
from airflow_provider_connect.connect.errors import ConfigException, ConnectException

PLUGIN_VERSION_SUFFIX = "plugin.version"
"""What a plugin's class key's prefix takes for its version key (``connector.`` +
``plugin.version``, ``transforms.<alias>.`` + ``plugin.version``)."""
LATEST = "latest"
"""The value that requires no particular version (the default)."""


class InvalidVersionSpecification(ValueError):
    """A spec that is not Maven's syntax (with Maven's messages), or whose range bounds are
    not PEP 440 versions."""


class VersionedPluginLoadingException(ConnectException):
    """No installed version of a plugin satisfies its requirement (Kafka's exception)."""


@dataclass(frozen=True)
class _Version:
    """A version as written, with its PEP 440 reading when it has one."""

    text: str
    pep440: Version | None

    @classmethod
    def of(cls, text: str) -> _Version:
        try:
            return cls(text, Version(text))
        except InvalidVersion:
            return cls(text, None)

    def same(self, other: _Version) -> bool:
        if self.pep440 is not None and other.pep440 is not None:
            return self.pep440 == other.pep440
        return self.text == other.text

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Restriction:
    """One interval of a range (Maven's ``Restriction``); a bound of None is open-ended.
    ``exact`` is the single version of ``[v]``, matched by equality."""

    lower: _Version | None
    lower_inclusive: bool
    upper: _Version | None
    upper_inclusive: bool
    exact: bool = False

    def contains(self, version: _Version) -> bool:
        if self.exact:
            return self.lower is not None and self.lower.same(version)
        value = version.pep440  # bounds of an interval are PEP 440 versions (_bound)
        low = self.lower.pep440 if self.lower is not None else None
        high = self.upper.pep440 if self.upper is not None else None
        if value is None:  # an unordered version is in no interval
            return False
        above = low is None or value > low or (value == low and self.lower_inclusive)
        below = high is None or value < high or (value == high and self.upper_inclusive)
        return above and below

    def __str__(self) -> str:  # as Maven writes it: [1.2] is [1.2,1.2]
        return (
            f"{'[' if self.lower_inclusive else '('}{self.lower or ''},"
            f"{self.upper or ''}{']' if self.upper_inclusive else ')'}"
        )


_EVERYTHING = Restriction(None, False, None, False)


@dataclass(frozen=True)
class VersionRange:
    """A parsed version spec (Maven's ``VersionRange``): a soft ``recommended`` version, or
    ``restrictions`` ordered and not overlapping."""

    recommended: _Version | None
    restrictions: tuple[Restriction, ...]

    @classmethod
    def from_spec(cls, spec: str) -> VersionRange:
        """Maven's ``createFromVersionSpec``; raises InvalidVersionSpecification with Maven's
        message for what Maven refuses, and for range bounds that are not PEP 440 versions."""
        restrictions: list[Restriction] = []
        process = spec
        upper_bound: _Version | None = None
        while process.startswith(("[", "(")):
            close_paren, close_bracket = process.find(")"), process.find("]")
            index = close_bracket
            if (close_bracket < 0 or close_paren < close_bracket) and close_paren >= 0:
                index = close_paren
            if index < 0:
                raise InvalidVersionSpecification(f"Unbounded range: {spec}")
            restriction = _restriction(process[: index + 1])
            if upper_bound is not None and (
                restriction.lower is None or _compare(restriction.lower, upper_bound, spec) < 0
            ):
                raise InvalidVersionSpecification(f"Ranges overlap: {spec}")
            restrictions.append(restriction)
            upper_bound = restriction.upper
            process = process[index + 1 :].strip()
            if process.startswith(","):
                process = process[1:].strip()
        if process:
            if restrictions:
                raise InvalidVersionSpecification(
                    f"Only fully-qualified sets allowed in multiple set scenario: {spec}"
                )
            return cls(_Version.of(process), (_EVERYTHING,))
        return cls(None, tuple(restrictions))

    @property
    def has_restrictions(self) -> bool:
        """Whether the spec was a range, not a soft version (Maven's ``hasRestrictions``)."""
        return bool(self.restrictions) and self.recommended is None

    def contains(self, version: str) -> bool:
        """Whether ``version`` (as a plugin reports it) is in one of the restrictions."""
        found = _Version.of(version)
        return any(r.contains(found) for r in self.restrictions)

    def __str__(self) -> str:  # Maven's toString, the form Kafka's messages show
        if self.recommended is not None:
            return str(self.recommended)
        return ",".join(str(r) for r in self.restrictions)


def _restriction(spec: str) -> Restriction:
    """Maven's ``parseRestriction`` of one ``[…]``/``(…)`` group."""
    lower_inclusive, upper_inclusive = spec.startswith("["), spec.endswith("]")
    process = spec[1:-1].strip()
    if "," not in process:
        if not (lower_inclusive and upper_inclusive):
            raise InvalidVersionSpecification(f"Single version must be surrounded by []: {spec}")
        version = _Version.of(process)
        return Restriction(version, True, version, True, exact=True)
    lower_text, _, upper_text = process.partition(",")
    lower = _bound(lower_text.strip(), spec)
    upper = _bound(upper_text.strip(), spec)
    if lower is not None and upper is not None:
        order = _compare(upper, lower, spec)
        if order < 0 or (order == 0 and not (lower_inclusive and upper_inclusive)):
            raise InvalidVersionSpecification(f"Range defies version ordering: {spec}")
    return Restriction(lower, lower_inclusive, upper, upper_inclusive)


def _bound(text: str, spec: str) -> _Version | None:
    """A range bound: None when empty; it must be a PEP 440 version."""
    if not text:
        return None
    version = _Version.of(text)
    if version.pep440 is None:
        raise InvalidVersionSpecification(f"Range bound {text} is not a PEP 440 version: {spec}")
    return version


def _compare(a: _Version, b: _Version, spec: str) -> int:
    if a.pep440 is None or b.pep440 is None:
        raise InvalidVersionSpecification(
            f"Versions that order ranges must be PEP 440 versions: {spec}"
        )
    return (a.pep440 > b.pep440) - (a.pep440 < b.pep440)


def version_requirement(spec: str | None) -> VersionRange | None:
    """The requirement a ``*.plugin.version`` value sets (Kafka's
    ``connectorVersionRequirement``): None for no value, a blank one or ``latest``; a soft
    version becomes the exact range ``[v]``. Raises InvalidVersionSpecification."""
    if spec is None or spec == LATEST or not spec.strip():
        return None
    spec = spec.strip()
    parsed = VersionRange.from_spec(spec)
    return parsed if parsed.has_restrictions else VersionRange.from_spec(f"[{spec}]")


def _check_spec(name: str, value: Any) -> None:
    if value is not None:
        try:
            version_requirement(value)
        except InvalidVersionSpecification as e:
            raise ConfigException.invalid(name, value, str(e)) from None


VERSION_SPEC_VALIDATOR = LambdaValidator(_check_spec, "a version, a version range or latest")
"""Kafka's ``PluginVersionValidator``: a ``*.plugin.version`` value must parse."""


def no_matching_version(plugin: str, requirement: VersionRange, installed: str) -> str:
    """Kafka's message for a requirement no installed version of ``plugin`` meets."""
    return (
        f"Plugin {plugin} not found that matches the version range {requirement}, "
        f"available versions: [{installed}]"
    )


def ensure_version(plugin: str, spec: str | None, installed: str) -> None:
    """Raises VersionedPluginLoadingException (Kafka's message) when ``installed`` does not
    meet ``spec``, InvalidVersionSpecification when ``spec`` does not parse."""
    requirement = version_requirement(spec)
    if requirement is not None and not requirement.contains(installed):
        raise VersionedPluginLoadingException(no_matching_version(plugin, requirement, installed))
