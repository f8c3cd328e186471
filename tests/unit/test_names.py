"""``NameIndex`` answers what ``difflib.get_close_matches`` answers, without reading names that cannot match."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litestar_listing.core.names import CUTOFF, NameIndex

NAMES = (
    "dest_airport__name",
    "dest_airport__faa",
    "origin_airport__name",
    "carrier",
    "tailnum",
    "year",
    "month",
    "day",
    "dep_time",
    "arr_delay",
    "time_hour",
    "airline__name",
    "id",
    "dy",
)
INDEX = NameIndex(NAMES)
LETTERS = st.sampled_from("abcdefghilmnoprstuy_")


@st.composite
def misspelt(draw: st.DrawFn) -> str:
    """An allowed name with a few letters inserted, removed or replaced, or any short text."""
    if draw(st.booleans()):
        return draw(st.text(LETTERS, max_size=40))
    name = list(draw(st.sampled_from(NAMES)))
    for _ in range(draw(st.integers(0, 4))):
        position = draw(st.integers(0, len(name)))
        action = draw(st.sampled_from(("insert", "remove", "replace")))
        if action == "insert":
            name.insert(position, draw(LETTERS))
        elif name:
            index = min(position, len(name) - 1)
            if action == "remove":
                del name[index]
            else:
                name[index] = draw(LETTERS)
    return "".join(name)


@given(misspelt())
def test_hints_are_difflib_close_matches(name: str) -> None:
    assert INDEX.closest(name) == difflib.get_close_matches(name, list(NAMES), n=3, cutoff=CUTOFF)


def test_known_hints() -> None:
    assert INDEX.closest("dest_airport__nam") == ["dest_airport__name", "dest_airport__faa", "origin_airport__name"]
    assert INDEX.closest("dy") == ["dy", "day"]
    assert INDEX.closest("tailnumber", limit=1) == ["tailnum"]


def test_a_long_name_is_answered_without_matching(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = difflib.SequenceMatcher.ratio

    def counted(self: difflib.SequenceMatcher[str]) -> float:
        calls.append("ratio")
        return original(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counted)
    # Longer than (2 / CUTOFF - 1) times the longest allowed name: no candidate can reach CUTOFF.
    assert INDEX.closest("dest_airport__name" * 1000) == []
    assert INDEX.closest("x" * 20_000) == []
    assert calls == []
