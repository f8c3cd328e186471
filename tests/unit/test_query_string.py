"""``QueryString.read`` decodes what ``parse_qsl`` decodes, up to the limits, and counts the rest."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litestar_listing.core import parsing
from litestar_listing.core.parsing import Limits, QueryString

PIECES = st.sampled_from(
    [
        *("a", "b", "=", "&", "%", "%20", "+", "%C3%A9", "%c3%a9", "%0", "x", "%01", "%C3", "%ff", "%5C", "\\"),
        *("\\x41", "é", "\x7f", "\x00", ";", "%u00e9", "%%", "%25", "%2B", "%3D", "%26", "%F0%9F%98%80", "€"),
        "%ED%A0%80",
    ]
)
RAW = st.lists(PIECES, max_size=60).map("".join)


@given(RAW)
def test_within_the_limits_it_is_parse_qsl(raw: str) -> None:
    read = QueryString.read(raw, Limits())
    assert list(read.pairs) == parse_qsl(raw, keep_blank_values=True, errors="replace")
    assert read.unread == 0


@given(RAW)
def test_past_the_limits_the_head_is_read_and_the_rest_counted(raw: str) -> None:
    limits = Limits(max_parameters=3, max_query_length=20)
    read = QueryString.read(raw, limits)
    every = parse_qsl(raw, keep_blank_values=True, errors="replace")
    assert len(read.pairs) <= 3
    assert list(read.pairs) == every[: len(read.pairs)]
    assert len(read.pairs) + read.unread == len(every)
    if read.unread:
        assert read.first_unread == every[len(read.pairs)][0]


def test_escapes_are_decoded_in_c_whatever_their_number(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counted(text: str, errors: str) -> str:
        calls.append(text)
        return unquote(text, errors=errors)

    monkeypatch.setattr(parsing, "unquote", counted)
    raw = "a=" + "%01" * 2400 + "&b=" + "%C3%A9x" * 100
    read = QueryString.read(raw, Limits())
    assert list(read.pairs) == parse_qsl(raw, keep_blank_values=True, errors="replace")
    assert calls == []  # the per-escape Python loop of urllib.parse.unquote never ran


def test_a_long_unread_name_is_shown_cut() -> None:
    read = QueryString.read("a=1&" + "n" * 20_000 + "=1", Limits())
    assert (read.pairs, read.unread, read.first_unread) == ((("a", "1"),), 1, "n" * 40 + "…")
