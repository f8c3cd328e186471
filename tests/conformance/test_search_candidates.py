"""A search read from its candidates (docs: indexes, "Search from indexes"), on every relational target.

Where an index serves every searched path, a search over few enough candidates ANDs the condition
``<key> IN (<each path's matching keys>)`` to its own test (``Database.search_candidates``). The
case table's searched cases run again with every searchable path taken as indexed, so that each of
them that can be read so is: the answers are the hand counts, with row policies, relation and JSON
paths included. The tests below show which form the probe chooses.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import pytest

from litestar_listing.backends.base import IndexedSearch
from litestar_listing.backends.relational import execution
from litestar_listing.backends.relational.compiler import CANDIDATE_LIMIT, SearchForm
from litestar_listing.backends.relational.databases import DATABASES
from litestar_listing.plugin.prepared import prepare
from tests.conformance import test_conformance
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target, forms_chosen, reads_candidates
from tests.conformance.test_conformance import target

__all__ = ("target",)

SEARCHED = [case for case in CASES if not case.errors and "search=" in case.query and case.endpoint == "list"]
"""The searched lists of the table. A facet request reads the rows its search matches by a scan: one
statement per facet and at most one count, no probe of the candidates (docs: facets)."""


def _every_searchable_path(target: Target) -> dict[str, IndexedSearch]:
    """Every searchable path of each resource taken as indexed, on a table of a million rows."""
    return {
        name: IndexedSearch(frozenset(field.path.name for field in prepare(resource).field_map.searchable), 10**6)
        for name, resource in target.resources.items()
    }


def test_enough_cases_search() -> None:
    assert len(SEARCHED) >= 40
    assert any(case.policies for case in SEARCHED)
    assert any(case.total is not None for case in SEARCHED)


@pytest.mark.parametrize("case", SEARCHED, ids=lambda case: case.id)
async def test_case_read_from_candidates(target: Target, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    if not reads_candidates(target):
        pytest.skip(f"{target.id}: its database never reads a search's candidates (Database.search_candidates)")
    chosen = forms_chosen(monkeypatch)
    await test_conformance.run_case(target, case, indexed_search=_every_searchable_path(target))
    # A text of a trigram or more is probed (the fixture's searched paths include its own fields).
    text = dict(parse_qsl(case.query, keep_blank_values=True)).get("search", "")
    if len(text) >= 3 and text.isalnum():
        assert chosen == [SearchForm.CANDIDATES], chosen


def test_few_candidates_are_read_and_many_are_scanned() -> None:
    # The probe counts at most candidate_limit + 1; the boundary is inclusive.
    assert execution._search_form(0, 5) is SearchForm.CANDIDATES
    assert execution._search_form(5, 5) is SearchForm.CANDIDATES
    assert execution._search_form(6, 5) is SearchForm.SCAN


@pytest.mark.parametrize(
    ("rows", "sqlite", "postgresql"), [(0, 1_000, 1_000), (336_776, 11_225, 3_367), (10**7, 333_333, 100_000)]
)
def test_how_many_candidates_are_few(target: Target, rows: int, sqlite: int, postgresql: int) -> None:
    # CANDIDATE_LIMIT, or the database's share of the table's rows when the application started.
    if "count_in_page" not in target.capabilities:
        pytest.skip(f"{target.id} has no indexes to read candidates from")
    backend: Any = target.resources["things"].backend
    for name, limit in (("sqlite", sqlite), ("postgresql", postgresql)):
        compiler = backend.compiler(DATABASES[name], None, frozenset(), IndexedSearch(frozenset(), rows))
        assert compiler.candidate_limit == max(CANDIDATE_LIMIT, limit)


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
    some = backend.compiler(DATABASES["sqlite"], None, frozenset(), IndexedSearch(every.paths - {"note"}, every.rows))
    assert not some.narrows_search(parse([("search", "frank")]))
    assert not compiler.narrows_search(parse([("search", "fr")]))
    assert not compiler.narrows_search(parse([("name", "frank")]))
