"""Keyset continuation against the hand-counted orders of the case table, on every backend x database.

Every case whose page holds its whole result (``ids`` as long as ``total``) is walked again in pages
of a few items, each page asked for with the previous response's ``X-Next-Cursor``; the pages put
together must be the case's ids, and the last page must carry no cursor.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import parse_qsl, urlencode

import pytest

from litestar_listing import RowPolicy, list_resource, tenant_scope
from litestar_listing.core.cursor import CURSOR_PARAMETER
from litestar_listing.core.parsing import forced_filter
from litestar_listing.core.query import Window
from litestar_listing.plugin.prepared import prepare
from tests.apps import serving
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target
from tests.conformance.test_conformance import loads, reached, target, with_policies
from tests.hostile import request

__all__ = ("target",)

WALKED = [
    case
    for case in CASES
    if not case.errors
    and not case.forced
    and not case.policies
    and case.ids is not None
    and case.total is not None
    and len(case.ids) == case.total >= 3
    and dict(parse_qsl(case.query)).get("page", "1") == "1"
]


def page_sizes(case: Case) -> tuple[int, ...]:
    """Pages of 3 for every case; 1 and 7 as well for the full orderings (``count=50``)."""
    return (1, 3, 7) if "count=50" in case.query else (3,)


def test_walked_cases_cover_the_order_traps() -> None:
    queries = " ".join(case.query for case in WALKED)
    traps = ("order_by=-name", "order_by=owner__name", "reviewer__name", "-part_count", "owner__role__code,-id")
    for needed in (*traps, "status,-quantity", "-company__name", "-active", "-price"):
        assert needed in queries
    assert any(case.load == "tags" for case in WALKED)  # a list of links loaded on keyset pages


@pytest.mark.parametrize("case", WALKED, ids=lambda case: case.id)
async def test_cursor_walk_matches_the_hand_counted_order(target: Target, case: Case) -> None:
    missing = (case.needs | {"keyset"}) - target.capabilities
    if missing:
        pytest.skip(f"{target.id} lacks {sorted(missing)}")
    resource = dataclasses.replace(target.resources[case.resource], keyset=True)
    app = serving(resource)
    base = [
        (key, value) for key, value in parse_qsl(case.query, keep_blank_values=True) if key not in {"count", "page"}
    ]
    assert case.ids is not None
    for size in page_sizes(case):
        seen: list[int] = []
        loaded: list[tuple[int, ...]] = []
        params = [*base, ("count", str(size))]
        pages = 0
        while True:
            async with target.context() as context:
                result = await list_resource(resource, None, params, app=app, load=loads(case), session=context.session)
            items = result.items
            pages += 1
            assert result.pagination.page == pages
            assert result.pagination.total == case.total
            seen.extend(item["id"] for item in items)
            loaded.extend(reached(item, case.load) for item in items if case.load)
            cursor = result.headers.get("X-Next-Cursor")
            if cursor is None:
                break
            assert len(items) == size
            params = [*base, (CURSOR_PARAMETER, cursor)]
            assert pages <= len(case.ids)
        assert seen == list(case.ids), f"pages of {size}"
        if case.loaded is not None:
            assert loaded == list(case.loaded), f"loaded, pages of {size}"


POLICED = [
    case
    for case in CASES
    if case.policies and case.ids is not None and case.total is not None and len(case.ids) == case.total >= 3
]


def test_policed_walks_cover_relation_order() -> None:
    assert any("order_by=owner__name" in case.query for case in POLICED)
    assert any("order_by=-owner__name" in case.query for case in POLICED)
    assert any("order_by=owner__role__code" in case.query for case in POLICED)  # two hops, the first policed
    assert any(case.load == "tags" for case in POLICED)  # loaded under the Tag policy


@pytest.mark.parametrize("case", POLICED, ids=lambda case: case.id)
async def test_cursor_walk_under_row_policies(target: Target, case: Case) -> None:
    """Keyset pages under row policies: each continues after the previous page's ``last_key``."""
    missing = (case.needs | {"keyset"}) - target.capabilities
    if missing:
        pytest.skip(f"{target.id} lacks {sorted(missing)}")
    assert case.ids is not None
    assert case.total is not None
    resource = target.resources[case.resource]
    base = [
        (key, value) for key, value in parse_qsl(case.query, keep_blank_values=True) if key not in {"count", "page"}
    ]
    forced = [forced_filter(prepare(resource).field_map, name, value) for name, value in case.forced]
    query = with_policies(prepare(resource).parser.parse(base, forced), prepare(resource).field_map.graph, case)
    query = dataclasses.replace(query, window=Window(1, 3))
    seen: list[int] = []
    loaded: list[tuple[int, ...]] = []
    while True:
        async with target.context() as context:
            page = await resource.backend.fetch(query, dataclasses.replace(context, keyset=True, load=loads(case)))
        seen.extend(item["id"] for item in page.items)
        loaded.extend(reached(item, case.load) for item in page.items if case.load)
        if len(page.items) < 3 or page.last_key is None:
            break
        query = dataclasses.replace(query, after=page.last_key)
        assert len(seen) <= case.total
    assert seen == list(case.ids)
    if case.loaded is not None:
        assert loaded == list(case.loaded)


# Through the plugin's policies, as a request resolves them: Acme's user, and the administrator whom
# the same policies leave unrestricted. Each walk must give the case's hand-counted order.
PLUGIN_POLICIES = (
    RowPolicy("Thing", tenant_scope("company_id")),
    RowPolicy("User", tenant_scope("company_id")),
    RowPolicy("Company", tenant_scope("id")),
)
USERS: dict[str, dict[str, object]] = {
    "tenant": {"company_id": 1},
    "admin": {"company_id": None, "is_platform_admin": True},
}
PLUGIN_WALKS = [
    ("tenant", "policy:tenant:order-two-hops"),
    ("tenant", "policy:tenant:order-two-hops-desc"),
    ("tenant", "policy:tenant:order-to-one"),
    ("admin", "policy:admin:order-two-hops"),
]


@pytest.mark.parametrize(("user", "case_id"), PLUGIN_WALKS, ids=[f"{user}-{case}" for user, case in PLUGIN_WALKS])
async def test_cursor_walk_through_the_plugins_policies(target: Target, user: str, case_id: str) -> None:
    """Pages of 3 asked for with each ``X-Next-Cursor``, for the request's user, under the plugin's policies."""
    case = next(case for case in CASES if case.id == case_id)
    missing = (case.needs | {"keyset"}) - target.capabilities
    if missing:
        pytest.skip(f"{target.id} lacks {sorted(missing)}")
    resource = dataclasses.replace(target.resources[case.resource], keyset=True)
    app = serving(resource, policies=PLUGIN_POLICIES)
    order = dict(parse_qsl(case.query))["order_by"]
    seen: list[int] = []
    query = urlencode({"order_by": order, "count": 3})
    while True:
        async with target.context() as context:
            connection = request(query, USERS[user], app)
            result = await list_resource(resource, connection, session=context.session)
        assert result.pagination.total == case.total
        seen.extend(item["id"] for item in result.items)
        cursor = result.headers.get("X-Next-Cursor")
        if cursor is None:
            break
        query = urlencode({"order_by": order, "count": 3, CURSOR_PARAMETER: cursor})
        assert len(seen) <= len(case.ids or ())
    assert seen == list(case.ids or ())
