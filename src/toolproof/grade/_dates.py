"""Relative date expressions, resolved against a suite's fixed 'now'."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_EXPR = re.compile(
    r"^(?P<base>now|today|tomorrow|yesterday)"
    r"(?P<offsets>(?:\s*[+-]\s*\d+\s*[dwhm])*)"
    r"(?:\s+(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?)?$"
)
_OFFSET = re.compile(r"([+-])\s*(\d+)\s*([dwhm])")
_UNITS = {"d": "days", "w": "weeks", "h": "hours", "m": "minutes"}
_DURATION = re.compile(r"^(\d+)\s*([smhd])$")


def zone(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone '{name}'") from None


def resolve(expr: str, now: datetime | None, tz: tzinfo) -> datetime:
    """Resolve 'tomorrow 12:00', 'now-14d' or an ISO date/datetime to an aware datetime."""
    text = expr.strip()
    m = _EXPR.match(text)
    if m is None:
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"'{expr}' is not a date: use ISO 8601 or now/today/tomorrow/yesterday "
                "with offsets like +3d, -2w, +1h and an optional time HH:MM"
            ) from None
        return value if value.tzinfo else value.replace(tzinfo=tz)
    if now is None:
        raise ValueError(f"'{expr}' is relative, so the suite needs 'now'")
    base = now if now.tzinfo else now.replace(tzinfo=tz)
    base = base.astimezone(tz)
    name = m["base"]
    if name != "now":
        base = base.replace(hour=0, minute=0, second=0, microsecond=0)
        base += timedelta(days={"today": 0, "tomorrow": 1, "yesterday": -1}[name])
    for sign, amount, unit in _OFFSET.findall(m["offsets"] or ""):
        delta = _bounded(int(amount), _UNITS[unit], expr)
        try:
            base = base + delta if sign == "+" else base - delta
        except OverflowError:
            raise ValueError(f"'{expr}' is out of the range of dates") from None
    if m["h"] is not None:
        base = base.replace(
            hour=int(m["h"]), minute=int(m["m"]), second=int(m["s"] or 0), microsecond=0
        )
    return base


def duration(text: str) -> timedelta:
    m = _DURATION.match(text.strip())
    if m is None:
        raise ValueError(f"'{text}' is not a duration like 30s, 5m, 2h or 1d")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[m[2]]
    return _bounded(int(m[1]), unit, text)


#: Offsets and tolerances are range-checked: at most this long.
MAX_SPAN = timedelta(days=36525)


def _bounded(amount: int, unit: str, text: str) -> timedelta:
    if amount > 10**9 or timedelta(**{unit: amount}) > MAX_SPAN:
        raise ValueError(f"'{text}' is out of range: offsets and tolerances are at most 100 years")
    return timedelta(**{unit: amount})


def parse_actual_datetime(value: object, tz: tzinfo) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)


def parse_actual_date(value: object, tz: tzinfo) -> date | None:
    """A model's date argument: 'YYYY-MM-DD', or a datetime string (its local date)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    parsed = parse_actual_datetime(text, tz)
    return parsed.astimezone(tz).date() if parsed else None
