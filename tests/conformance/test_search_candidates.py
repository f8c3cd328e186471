"""A search read from its candidates (docs: indexes, "Search from indexes"), on every relational target.

Where an index serves every searched path, a search over few enough candidates ANDs ``<key> IN
(<each path's matching keys>)`` to its own test (on SQLite: ``Database.search_candidates``). The
case table's searched cases run again with every searchable path taken as indexed, so that each of
them that can be read so is: the answers are the hand counts, with row policies, relation and JSON
paths included. The tests below show which form the probe chooses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl

import pytest

from litestar_listing.backends.relational import execution
from litestar_listing.backends.relational.compiler import CANDIDATE_LIMIT, SearchForm
from litestar_listing.backends.relational.databases import DATABASES
from litestar_listing.plugin.prepared import prepare
from tests.conformance import test_conformance
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target
from tests.conformance.test_conformance import target

__all__ = ("target",)

SEARCHED = [case for case in CASES if not case.errors and "search=" in case.query]
"""The searched cases of the table."""


def _every_searchable_path(target: Target) -> dict[str, frozenset[str]]:
    return {
        name: frozenset(field.path.name for field in prepare(resource).field_map.searchable)
        for name, resource in target.resources.items()
    }


@contextmanager
def forms_chosen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SearchForm]]:
    """The forms the probes chose while the block runs."""
    chosen: list[SearchForm] = []
    original = execution._search_form

    def recorded(candidates: int) -> SearchForm:
        chosen.append(original(candidates))
        return chosen[-1]

    monkeypatch.setattr(execution, "_search_form", recorded)
    yield chosen


def test_enough_cases_search() -> None:
    assert len(SEARCHED) >= 40
    assert any(case.policies for case in SEARCHED)
    assert any(case.total is not None for case in SEARCHED)


@pytest.mark.parametrize("case", SEARCHED, ids=lambda case: case.id)
async def test_case_read_from_candidates(target: Target, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    if not target.id.endswith(":sqlite"):
        pytest.skip(f"{target.id}: only SQLite reads a search's candidates (Database.search_candidates)")
    with forms_chosen(monkeypatch) as chosen:
        await test_conformance.run_case(target, case, indexed_search=_every_searchable_path(target))
    # A text of a trigram or more is probed (the fixture's searched paths include its own fields).
    text = dict(parse_qsl(case.query, keep_blank_values=True)).get("search", "")
    if len(text) >= 3 and text.isalnum():
        assert chosen == [SearchForm.CANDIDATES], chosen


def test_few_candidates_are_read_and_many_are_scanned() -> None:
    # The probe counts at most CANDIDATE_LIMIT + 1; the boundary is inclusive.
    assert execution._search_form(0) is SearchForm.CANDIDATES
    assert execution._search_form(CANDIDATE_LIMIT) is SearchForm.CANDIDATES
    assert execution._search_form(CANDIDATE_LIMIT + 1) is SearchForm.SCAN


async def test_which_searches_are_probed(target: Target) -> None:
    if "count_in_page" not in target.capabilities:
        pytest.skip(f"{target.id} has no indexes to read candidates from")
    resource = target.resources["things"]
    backend: Any = resource.backend
    parse = prepare(resource).parser.parse
    every = _every_searchable_path(target)["things"]
    compiler = backend.compiler(DATABASES["sqlite"], None, frozenset(), every)
    assert compiler.narrows_search(parse([("search", "frank")]))
    # A path no index serves, a text without a trigram where a searched field is the listed model's own,
    # or no search: the OR is tested on every row the statement reads.
    some = backend.compiler(DATABASES["sqlite"], None, frozenset(), every - {"note"})
    assert not some.narrows_search(parse([("search", "frank")]))
    assert not compiler.narrows_search(parse([("search", "fr")]))
    assert not compiler.narrows_search(parse([("name", "frank")]))
