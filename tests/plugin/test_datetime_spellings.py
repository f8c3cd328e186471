"""Every date-time spelling the OpenAPI pattern admits means the same instant on every supported Python.

Python 3.10's ``datetime.fromisoformat`` reads 3 or 6 fraction digits only and no ``+HHMM`` offset, so
the engine builds date-times from their parts; these tests run on each interpreter of the nox matrix.
"""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import parse_qsl, quote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from litestar_listing.backends.base import field_filter
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.core.parsing import QueryParser
from tests.openapi_parameters import sent_parameters
from tests.plugin.test_plugin import make_app
from tests.unit.graph import field_map

PARSER = QueryParser(field_map())
UTC = dt.timezone.utc


def _pattern() -> str:
    with TestClient(make_app()) as client:
        document = client.get("/schema/openapi.json").json()
    operation = document["paths"]["/api/v1/things"]["get"]
    return str(sent_parameters(document, operation)["at__gte"]["schema"]["pattern"])


PATTERN = _pattern()


def parsed(value: str, name: str = "at") -> object:
    (raw,) = PARSER.parse(parse_qsl(f"{name}={quote(value)}", keep_blank_values=True)).filters
    return field_filter(raw).value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-03-10T12:30:00.5Z", dt.datetime(2024, 3, 10, 12, 30, 0, 500000, tzinfo=UTC)),
        ("2024-03-10T12:30:00.05Z", dt.datetime(2024, 3, 10, 12, 30, 0, 50000, tzinfo=UTC)),
        ("2024-03-10T12:30:00.123Z", dt.datetime(2024, 3, 10, 12, 30, 0, 123000, tzinfo=UTC)),
        ("2024-03-10T12:30:00.1234z", dt.datetime(2024, 3, 10, 12, 30, 0, 123400, tzinfo=UTC)),
        ("2024-03-10T12:30:00.12345", dt.datetime(2024, 3, 10, 12, 30, 0, 123450, tzinfo=UTC)),
        ("2024-03-10 12:30:00.000001", dt.datetime(2024, 3, 10, 12, 30, 0, 1, tzinfo=UTC)),
        ("2024-03-10T12:30:59+0530", dt.datetime(2024, 3, 10, 7, 0, 59, tzinfo=UTC)),
        ("2024-03-10T12:30:00.5-05:00", dt.datetime(2024, 3, 10, 17, 30, 0, 500000, tzinfo=UTC)),
        ("2024-03-10T00:15-0130", dt.datetime(2024, 3, 10, 1, 45, tzinfo=UTC)),
        ("2024-03-10T12:30", dt.datetime(2024, 3, 10, 12, 30, tzinfo=UTC)),
        ("2024-03-10", dt.datetime(2024, 3, 10, tzinfo=UTC)),
        ("2024-01-01T00:30+01:00", dt.datetime(2023, 12, 31, 23, 30, tzinfo=UTC)),
    ],
)
def test_spellings_parse_to_the_same_instant(text: str, expected: dt.datetime) -> None:
    assert re.search(PATTERN, text) is not None, "the OpenAPI pattern must admit every spelling tested here"
    assert parsed(text) == expected
    assert parsed(text, "naive_at") == expected.replace(tzinfo=None)


@pytest.mark.parametrize(
    "text",
    [
        "2024-02-30",
        "2024-03-10T12:30:00.1234567Z",
        "2024-03-10T12:60",
        "2024-03-10T25:00",
        "2024-03-10T12:30+05:75",
        "2024-03-10T12:30-2360",
        "2024-03-10T12:30+2400",
    ],
)
def test_impossible_or_too_precise_values_are_refused(text: str) -> None:
    with pytest.raises(InvalidQueryError):
        parsed(text)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_value_of_the_openapi_pattern_parses(data: st.DataObject) -> None:
    text = data.draw(st.from_regex(PATTERN, fullmatch=True).filter(lambda text: "\n" not in text))
    # The first and last day Python knows may have no UTC instant once the offset is applied.
    assume(not text.startswith(("0001-01-01", "9999-12-31")))
    try:
        parsed(text)
    except InvalidQueryError as error:
        message = error.errors[0].message
        pytest.fail(f"{text!r} matches the OpenAPI pattern but is refused: {message}")


@settings(max_examples=300, deadline=None)
@given(
    instant=st.datetimes(min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31)),  # noqa: DTZ001
    digits=st.integers(0, 6),
    separator=st.sampled_from("T "),
    offset_minutes=st.integers(-(23 * 60 + 59), 23 * 60 + 59),
    zone=st.sampled_from(["Z", "z", "colon", "plain", "none"]),
)
def test_written_parts_come_back(
    instant: dt.datetime, digits: int, separator: str, offset_minutes: int, zone: str
) -> None:
    # The expected instant is computed from the parts, not by any parser.
    fraction = f"{instant.microsecond:06d}"[:digits]
    micro = int(fraction.ljust(6, "0")) if digits else 0
    local = instant.replace(microsecond=micro)
    text = local.strftime(f"%Y-%m-%d{separator}%H:%M:%S") + (f".{fraction}" if digits else "")
    if local.year < 1000:
        text = f"{local.year:04d}" + text[text.index("-") :]
    offset = dt.timedelta(0)
    if zone in {"Z", "z"}:
        text += zone
    elif zone != "none":
        sign, hours, minutes = "-" if offset_minutes < 0 else "+", *divmod(abs(offset_minutes), 60)
        text += f"{sign}{hours:02d}{':' if zone == 'colon' else ''}{minutes:02d}"
        offset = dt.timedelta(minutes=offset_minutes)
    assert re.search(PATTERN, text) is not None
    assert parsed(text) == (local - offset).replace(tzinfo=UTC)
