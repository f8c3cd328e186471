"""Totals read with the page, by one statement counting its rows (a window count), on every relational target.

The plugin asks for it (``ListContext.count_in_page``) for a list whose page sorts and searches every
matching row anyway (``core.cost.counts_with_page``; docs: design, "Totals"). The case table runs again
with it asked for on every case; the lists through the plugin below show it is asked for, that the
total comes from the page's statement, and that the answer is the memory oracle's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl

import pytest

from litestar_listing.backends.piccolo.readers import Statements as PiccoloStatements
from litestar_listing.backends.sqlalchemy.readers import Statements as SQLAlchemyStatements
from litestar_listing.core.cost import counts_with_page
from litestar_listing.plugin.action import list_resource
from litestar_listing.plugin.prepared import prepare
from tests.conformance import test_conformance
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target, memory_target
from tests.conformance.test_conformance import target

__all__ = ("target",)

COUNTED = [case for case in CASES if not case.errors and case.total is not None]
"""The cases with a total: each is run again with the total read from the page's own statement."""


def test_enough_cases_count() -> None:
    assert len(COUNTED) >= 500
    assert sum("search=" in case.query for case in COUNTED) >= 20
    assert any(case.policies for case in COUNTED if "search=" in case.query)
    assert any(int(dict(parse_qsl(case.query)).get("page", "1") or 1) > 1 for case in COUNTED)


@pytest.mark.parametrize("case", COUNTED, ids=lambda case: case.id)
async def test_case_counted_in_page(target: Target, case: Case) -> None:
    if "count_in_page" not in target.capabilities:
        pytest.skip(f"{target.id} lacks ['count_in_page']")
    await test_conformance.run_case(target, case, count_in_page=True)


SEARCHED_SORTED = "search=o&order_by=-quantity&count=4&page=2"
"""Searched, and sorted by a field no index serves: the plugin reads its total with the page."""

ASKED = {
    SEARCHED_SORTED: True,
    "search=o&order_by=-quantity&count=4&page=9": True,  # past the end: no row to read it from
    "search=o&order_by=id&count=4&page=2": False,  # the primary key's index serves the order
    "quantity__gte=1&order_by=-quantity&count=4": False,  # a count without a search is cheap
}


def test_the_plugin_asks_for_searched_sorted_lists_only() -> None:
    prepared = prepare(memory_target().resources["things"])
    for query_string, asked in ASKED.items():
        query = prepared.parser.parse(parse_qsl(query_string))
        assert counts_with_page(query, prepared.field_map) is asked, query_string


@contextmanager
def totals_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The totals read from a page's row (``Statements.total_in``, on both backends) while the block runs."""
    read: list[int] = []
    for statements in (SQLAlchemyStatements, PiccoloStatements):

        def total_in(self: Any, row: Any, original: Callable[[Any, Any], int] = statements.total_in) -> int:
            read.append(original(self, row))
            return read[-1]

        monkeypatch.setattr(statements, "total_in", total_in)
    yield read


@pytest.mark.parametrize("query_string", list(ASKED))
async def test_lists_read_their_total_as_the_plugin_asks(
    target: Target, query_string: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "count_in_page" not in target.capabilities:
        pytest.skip(f"{target.id} lacks ['count_in_page']")
    params = parse_qsl(query_string)
    oracle = memory_target()
    expected = await list_resource(oracle.resources["things"], None, params, app=oracle.app)
    with totals_read(monkeypatch) as read:
        async with target.context() as context:
            result = await list_resource(
                target.resources["things"], None, params, app=target.app, session=context.session
            )
    assert [item["id"] for item in result.items] == [item["id"] for item in expected.items]
    assert result.pagination.total == expected.pagination.total
    asked = ASKED[query_string]
    assert read == ([expected.pagination.total] if asked and result.items else [])
