"""Text from the query string to typed values (spec §4.4.5, DESIGN.md "Coercion").

Each coercer raises ``CoercionError`` carrying what was expected; parsing turns it into a 400.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import uuid
from collections.abc import Callable

from litestar_listing.core.schema import FieldInfo, ValueType

__all__ = ("CoercionError", "coerce", "coerce_bool", "coerce_text", "describe_type")

_INTEGER = re.compile(r"[+-]?[0-9]{1,20}")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?:[T ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]{1,6}))?)?"
    r"(?P<offset>Z|z|(?P<sign>[+-])(?P<offset_hours>[0-9]{2}):?(?P<offset_minutes>[0-5][0-9]))?)?"
)
_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
_MAX_NUMBER_TEXT = 64


class CoercionError(ValueError):
    """A value does not coerce; ``expected`` says what would have."""

    def __init__(self, expected: str) -> None:
        self.expected = expected
        super().__init__(expected)


def describe_type(info: FieldInfo) -> str:
    """A readable description of the values ``info`` accepts, for messages and OpenAPI."""
    if info.expected:
        return info.expected
    if info.type is ValueType.INTEGER:
        low, high = -(2 ** (info.bits - 1)), 2 ** (info.bits - 1) - 1
        return f"an integer from {low} to {high}"
    if info.type is ValueType.ENUM and info.enum is not None:
        return "one of " + ", ".join(repr(str(member.value)) for member in info.enum)
    return _DESCRIPTIONS[info.type]


_DESCRIPTIONS = {
    ValueType.TEXT: "text",
    ValueType.FLOAT: "a finite number",
    ValueType.DECIMAL: "a decimal number",
    ValueType.BOOLEAN: "a boolean (true/false, 1/0, yes/no)",
    ValueType.DATE: "a date as YYYY-MM-DD",
    ValueType.DATETIME: "an ISO 8601 date-time (YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]) or a date",
    ValueType.UUID: "a UUID",
    ValueType.ENUM: "one of the enumerated values",
    ValueType.IDENTIFIER: "an identifier",
}


def coerce_bool(text: str) -> bool:
    """``true``/``false``, ``1``/``0``, ``yes``/``no`` in any case.

    Raises:
        CoercionError: Anything else.
    """
    folded = text.strip().lower()
    if folded in _TRUE:
        return True
    if folded in _FALSE:
        return False
    raise CoercionError(_DESCRIPTIONS[ValueType.BOOLEAN])


def _integer(info: FieldInfo, text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise CoercionError(describe_type(info))
    value = int(text)
    if not -(2 ** (info.bits - 1)) <= value < 2 ** (info.bits - 1):
        raise CoercionError(describe_type(info))
    return value


def _float(info: FieldInfo, text: str) -> float:
    if len(text) > _MAX_NUMBER_TEXT or not _DECIMAL.fullmatch(text):
        raise CoercionError(describe_type(info))
    value = float(text)
    if value in {float("inf"), float("-inf")}:
        raise CoercionError(describe_type(info))
    return value


def _decimal(info: FieldInfo, text: str) -> decimal.Decimal:
    if len(text) > _MAX_NUMBER_TEXT or not _DECIMAL.fullmatch(text):
        raise CoercionError(describe_type(info))
    value = decimal.Decimal(text)
    if abs(value.adjusted()) > 1000:
        raise CoercionError(describe_type(info))
    return value


def _date(info: FieldInfo, text: str) -> dt.date:
    if not _DATE.fullmatch(text):
        raise CoercionError(describe_type(info))
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise CoercionError(describe_type(info)) from None


def _datetime(info: FieldInfo, text: str) -> dt.datetime:
    # Built from its parts rather than by ``datetime.fromisoformat``, which reads 3 or 6 fraction digits
    # only and no ``+HHMM`` offset before Python 3.11: every spelling of the OpenAPI pattern (1-6 fraction
    # digits, ``Z``, ``±HH:MM``, ``±HHMM``) means the same on every supported Python.
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise CoercionError(describe_type(info))
    part = match.group
    offset = dt.timedelta(0)
    if part("sign") is not None:
        offset = dt.timedelta(hours=int(part("offset_hours")), minutes=int(part("offset_minutes")))
        offset = -offset if part("sign") == "-" else offset
    try:
        value = dt.datetime(
            int(part("year")),
            int(part("month")),
            int(part("day")),
            int(part("hour") or 0),
            int(part("minute") or 0),
            int(part("second") or 0),
            int((part("fraction") or "0").ljust(6, "0")),
            tzinfo=dt.timezone(offset),
        ).astimezone(dt.timezone.utc)
    except (ValueError, OverflowError):
        raise CoercionError(describe_type(info)) from None
    return value if info.timezone else value.replace(tzinfo=None)


def _uuid(info: FieldInfo, text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        raise CoercionError(describe_type(info)) from None


def _enum(info: FieldInfo, text: str) -> object:
    assert info.enum is not None  # noqa: S101 - FieldInfo of type ENUM always carries its enum
    for member in info.enum:
        if str(member.value) == text:
            return member
    raise CoercionError(describe_type(info))


def _identifier(info: FieldInfo, text: str) -> object:
    if info.coerce is None:
        return text
    try:
        return info.coerce(text)
    except (ValueError, TypeError):
        raise CoercionError(describe_type(info)) from None


def coerce_text(text: str) -> str:
    """Text as given, except that NUL characters are refused (no database stores them in text).

    Raises:
        CoercionError: ``text`` contains a NUL character.
    """
    if "\x00" in text:
        raise CoercionError("text without NUL characters")
    return text


_COERCERS: dict[ValueType, Callable[[FieldInfo, str], object]] = {
    ValueType.TEXT: lambda _info, text: coerce_text(text),
    ValueType.INTEGER: _integer,
    ValueType.FLOAT: _float,
    ValueType.DECIMAL: _decimal,
    ValueType.BOOLEAN: lambda _info, text: coerce_bool(text),
    ValueType.DATE: _date,
    ValueType.DATETIME: _datetime,
    ValueType.UUID: _uuid,
    ValueType.ENUM: _enum,
    ValueType.IDENTIFIER: _identifier,
}


def coerce(info: FieldInfo, text: str) -> object:
    """Convert query-string ``text`` to a value of ``info``'s type.

    Args:
        info: The field compared with the value.
        text: The raw value.

    Returns:
        ``str``, ``int``, ``float``, ``Decimal``, ``bool``, ``date``, ``datetime`` (UTC; naive for
        naive columns), ``UUID``, an enum member, or the identifier ``info.coerce`` returns.

    Raises:
        CoercionError: ``text`` is not a value of that type; an empty string is one only for text.
    """
    return _COERCERS[info.type](info, text)
