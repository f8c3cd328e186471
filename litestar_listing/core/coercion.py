"""Value codecs: how each field type reads query text, describes itself and states its schema.

Each ``ValueType`` has one ``ValueCodec`` in ``CODECS``: parsing (``coerce``), messages
(``describe_type``), OpenAPI (``value_schema``, turned into Litestar's schema by the plugin) and the
test strategies (spellings, neighbours and edge values) all read it. Each parser raises
``CoercionError`` carrying what was expected; parsing turns it into a 400 (docs: design, "Coercion").
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from litestar_listing.core.schema import FieldInfo, ValueType

__all__ = (
    "CODECS",
    "CoercionError",
    "ValueCodec",
    "coerce",
    "coerce_bool",
    "coerce_text",
    "describe_type",
    "text_pattern",
    "value_schema",
)

_INTEGER = re.compile(r"[+-]?[0-9]{1,20}")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?:[T ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]{1,6}))?)?"
    r"(?P<offset>Z|z|(?P<sign>[+-])(?P<offset_hours>[0-9]{2}):?(?P<offset_minutes>[0-5][0-9]))?)?"
)
_BOOLEAN_TEXT = "a boolean (true/false, 1/0, yes/no)"
_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
_MAX_NUMBER_TEXT = 64


class CoercionError(ValueError):
    """A value does not coerce; ``expected`` says what would have."""

    def __init__(self, expected: str) -> None:
        self.expected = expected
        super().__init__(expected)


_BOUNDS = {bits: (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for bits in (8, 16, 32, 64)}
"""The signed range of each column width, computed once: an ``in`` list coerces up to 500 values."""


def _integer_bounds(info: FieldInfo) -> tuple[int, int]:
    if info.bounds is not None:
        return info.bounds
    bounds = _BOUNDS.get(info.bits)
    return bounds if bounds is not None else (-(2 ** (info.bits - 1)), 2 ** (info.bits - 1) - 1)


def describe_type(info: FieldInfo) -> str:
    """A readable description of the values ``info`` accepts, for messages and OpenAPI."""
    return info.expected or CODECS[info.type].describe(info)


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
    raise CoercionError(_BOOLEAN_TEXT)


def _integer(info: FieldInfo, text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise CoercionError(describe_type(info))
    value = int(text)
    low, high = _integer_bounds(info)
    if not low <= value <= high:
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


def _json_document(info: FieldInfo, _text: str) -> object:
    # A document is never compared whole: only its declared keys are (``JsonKey``).
    raise CoercionError(describe_type(info))


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


# ------------------------------------------------------------------------------ schemas (JSON Schema)

_NO_NUL = r"^[^\x00]*$"
"""Text without NUL characters: the engine refuses them (no database stores them in text)."""

_YEAR = r"(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
_CALENDAR_DATE = (
    rf"({_YEAR}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)"
    rf"|{_LEAP_YEAR}-02-29)"
)
"""A calendar date, years 1 to 9999 (Python's), 29 February in leap years only: RFC 3339 ``full-date``
without year 0, which is what ``_date`` accepts."""

_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?"
_OFFSET = r"(Z|z|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])"
_DATETIME_PATTERN = rf"^{_CALENDAR_DATE}([T ]{_TIME}{_OFFSET}?)?$"
"""What ``_datetime`` reads: ISO 8601 with ``T`` or a space, optional seconds, fraction and offset (none
is UTC), or a bare date (midnight UTC). Wider than RFC 3339 ``date-time``, which would call valid
values invalid (and narrower: no lowercase ``t``, at most 6 fraction digits)."""

_FLOAT_BOUND = sys.float_info.max
"""Finite numbers only: past it the text reads as infinity, which is refused."""


def _integer_schema(info: FieldInfo) -> dict[str, object]:
    low, high = _integer_bounds(info)
    return {"type": "integer", "minimum": low, "maximum": high}


def _enum_values(info: FieldInfo) -> list[str]:
    return [str(member.value) for member in info.enum or ()]


# ------------------------------------------------------------------ spellings, neighbours, edge values


def _spell_integer(_info: FieldInfo, value: object) -> tuple[str, ...]:
    number = int(str(value))
    return (str(number), f"+{number}", f"00{number}") if number >= 0 else (str(number),)


def _spell_float(_info: FieldInfo, value: object) -> tuple[str, ...]:
    number = float(str(value))
    whole = (f"{number:.0f}",) if number.is_integer() else ()
    return (repr(number), f"{number:.17g}", f"{number:.17e}", *whole)


def _spell_decimal(_info: FieldInfo, value: object) -> tuple[str, ...]:
    number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    plain = f"{number:f}"
    padded = plain + ("0" if "." in plain else ".0")
    return (str(number), str(number.normalize()), padded, f"{number:e}")


def _spell_datetime(_info: FieldInfo, value: object) -> tuple[str, ...]:
    assert isinstance(value, dt.datetime)  # noqa: S101 - a DATETIME field holds datetimes
    # A naive value is UTC: that is what ``_datetime`` gives naive columns.
    utc = (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)
    spellings = [
        utc.isoformat(),
        utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        utc.strftime("%Y-%m-%d %H:%M:%S.%f+0000"),
        utc.astimezone(dt.timezone(dt.timedelta(hours=-5))).isoformat(),
        utc.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30))).strftime("%Y-%m-%dT%H:%M:%S.%f+0530"),
        utc.isoformat(sep=" "),
    ]
    if utc.time() == dt.time(0):
        spellings.append(utc.date().isoformat())
    if utc.second == utc.microsecond == 0:
        spellings.append(utc.strftime("%Y-%m-%dT%H:%Mz"))
    return tuple(spellings)


def _spell_uuid(_info: FieldInfo, value: object) -> tuple[str, ...]:
    assert isinstance(value, uuid.UUID)  # noqa: S101 - a UUID field holds UUIDs
    return (str(value), str(value).upper(), value.hex, f"{{{value}}}", f"urn:uuid:{value}", f" {value} ")


def _spell_boolean(_info: FieldInfo, value: object) -> tuple[str, ...]:
    return ("true", "1", "yes", "True") if value else ("false", "0", "no", "FALSE")


def _spell_as_text(_info: FieldInfo, value: object) -> tuple[str, ...]:
    return (str(getattr(value, "value", value)),)


def _spell_date(_info: FieldInfo, value: object) -> tuple[str, ...]:
    assert isinstance(value, dt.date)  # noqa: S101 - a DATE field holds dates
    return (value.isoformat(),)


def _near_integer(info: FieldInfo, value: object) -> tuple[str, ...]:
    number, (low, high) = int(str(value)), _integer_bounds(info)
    return tuple(str(min(max(number + step, low), high)) for step in (1, -1, 2 * number + 1, -2 * number))


def _near_float(_info: FieldInfo, value: object) -> tuple[str, ...]:
    return tuple(repr(float(str(value)) + step) for step in (0.25, -0.25, 1e-9, -1.0))


def _near_decimal(_info: FieldInfo, value: object) -> tuple[str, ...]:
    number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    return tuple(str(number + decimal.Decimal(step)) for step in ("0.01", "-0.001", "1"))


def _near_datetime(info: FieldInfo, value: object) -> tuple[str, ...]:
    assert isinstance(value, dt.datetime)  # noqa: S101 - a DATETIME field holds datetimes
    shifts = (dt.timedelta(seconds=1), dt.timedelta(seconds=-1), dt.timedelta(hours=1))
    return tuple(text for shift in shifts for text in _spell_datetime(info, value + shift))


def _near_date(_info: FieldInfo, value: object) -> tuple[str, ...]:
    assert isinstance(value, dt.date)  # noqa: S101 - a DATE field holds dates
    return tuple((value + dt.timedelta(days=days)).isoformat() for days in (1, -1))


def _near_uuid(_info: FieldInfo, value: object) -> tuple[str, ...]:
    assert isinstance(value, uuid.UUID)  # noqa: S101 - a UUID field holds UUIDs
    return tuple(str(uuid.UUID(int=value.int ^ bit)) for bit in (1, 1 << 64))


def _near_boolean(info: FieldInfo, value: object) -> tuple[str, ...]:
    return _spell_boolean(info, not value)


def _none(_info: FieldInfo, _value: object = None) -> tuple[str, ...]:
    return ()


# ------------------------------------------------------------------------------------------- codecs


@dataclass(frozen=True, slots=True)
class ValueCodec:
    """Everything one value type knows about its query-string text, in one place.

    Attributes:
        parse: ``(field, text) -> value``; raises ``CoercionError`` naming what was expected.
        describe: ``field -> str``, what a valid value looks like ("an integer from -32768 to 32767").
        schema: ``field -> dict``, the JSON Schema (OpenAPI 3.1) of the texts ``parse`` accepts, in
            JSON's own key names (``maxLength``); plain data, the plugin makes Litestar's ``Schema``.
        name: ``field -> str``, the name under which that schema is shared in OpenAPI components:
            fields whose schemas are equal get the same name (``Int64``, ``DateTime``, ``<Enum>Value``).
        spellings: ``(field, value) -> texts`` that ``parse`` reads back as exactly ``value``.
        neighbours: ``(field, value) -> texts`` of values next to ``value`` (the next integer, day,
            second...); empty for text, whose neighbours are its fragments.
        edges: ``field -> texts`` of valid values at the ends of the range (empty for text).
        python_type: ``field -> type`` of the values a store holds (``int``, ``datetime``, the enum
            class), e.g. for the item schema in OpenAPI.
    """

    parse: Callable[[FieldInfo, str], object]
    describe: Callable[[FieldInfo], str]
    schema: Callable[[FieldInfo], dict[str, object]]
    name: Callable[[FieldInfo], str]
    python_type: Callable[[FieldInfo], type[object]]
    spellings: Callable[[FieldInfo, object], tuple[str, ...]] = _spell_as_text
    neighbours: Callable[[FieldInfo, object], tuple[str, ...]] = _none
    edges: Callable[[FieldInfo], tuple[str, ...]] = _none


def _fixed(text: str) -> Callable[[FieldInfo], str]:
    return lambda _info: text


CODECS: Mapping[ValueType, ValueCodec] = MappingProxyType(
    {
        ValueType.TEXT: ValueCodec(
            parse=lambda _info, text: coerce_text(text),
            describe=_fixed("text"),
            schema=lambda _info: {"type": "string", "pattern": _NO_NUL},
            name=_fixed("Text"),
            python_type=lambda _info: str,
        ),
        ValueType.INTEGER: ValueCodec(
            parse=_integer,
            describe=lambda info: "an integer from {} to {}".format(*_integer_bounds(info)),
            schema=_integer_schema,
            name=lambda info: f"Int{info.bits}" if info.bounds is None else "Int{}To{}".format(*info.bounds),
            python_type=lambda _info: int,
            spellings=_spell_integer,
            neighbours=_near_integer,
            edges=lambda info: ("0", "-1", *(str(bound) for bound in _integer_bounds(info))),
        ),
        ValueType.FLOAT: ValueCodec(
            parse=_float,
            describe=_fixed("a finite number"),
            schema=lambda _info: {"type": "number", "minimum": -_FLOAT_BOUND, "maximum": _FLOAT_BOUND},
            name=_fixed("Float"),
            python_type=lambda _info: float,
            spellings=_spell_float,
            neighbours=_near_float,
            edges=lambda _info: ("0", "-0.0", "0.1", "1e-300", "1E300", ".5"),
        ),
        ValueType.DECIMAL: ValueCodec(
            parse=_decimal,
            describe=_fixed("a decimal number"),
            schema=lambda _info: {
                "type": "string",
                "pattern": f"^{_DECIMAL.pattern.replace('(?:', '(')}$",
                "maxLength": _MAX_NUMBER_TEXT,
            },
            name=_fixed("Decimal"),
            python_type=lambda _info: decimal.Decimal,
            spellings=_spell_decimal,
            neighbours=_near_decimal,
            edges=lambda _info: ("0", "-0.00", "0.001", "99999999.99", "123456789.5", "1E-5", ".5"),
        ),
        ValueType.BOOLEAN: ValueCodec(
            parse=lambda _info, text: coerce_bool(text),
            describe=_fixed(_BOOLEAN_TEXT),
            schema=lambda _info: {"type": "boolean"},
            name=_fixed("Boolean"),
            python_type=lambda _info: bool,
            spellings=_spell_boolean,
            neighbours=_near_boolean,
            edges=lambda _info: ("true", "false", "1", "0", "yes", "no", "TRUE", "No"),
        ),
        ValueType.DATE: ValueCodec(
            parse=_date,
            describe=_fixed("a date as YYYY-MM-DD"),
            schema=lambda _info: {"type": "string", "format": "date", "pattern": f"^{_CALENDAR_DATE}$"},
            name=_fixed("Date"),
            python_type=lambda _info: dt.date,
            spellings=_spell_date,
            neighbours=_near_date,
            edges=lambda _info: ("0001-01-01", "9999-12-31", "2024-02-29", "2013-12-31"),
        ),
        ValueType.DATETIME: ValueCodec(
            parse=_datetime,
            describe=_fixed("an ISO 8601 date-time (YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]) or a date"),
            # ``date-time`` for client generators (a datetime type); the pattern also admits a bare date.
            schema=lambda _info: {"type": "string", "format": "date-time", "pattern": _DATETIME_PATTERN},
            name=_fixed("DateTime"),
            python_type=lambda _info: dt.datetime,
            spellings=_spell_datetime,
            neighbours=_near_datetime,
            edges=lambda _info: (
                "0001-01-01",
                "1970-01-01T00:00:00Z",
                "2013-01-01",
                "2999-12-31T23:59:59.999999+14:00",
                "9999-12-31T23:59:59Z",
            ),
        ),
        ValueType.UUID: ValueCodec(
            parse=_uuid,
            describe=_fixed("a UUID"),
            schema=lambda _info: {"type": "string", "format": "uuid"},
            name=_fixed("UUID"),
            python_type=lambda _info: uuid.UUID,
            spellings=_spell_uuid,
            neighbours=_near_uuid,
            edges=lambda _info: ("00000000-0000-0000-0000-000000000000", "ffffffffffffffffffffffffffffffff"),
        ),
        ValueType.ENUM: ValueCodec(
            parse=_enum,
            describe=lambda info: "one of " + ", ".join(repr(value) for value in _enum_values(info)),
            schema=lambda info: {"type": "string", "enum": _enum_values(info)},
            # Not the enum's own name: Litestar shares the enum of an item's field under that one.
            name=lambda info: f"{info.enum.__name__ if info.enum is not None else 'Enum'}Value",
            python_type=lambda info: info.enum or str,
            neighbours=lambda info, _value: tuple(_enum_values(info)),
            edges=lambda info: tuple(_enum_values(info)),
        ),
        ValueType.IDENTIFIER: ValueCodec(
            parse=_identifier,
            describe=_fixed("an identifier"),
            schema=lambda _info: {"type": "string"},
            name=_fixed("Identifier"),
            python_type=lambda _info: str,
        ),
        ValueType.JSON: ValueCodec(
            parse=_json_document,
            describe=_fixed("a JSON document"),
            schema=lambda _info: {},
            name=_fixed("JsonDocument"),
            python_type=lambda _info: object,
        ),
    }
)
"""The codec of every value type."""


def value_schema(info: FieldInfo) -> dict[str, object]:
    """The JSON Schema of the query-string values ``info`` accepts, with its description.

    Returns:
        A new dict in JSON Schema key names (``{"type": "integer", "minimum": ..., "maximum": ...,
        "description": ...}``), safe to change.
    """
    return {**CODECS[info.type].schema(info), "description": describe_type(info)}


_REGEX_SYNTAX = frozenset("\\^$.|?*+()[]{}/")

_TEXT_PATTERNS: Mapping[ValueType, str] = MappingProxyType(
    {
        ValueType.TEXT: r"[^\x00,]*",
        ValueType.INTEGER: _INTEGER.pattern,
        ValueType.FLOAT: _DECIMAL.pattern.replace("(?:", "("),
        ValueType.DECIMAL: _DECIMAL.pattern.replace("(?:", "("),
        ValueType.DATE: _CALENDAR_DATE,
        ValueType.DATETIME: _DATETIME_PATTERN.removeprefix("^").removesuffix("$"),
    }
)


def text_pattern(info: FieldInfo) -> str:
    """A regular expression (unanchored, no comma) of the texts of one of ``info``'s values, for a list of them.

    Exactly the texts ``coerce`` reads for text, dates and datetimes, and for enumerations (their
    values, escaped); for integers and numbers, their spellings, bounds aside; any text without a
    comma for the other types. ``^E(,E)*$`` is then a comma-separated list (docs: query language,
    "Filters and operators").
    """
    if info.type is ValueType.ENUM:
        # Only the syntax characters are escaped: ECMA-262 regular expressions with the ``u`` flag,
        # as JSON Schema validators may compile them, refuse ``re.escape``'s escaped space.
        escaped = (
            "".join(f"\\{char}" if char in _REGEX_SYNTAX else char for char in value) for value in _enum_values(info)
        )
        return "(" + "|".join(escaped) + ")"
    return _TEXT_PATTERNS.get(info.type, "[^,]*")


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
    return CODECS[info.type].parse(info, text)
