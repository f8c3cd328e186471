"""Each value type's codec agrees with itself: its spellings, neighbours and edges parse, and its schema admits them."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import uuid

import pytest

from litestar_listing.core.coercion import CODECS, CoercionError, coerce, value_schema
from litestar_listing.core.schema import FieldInfo, ValueType
from tests.unit.graph import GRAPH

FIELDS = {info.name: info for info in GRAPH.entities["Thing"].fields.values()}

# One value per field, and what a codec's spellings of it must parse back to (hand-written).
SAMPLES: list[tuple[str, object]] = [
    ("small", 1234),
    ("small", -7),
    ("weight", 2.5),
    ("price", decimal.Decimal("12.50")),
    ("active", True),
    ("active", False),
    ("day", dt.date(2024, 2, 29)),
    ("at", dt.datetime(2013, 1, 1, 5, 30, 0, 250000, tzinfo=dt.timezone.utc)),
    ("at", dt.datetime(2013, 1, 1, tzinfo=dt.timezone.utc)),
    # A naive column holds UTC without an offset.
    ("naive_at", dt.datetime(2013, 6, 30, 23, 59, 59, tzinfo=dt.timezone.utc).replace(tzinfo=None)),
    ("uid", uuid.UUID("12345678-1234-5678-1234-567812345678")),
    ("name", "Álbum 50%"),
]


def _admits(info: FieldInfo, text: str) -> bool:
    pattern = value_schema(info).get("pattern")
    return pattern is None or re.search(str(pattern), text) is not None


@pytest.mark.parametrize(("name", "value"), SAMPLES)
def test_every_spelling_parses_back_to_the_value_and_the_schema_admits_it(name: str, value: object) -> None:
    info = FIELDS[name]
    spellings = CODECS[info.type].spellings(info, value)
    assert spellings
    for text in spellings:
        parsed = coerce(info, text)
        assert parsed == value, text
        assert _admits(info, text), text


@pytest.mark.parametrize(("name", "value"), SAMPLES)
def test_neighbours_parse_to_other_values(name: str, value: object) -> None:
    info = FIELDS[name]
    for text in CODECS[info.type].neighbours(info, value):
        assert coerce(info, text) != value or info.type is ValueType.INTEGER, text  # a clamped bound may repeat
        assert _admits(info, text), text


@pytest.mark.parametrize("info", list(FIELDS.values()), ids=lambda info: info.name)
def test_edges_are_valid_values(info: FieldInfo) -> None:
    for text in CODECS[info.type].edges(info):
        coerce(info, text)
        assert _admits(info, text), text


def test_integer_bounds_come_from_the_width() -> None:
    small = FIELDS["small"]
    assert value_schema(small) == {
        "type": "integer",
        "minimum": -32768,
        "maximum": 32767,
        "description": "an integer from -32768 to 32767",
    }
    assert CODECS[ValueType.INTEGER].edges(small) == ("0", "-1", "-32768", "32767")
    assert CODECS[ValueType.INTEGER].name(small) == "Int16"
    with pytest.raises(CoercionError, match="from -32768 to 32767"):
        coerce(small, "32768")


def test_enum_values_are_their_own_schema() -> None:
    color = FIELDS["color"]
    assert value_schema(color) == {"type": "string", "enum": ["red", "blue"], "description": "one of 'red', 'blue'"}
    assert CODECS[ValueType.ENUM].name(color) == "ColorValue"
    assert color.enum is not None
    assert [coerce(color, text) for text in CODECS[ValueType.ENUM].edges(color)] == list(color.enum)


def test_every_value_type_has_a_codec() -> None:
    assert set(CODECS) == set(ValueType)
