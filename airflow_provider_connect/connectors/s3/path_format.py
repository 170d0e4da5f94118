"""Joda-Time's date patterns and zone arithmetic, as Confluent's time-based partitioner uses them.

``path.format`` is a Joda ``DateTimeFormat`` pattern, not a ``strftime`` one: ``YYYY`` is the
year of era (not the week-based year), ``'text'`` is a literal (``''`` a quote), any other
non-letter is a literal and an unknown letter is refused with Joda's message
``Illegal pattern component: X``. :class:`PathFormat` prints every Joda pattern letter
(``G C Y y x w e E D M d a K h H k m s S z Z``) with Joda's widths, except the long zone name
``zzzz``, which the tz database does not carry: it is refused by name. Text fields (month
and day names, AM/PM, era) are printed in English; short zone names (``z``) are the tz
database's abbreviations (``PDT``, ``-03``), which can differ from Java's.

:class:`Zone` is Joda's ``DateTimeZone`` over :mod:`zoneinfo`: ids are IANA names, ``UTC`` and
fixed offsets ``[+-]hh[:mm[:ss]]``; ``convert_local_to_utc`` is Joda's non-strict conversion
(a local time in a DST gap is shifted as Joda shifts it), which bucket boundaries rely on.
Instants are milliseconds since the epoch, from year 1 to year 9999.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
DAY_MS = 86_400_000
_FIXED_OFFSET = re.compile(r"([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?")


@functools.cache
def _zone_ids() -> frozenset[str]:
    # "localtime" is the machine's zone, a file of the database but no zone id
    return frozenset(zoneinfo.available_timezones() - {"localtime"})


@dataclass(frozen=True)
class Zone:
    """A time zone under its Joda id; instants and local times are in milliseconds."""

    id: str
    tzinfo: dt.tzinfo

    def local_datetime(self, instant_ms: int) -> dt.datetime:
        """The aware date and time of ``instant_ms`` in this zone."""
        try:
            return (_EPOCH + dt.timedelta(milliseconds=instant_ms)).astimezone(self.tzinfo)
        except OverflowError:
            raise ValueError(f"The instant {instant_ms} ms is out of range") from None

    def offset_ms(self, instant_ms: int) -> int:
        """The zone's offset from UTC at ``instant_ms``."""
        offset = self.local_datetime(instant_ms).utcoffset()
        assert offset is not None  # an aware datetime
        return offset // dt.timedelta(milliseconds=1)

    def convert_utc_to_local(self, instant_ms: int) -> int:
        """Joda's ``convertUTCToLocal``: the local time of ``instant_ms``, as milliseconds."""
        return instant_ms + self.offset_ms(instant_ms)

    def convert_local_to_utc(self, local_ms: int) -> int:
        """Joda's ``convertLocalToUTC(local, strict=false)``: the instant of a local time.

        The same algorithm as Joda's: the offset at the local time read as UTC is corrected
        once; a local time in a DST gap is moved forward by the gap in zones west of
        Greenwich, and an ambiguous one (a DST overlap) gets the earlier instant there, the
        later one east of Greenwich.
        """
        offset_local = self.offset_ms(local_ms)
        offset = self.offset_ms(local_ms - offset_local)
        # Joda compares the next transitions after both candidates: they differ exactly when
        # an offset change lies between them (zones do not change offset twice in hours)
        in_gap = self.offset_ms(local_ms - offset) != offset
        if offset != offset_local and offset_local < 0 and in_gap:
            offset = offset_local
        return local_ms - offset

    def start_of_day(self, instant_ms: int) -> int:
        """Joda's ``withTimeAtStartOfDay``: the first instant of ``instant_ms``'s local day."""
        local = self.convert_utc_to_local(instant_ms)
        return self.convert_local_to_utc(local - local % DAY_MS)


def zone_for_id(zone_id: str) -> Zone:
    """The zone of a Joda id (``DateTimeZone.forID``): ``UTC``, an IANA name, or a fixed
    offset such as ``+05:30``; raises ValueError with Joda's message for any other."""
    fixed = _FIXED_OFFSET.fullmatch(zone_id)
    if fixed:
        sign, hours, minutes, seconds = fixed.groups()
        offset = dt.timedelta(
            hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0)
        )
        if offset < dt.timedelta(hours=24) and int(minutes or 0) < 60 and int(seconds or 0) < 60:
            if not offset:
                return Zone("UTC", zoneinfo.ZoneInfo("UTC"))
            offset = -offset if sign == "-" else offset
            name = _print_offset(offset, colon=True, seconds=bool(seconds))
            return Zone(name, dt.timezone(offset, name))
    elif zone_id in _zone_ids():
        return Zone(zone_id, zoneinfo.ZoneInfo(zone_id))
    raise ValueError(f"The datetime zone id '{zone_id}' is not recognised")


def next_scheduled_rotation(now_ms: int, interval_ms: int, zone: Zone) -> int:
    """Confluent's ``DateTimeUtils.getNextTimeAdjustedByDay``: the next multiple of
    ``interval_ms`` counted from the start of ``now_ms``'s local day, but never later than
    the start of the next local day (a day of 23 or 25 hours on DST changes)."""
    start = zone.start_of_day(now_ms)
    start_local = zone.convert_utc_to_local(start)
    next_day = zone.convert_local_to_utc(start_local + DAY_MS)
    following = start + ((now_ms - start) // interval_ms + 1) * interval_ms
    return min(following, next_day)


# -- patterns --------------------------------------------------------------------------------
_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

_Printer = Callable[[dt.datetime], str]


def _print_offset(offset: dt.timedelta, *, colon: bool, seconds: bool = False) -> str:
    """``+hh:mm`` (``+hhmm`` without ``colon``), with ``:ss`` when ``seconds``."""
    total = int(offset.total_seconds())
    sign = "-" if total < 0 else "+"
    hours, rest = divmod(abs(total), 3600)
    minutes, secs = divmod(rest, 60)
    sep = ":" if colon else ""
    text = f"{sign}{hours:02d}{sep}{minutes:02d}"
    return f"{text}{sep}{secs:02d}" if seconds else text


def _number(field: Callable[[dt.datetime], int], digits: int) -> _Printer:
    return lambda t: f"{field(t):0{digits}d}"


def _text(names: list[str], field: Callable[[dt.datetime], int], count: int) -> _Printer:
    return lambda t: names[field(t)] if count >= 4 else names[field(t)][:3]


def _fraction(digits: int) -> _Printer:
    return lambda t: f"{t.microsecond // 1000:03d}{'0' * digits}"[:digits]


def _offset(count: int) -> _Printer:
    def print_offset(t: dt.datetime) -> str:
        offset = t.utcoffset()
        assert offset is not None  # an aware datetime
        return _print_offset(offset, colon=count == 2)

    return print_offset


def _printer(letter: str, count: int) -> _Printer:
    """The printer of a run of ``count`` pattern letters ``letter``; ValueError if Joda has
    no such field or it is not supported."""
    if letter in "yYx" and count == 2:
        year: Callable[[dt.datetime], int] = (
            (lambda t: t.isocalendar().year) if letter == "x" else (lambda t: t.year)
        )
        return _number(lambda t: year(t) % 100, 2)
    numbers: dict[str, Callable[[dt.datetime], int]] = {
        "y": lambda t: t.year,
        "Y": lambda t: t.year,  # year of era: every year is AD here
        "x": lambda t: t.isocalendar().year,
        "C": lambda t: t.year // 100,
        "w": lambda t: t.isocalendar().week,
        "e": lambda t: t.isoweekday(),
        "D": lambda t: t.timetuple().tm_yday,
        "d": lambda t: t.day,
        "H": lambda t: t.hour,
        "k": lambda t: t.hour or 24,
        "K": lambda t: t.hour % 12,
        "h": lambda t: t.hour % 12 or 12,
        "m": lambda t: t.minute,
        "s": lambda t: t.second,
    }
    if letter == "M":
        if count >= 3:
            return _text(_MONTHS, lambda t: t.month - 1, count)
        return _number(lambda t: t.month, count)
    if letter in numbers:
        return _number(numbers[letter], count)
    if letter == "E":
        return _text(_DAYS, lambda t: t.weekday(), count)
    if letter == "a":
        return lambda t: "AM" if t.hour < 12 else "PM"
    if letter == "G":
        return lambda t: "AD"
    if letter == "S":
        return _fraction(count)
    if letter == "Z":
        return _offset(count) if count <= 2 else _zone_id
    if letter == "z":
        if count >= 4:
            raise ValueError(f"Unsupported pattern component: {letter * count} (long zone names)")
        return lambda t: t.tzname() or ""
    raise ValueError(f"Illegal pattern component: {letter * count}")


TEXT_LETTERS = frozenset("MEaG")
"""Letters whose printed text depends on the locale (``M`` only from 3 letters on)."""


def _is_letter(c: str) -> bool:
    return c.isascii() and c.isalpha()


def _tokens(pattern: str) -> list[tuple[str, int] | str]:
    """Joda's tokens of ``pattern``: ``(letter, count)`` for a field, the text of a literal.

    A literal runs over non-letters and quoted text; ``''`` is a quote, inside quotes or out,
    and an unclosed quote runs to the end (as Joda's ``parseToken``)."""
    tokens: list[tuple[str, int] | str] = []
    i = 0
    while i < len(pattern):
        if _is_letter(pattern[i]):
            end = i
            while end < len(pattern) and pattern[end] == pattern[i]:
                end += 1
            tokens.append((pattern[i], end - i))
            i = end
            continue
        text: list[str] = []
        quoted = False
        while i < len(pattern):
            c = pattern[i]
            if c == "'" and pattern[i + 1 : i + 2] == "'":
                text.append(c)
                i += 1
            elif c == "'":
                quoted = not quoted
            elif not quoted and _is_letter(c):
                break
            else:
                text.append(c)
            i += 1
        tokens.append("".join(text))
    return tokens


def _literal(text: str) -> _Printer:
    return lambda t: text


def _zone_id(t: dt.datetime) -> str:
    """The Joda id of ``t``'s zone (a fixed offset's zone is named after it)."""
    return getattr(t.tzinfo, "key", None) or t.tzname() or ""


class PathFormat:
    """A compiled Joda pattern. Raises ValueError with Joda's message (``Illegal pattern
    component: r``) for a pattern Joda refuses, and names any pattern component it does not
    support."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.uses_text = False
        """Whether the pattern prints text (month or day names, AM/PM, era)."""
        self._printers: list[_Printer] = []
        for token in _tokens(pattern):
            if isinstance(token, str):
                self._printers.append(_literal(token))
                continue
            letter, count = token
            self.uses_text |= letter in TEXT_LETTERS and (letter != "M" or count >= 3)
            self._printers.append(_printer(letter, count))

    def format(self, instant_ms: int, zone: Zone) -> str:
        """``instant_ms`` printed in ``zone``, as Joda's ``DateTime.toString(formatter)``;
        ValueError when the instant is outside years 1 to 9999."""
        local = zone.local_datetime(instant_ms)
        return "".join(printer(local) for printer in self._printers)
