"""Exposure policy checks at start-up, the LIKE pattern model and case folding."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.text import Wildcard, caseless_regex, contains_pattern, fold_case, parse_like
from tests.unit.graph import field_map


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"filter_fields": ["nmae"]}, "did you mean ['name']"),
        ({"filter_fields": ["owner__password_hash"]}, "private"),
        ({"filter_fields": ["ownr__name"]}, "no relation 'ownr'"),
        ({"filter_fields": ["owner__boss__boss__boss__name"]}, "limit is 3"),
        ({"order_fields": ["tags__name"]}, "to-many"),
        ({"search_fields": ["*"]}, "wildcards"),
        ({"search_fields": ["small"]}, "not a text field"),
        ({"default_order": ["-tags__name"]}, "to-many"),
    ],
)
def test_bad_declarations_fail_at_start_up(options: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        field_map(**options)
    assert fragment in str(raised.value)


def test_wildcards_never_expose_private_fields() -> None:
    names = set(field_map(filter_fields=["*", "owner__*"]).filterable)
    assert "owner__name" in names
    assert "owner__password_hash" not in names


def test_like_pattern_renderings() -> None:
    pattern = parse_like("a%b_c\\%d\\_e\\\\f*?[")
    assert list(pattern) == ["a", Wildcard.ANY_RUN, "b", Wildcard.ONE_CHAR, "c%d_e\\f*?["]
    assert pattern.to_like() == "a%b_c\\%d\\_e\\\\f*?["
    assert pattern.to_glob() == "a*b?c%d_e\\f[*][?][[]"
    assert pattern.to_regex().fullmatch("aXXbYc%d_e\\f*?[")
    assert not pattern.to_regex().fullmatch("abYc%d_e\\f*?[x")


def test_literal_text_is_escaped() -> None:
    assert contains_pattern("50%_off").to_like() == "%50\\%\\_off%"
    assert contains_pattern("x", leading=False).to_like() == "x%"
    assert contains_pattern("x", trailing=False).to_like() == "%x"


def test_fold_case_is_per_character_lowercase() -> None:
    assert fold_case("ÁLBUM") == "álbum"
    assert fold_case("ΟΔΟΣ") == "οδοσ"  # no final-sigma context, as PostgreSQL's lower()
    assert fold_case("İ") == "i"
    assert fold_case("Straße") == "straße"
    assert fold_case("STRASSE") != fold_case("Straße")


# Characters with case, regex syntax, and the folding exceptions (İ, ẞ, K, final sigma).
_TEXT = st.text(st.sampled_from("aAáÁßẞSsKkKİiI\u0131\u03c3\u03c2ΣΩω.*+?()[]{}|^$\\%_-' \n"), max_size=6)


@given(needle=_TEXT.filter(bool), haystack=_TEXT)
@example(needle="ÁLBUM", haystack="Álbum")
@example(needle="ss", haystack="ß")
@example(needle="(a+)+$", haystack="aaaa")
def test_caseless_regex_matches_exactly_where_the_folded_text_is_a_substring(needle: str, haystack: str) -> None:
    found = re.search(caseless_regex(needle), haystack) is not None
    assert found == (fold_case(needle) in fold_case(haystack))


def test_caseless_regex_has_no_regex_syntax_of_its_own() -> None:
    # Only escaped characters and character classes remain: nothing repeats, alternates or groups.
    pattern = caseless_regex("(a+)+$ | [x]{2} .*? 7")
    assert pattern == r"\([Aa]\+\)\+\$\ \|\ \[[Xx]\]\{2\}\ \.\*\?\ 7"
    assert re.sub(r"\\.|\[[^\]]*\]", "", pattern) == "27"
