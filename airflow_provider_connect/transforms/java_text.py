"""Java's text conventions that Kafka's transformation configs are written in: regular
expressions (``java.util.regex.Pattern``), replacement strings (``$1``, ``${name}``) and
``java.text.SimpleDateFormat`` patterns, translated once at configuration time."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from airflow_provider_connect.connect.errors import ConfigException

_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")


def java_regex(regex: str) -> re.Pattern[str]:
    """``regex`` compiled with Python's ``re``: Java's named groups ``(?<name>…)`` become
    Python's; constructs ``re`` lacks (possessive quantifiers, ``\\p{…}``) raise re.error."""
    return re.compile(_NAMED_GROUP.sub("(?P<", regex))


def java_replacement(replacement: str) -> str:
    """A Java replacement string (``$1``, ``${name}``, ``\\$`` for a dollar) as a template
    for Python's ``Match.expand``."""
    out: list[str] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\":
            i += 1
            if i == len(replacement):
                raise ValueError("character to be escaped is missing")
            out.append(replacement[i].replace("\\", "\\\\"))
        elif c == "$":
            named = re.match(r"\$\{([A-Za-z][A-Za-z0-9]*)\}", replacement[i:])
            numbered = re.match(r"\$(\d+)", replacement[i:])
            if named:
                out.append(f"\\g<{named.group(1)}>")
                i += len(named.group(0)) - 1
            elif numbered:
                out.append(f"\\g<{numbered.group(1)}>")
                i += len(numbered.group(0)) - 1
            else:
                raise ValueError("Illegal group reference")
        else:
            out.append(c)
        i += 1
    return "".join(out)


_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_FIELD = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*")


def _text(value: str, n: int) -> str:
    return value if n >= 4 else value[:3]


def _zone_offset(moment: dt.datetime, n: int, iso: bool) -> str:
    seconds = int((moment.utcoffset() or dt.timedelta()).total_seconds())
    if iso and seconds == 0:
        return "Z"
    sign = "-" if seconds < 0 else "+"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return (
        f"{sign}{hours:02d}:{minutes:02d}" if iso and n >= 3 else f"{sign}{hours:02d}{minutes:02d}"
    )


_FORMATTERS: dict[str, Callable[[dt.datetime, int], str]] = {
    "G": lambda t, n: "AD" if t.year > 0 else "BC",
    "y": lambda t, n: f"{t.year % 100:02d}" if n == 2 else f"{t.year:0{n}d}",
    "M": lambda t, n: _text(_MONTHS[t.month - 1], n) if n >= 3 else f"{t.month:0{n}d}",
    "d": lambda t, n: f"{t.day:0{n}d}",
    "D": lambda t, n: f"{t.timetuple().tm_yday:0{n}d}",
    "E": lambda t, n: _text(_DAYS[t.weekday()], n),
    "u": lambda t, n: f"{t.isoweekday():0{n}d}",
    "a": lambda t, n: "AM" if t.hour < 12 else "PM",
    "H": lambda t, n: f"{t.hour:0{n}d}",
    "k": lambda t, n: f"{t.hour or 24:0{n}d}",
    "K": lambda t, n: f"{t.hour % 12:0{n}d}",
    "h": lambda t, n: f"{t.hour % 12 or 12:0{n}d}",
    "m": lambda t, n: f"{t.minute:0{n}d}",
    "s": lambda t, n: f"{t.second:0{n}d}",
    "S": lambda t, n: f"{t.microsecond // 1000:0{n}d}",
    "z": lambda t, n: "Coordinated Universal Time" if n >= 4 else "UTC",
    "Z": lambda t, n: _zone_offset(t, n, iso=False),
    "X": lambda t, n: _zone_offset(t, n, iso=True),
}
_DATE_LETTERS = set("GyMdDEu")
_PARSERS: dict[str, tuple[str, str]] = {  # letter: (regex, meaning)
    "y": (r"\d{1,9}", "year"),
    "M": (r"\d{1,2}|[A-Za-z]+", "month"),
    "d": (r"\d{1,2}", "day"),
    "H": (r"\d{1,2}", "hour"),
    "k": (r"\d{1,2}", "hour24"),
    "K": (r"\d{1,2}", "hour12"),
    "h": (r"\d{1,2}", "hour12"),
    "a": (r"[AaPp][Mm]", "ampm"),
    "m": (r"\d{1,2}", "minute"),
    "s": (r"\d{1,2}", "second"),
    "S": (r"\d{1,3}", "millisecond"),
    "E": (r"[A-Za-z]+", "weekday"),
    "D": (r"\d{1,3}", "yearday"),
    "z": (r"[A-Za-z ]+", "zone"),
    "Z": (r"[+-]\d{4}", "offset"),
    "X": (r"Z|[+-]\d{2}(?::?\d{2})?", "offset"),
}


class SimpleDateFormat:
    """A ``java.text.SimpleDateFormat`` pattern, formatting and parsing in UTC (as Kafka's
    transformations set it). Raises ConfigException for letters it does not know."""

    def __init__(self, pattern: str, config: str) -> None:
        self.pattern = pattern
        self.parts: list[tuple[str, int] | str] = []  # (letter, count) or literal text
        position = 0
        for match in _FIELD.finditer(pattern):
            self.parts.append(pattern[position : match.start()])
            token = match.group(0)
            if token.startswith("'"):
                self.parts.append(token[1:-1].replace("''", "'") if token != "''" else "'")
            elif token[0] in _FORMATTERS:
                self.parts.append((token[0], len(token)))
            else:
                raise ConfigException.invalid(
                    config, pattern, f"Illegal pattern character '{token[0]}'"
                )
            position = match.end()
        self.parts.append(pattern[position:])
        self._parser: re.Pattern[str] | None = None
        self.day_only = all(
            isinstance(part, str) or part[0] in _DATE_LETTERS for part in self.parts
        )
        """Whether the pattern has date fields only (its text changes once a day)."""

    def format(self, moment: dt.datetime) -> str:
        moment = moment.astimezone(dt.timezone.utc)
        return "".join(
            part if isinstance(part, str) else _FORMATTERS[part[0]](moment, part[1])
            for part in self.parts
        )

    def parse(self, text: str) -> dt.datetime:
        """The instant ``text`` spells; raises ValueError when it does not fit the pattern."""
        if self._parser is None:
            regex = []
            for i, part in enumerate(self.parts):
                if isinstance(part, str):
                    regex.append(re.escape(part))
                elif part[0] in _PARSERS:
                    regex.append(f"(?P<f{i}>{_PARSERS[part[0]][0]})")
                else:
                    regex.append(r"\S+?")
            self._parser = re.compile("".join(regex))
        match = self._parser.fullmatch(text.strip())
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        fields: dict[str, str] = {}
        for i, part in enumerate(self.parts):
            if isinstance(part, tuple) and part[0] in _PARSERS:
                fields[_PARSERS[part[0]][1]] = match.group(f"f{i}")
        return _instant(fields)


def _instant(fields: dict[str, str]) -> dt.datetime:
    year = int(fields.get("year", "1970"))
    month_text = fields.get("month", "1")
    if month_text.isdigit():
        month = int(month_text)
    else:
        names = [m.lower()[: len(month_text)] for m in _MONTHS]
        month = names.index(month_text.lower()) + 1
    hour = int(fields.get("hour", fields.get("hour24", "0"))) % 24
    if "hour12" in fields:
        hour = int(fields["hour12"]) % 12 + (12 if fields.get("ampm", "AM").upper() == "PM" else 0)
    moment = dt.datetime(
        year,
        month,
        int(fields.get("day", "1")),
        hour,
        int(fields.get("minute", "0")),
        int(fields.get("second", "0")),
        int(fields.get("millisecond", "0")) * 1000,
        tzinfo=dt.timezone.utc,
    )
    if "yearday" in fields and "month" not in fields:
        moment = moment.replace(month=1, day=1) + dt.timedelta(days=int(fields["yearday"]) - 1)
    offset = fields.get("offset")
    if offset and offset != "Z":
        digits = offset[1:].replace(":", "")
        delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or "0"))
        moment -= delta if offset[0] == "+" else -delta
    return moment
