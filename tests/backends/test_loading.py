"""Eager loading (docs: eager loading) on every SQL backend x database: nested items and statement counts.

Expected items are built from the fixture tuples, not from any backend; the statement count must
not grow with the page size (one statement per to-many relation for the whole page).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl

import pytest
from piccolo.querystring import QueryString
from sqlalchemy import event

from litestar_listing import ListContext
from litestar_listing.backends.sqlalchemy.sqlite import read_engine
from litestar_listing.core.parsing import equality_filter
from litestar_listing.core.query import FieldPath, Policy
from litestar_listing.plugin.prepared import prepare
from tests.conformance.fixture import ATTRIBUTES, THINGS, USERS, company_row, part_rows, role_row, tag_rows
from tests.conformance.models import ConformanceBase
from tests.conformance.targets import Target, memory_target, target_fixture
from tests.matrix import Store, selected

LOAD = ("owner__manager__role", "reviewer", "company", "tags", "parts__supplier")
TO_ONE = ("owner__manager__role", "reviewer", "company")  # SQLAlchemy builds these items from plain rows
THING_COLUMNS = (
    "id", "name", "status", "quantity", "weight", "price", "active", "release_date", "created_at", "uid",
    "note", "owner_id", "reviewer_id", "company_id", "deleted_at",
)  # fmt: skip


def _user(user_id: int | None, nested: tuple[str, ...]) -> dict[str, Any] | None:
    for id_, name, email, company_id, role_id, manager_id, _password_hash in USERS:
        if id_ == user_id:
            user: dict[str, Any] = {
                "id": id_,
                "name": name,
                "email": email,
                "company_id": company_id,
                "role_id": role_id,
                "manager_id": manager_id,
            }
            if "manager" in nested:
                user["manager"] = _user(manager_id, ("role",))
            if "role" in nested:
                user["role"] = role_row(role_id)
            return user
    return None


def expected_thing(thing_id: int) -> dict[str, Any]:
    values = next(row for row in THINGS if row[0] == thing_id)
    thing: dict[str, Any] = dict(zip(THING_COLUMNS, values, strict=True))
    thing["attributes"] = ATTRIBUTES.get(thing_id)
    thing["owner"] = _user(thing["owner_id"], ("manager",))
    thing["reviewer"] = _user(thing["reviewer_id"], ())
    thing["company"] = company_row(thing["company_id"])
    thing["tags"] = tag_rows(thing_id)
    thing["parts"] = part_rows(thing_id)
    thing["part_count"] = len(thing["parts"])
    return thing


target = target_fixture(selected(store=Store.SQL))


@contextmanager
def counting(target: Target) -> Iterator[list[str]]:
    """Record the statements ``target`` sends to its database."""
    statements: list[str] = []
    if target.engine is not None:
        # Every statement is compiled once, on the engine's path and on a pinned pool connection alike.
        original = QueryString.compile_string

        def compile_string(self: QueryString, engine_type: str = "postgres") -> Any:
            statements.append(str(self))
            return original(self, engine_type=engine_type)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(QueryString, "compile_string", compile_string)
            yield statements
        return
    sync_engine = target.sessions.kw["bind"].sync_engine
    # On SQLite, lists outside a transaction run on the backend's read engine (made before the listener).
    engines = [engine for engine in (sync_engine, read_engine(sync_engine)) if engine is not None]

    def record(*args: Any) -> None:
        statements.append(str(args[2]))

    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


async def _page(target: Target, query_string: str, load: tuple[str, ...]) -> list[dict[str, Any]]:
    resource = target.resources["things"]
    query = prepare(resource).parser.parse(parse_qsl(query_string), [])
    async with target.context() as context:
        call = ListContext(request=context.request, session=context.session, load=load)
        page = await resource.backend.fetch(query, call)
    return page.items


@pytest.mark.parametrize("ids", [(1, 4, 12, 13, 17, 21), (2, 3, 5, 6, 7, 9, 14, 16, 19)])
async def test_loaded_items_nest_every_relation_kind(target: Target, ids: tuple[int, ...]) -> None:
    with orm_instances() as loaded:
        items = await _page(target, f"id__in={','.join(map(str, ids))}&order_by=id", LOAD)
    assert items == [expected_thing(thing_id) for thing_id in ids]
    # To-many loads need SQLAlchemy's ORM loading (Piccolo has no instances to record).
    assert bool(loaded) == (target.engine is None)


def _to_one(thing: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in thing.items() if key not in {"tags", "parts"}}


@pytest.mark.parametrize("ids", [(1, 4, 12, 13, 17, 21), (2, 3, 5, 6, 7, 9, 14, 16, 19)])
async def test_to_one_loads_nest_alike(target: Target, ids: tuple[int, ...]) -> None:
    with orm_instances() as loaded:
        items = await _page(target, f"id__in={','.join(map(str, ids))}&order_by=id", TO_ONE)
    assert items == [_to_one(expected_thing(thing_id)) for thing_id in ids]
    # Items of to-one loads are read from the rows: no ORM instance is made for them.
    assert loaded == []


async def test_the_keyset_reads_the_last_rows_ordering_values_past_the_loaded_columns(target: Target) -> None:
    resource = target.resources["things"]
    query = prepare(resource).parser.parse([("order_by", "-quantity"), ("count", "4")], [])
    async with target.context() as context:
        page = await resource.backend.fetch(query, dataclasses.replace(context, load=TO_ONE, keyset=True))
    last = next(row for row in THINGS if row[0] == page.items[-1]["id"])
    assert [term.path.field for term in query.order] == ["quantity", "id"]
    assert page.last_key == (last[THING_COLUMNS.index("quantity")], last[0])


@contextmanager
def orm_instances() -> Iterator[list[object]]:
    """The ORM instances SQLAlchemy loads meanwhile (none are recorded on Piccolo)."""
    loaded: list[object] = []

    def record(instance: object, _context: Any) -> None:
        loaded.append(instance)

    event.listen(ConformanceBase, "load", record, propagate=True)
    try:
        yield loaded
    finally:
        event.remove(ConformanceBase, "load", record)


async def test_no_load_gives_only_columns_and_computed_values(target: Target) -> None:
    items = await _page(target, "id=13", ())
    expected = expected_thing(13)
    assert items == [{key: expected[key] for key in (*THING_COLUMNS, "attributes", "part_count")}]


async def test_statements_do_not_grow_with_the_page(target: Target) -> None:
    with counting(target) as small:
        await _page(target, "count=2&order_by=id", LOAD)
    with counting(target) as large:
        await _page(target, "count=20&order_by=id", LOAD)
    # Page, total, then one statement per to-many relation (tags, parts) for the whole page.
    assert len(small) == len(large) == 4, large


# Row policies on eager loading (docs: scoping, "Row policies"): Acme's users (company 1) and Acme
# itself; parts supplied by Acme or Umbrella (1, 4); the tags red and blue (ids 1, 2). Things are
# not restricted, so every tenant's things show which of their relations stay hidden.
LOAD_POLICIES = (
    Policy("User", (equality_filter(FieldPath(("company_id",)), 1),)),
    Policy("Company", (equality_filter(FieldPath(("id",)), 1),)),
    Policy("Part", (equality_filter(FieldPath(("supplier_id",)), (1, 4)),)),
    Policy("Tag", (equality_filter(FieldPath(("id",)), (1, 2)),)),
)


def _acme_user(user: dict[str, Any] | None) -> dict[str, Any] | None:
    """``user`` as the policies let it be seen: None outside Acme, its manager likewise."""
    if user is None or user["company_id"] != 1:
        return None
    if "manager" in user:
        user["manager"] = _acme_user(user["manager"])
    return user


def expected_under_policies(thing_id: int) -> dict[str, Any]:
    thing = expected_thing(thing_id)
    thing["owner"] = _acme_user(thing["owner"])
    thing["reviewer"] = _acme_user(thing["reviewer"])
    thing["company"] = thing["company"] if thing["company_id"] == 1 else None
    thing["tags"] = [tag for tag in thing["tags"] if tag["id"] in {1, 2}]
    thing["parts"] = [
        {**part, "supplier": part["supplier"] if part["supplier_id"] == 1 else None}
        for part in thing["parts"]
        if part["supplier_id"] in {1, 4}
    ]
    thing["part_count"] = len(thing["parts"])  # a Computed value: it counts the parts the policy lets through
    return thing


async def _page_under_policies(target: Target, ids: tuple[int, ...], load: tuple[str, ...]) -> list[dict[str, Any]]:
    resource = target.resources["things"]
    params = [*(("id", str(thing_id)) for thing_id in ids), ("order_by", "id"), ("count", "20")]
    query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=LOAD_POLICIES)
    async with target.context() as context:
        page = await resource.backend.fetch(query, dataclasses.replace(context, load=load))
    return page.items


@pytest.mark.parametrize("ids", [(1, 4, 12, 13, 17, 21), (2, 3, 5, 6, 7, 9, 14, 16, 19, 25)])
async def test_loaded_relations_follow_the_row_policies(target: Target, ids: tuple[int, ...]) -> None:
    items = await _page_under_policies(target, ids, LOAD)
    assert items == [expected_under_policies(thing_id) for thing_id in ids]
    # Hand-checked: thing 4's owner Dave and reviewer Eve are Globex's; of its parts only gear (4).
    if 4 in ids:
        four = items[ids.index(4)]
        assert (four["owner"], four["reviewer"], [part["id"] for part in four["parts"]]) == (None, None, [4])


@pytest.mark.parametrize("ids", [(1, 4, 12, 13, 17, 21), (2, 3, 5, 6, 7, 9, 14, 16, 19, 25)])
async def test_to_one_loads_follow_the_row_policies(target: Target, ids: tuple[int, ...]) -> None:
    items = await _page_under_policies(target, ids, TO_ONE)
    assert items == [_to_one(expected_under_policies(thing_id)) for thing_id in ids]


async def test_the_memory_oracle_loads_under_the_row_policies_alike() -> None:
    await test_loaded_relations_follow_the_row_policies(memory_target(), (1, 4, 12, 13, 17, 21, 25))


async def test_keyset_pages_with_loads_walk_an_order_two_hops_through_a_policed_model(target: Target) -> None:
    """The order's joins (owner, then its role, under the User policy) beside the loads' own joins."""
    resource = target.resources["things"]
    query = prepare(resource).parser.parse([("order_by", "owner__role__code"), ("count", "4")], [])
    query = dataclasses.replace(query, policies=LOAD_POLICIES)
    items: list[dict[str, Any]] = []
    while True:
        async with target.context() as context:
            page = await resource.backend.fetch(query, dataclasses.replace(context, load=TO_ONE, keyset=True))
        items += page.items
        if len(page.items) < 4:
            break
        query = dataclasses.replace(query, after=page.last_key)
    # Acme's owners by role: Alice admin, Bob dev, alice ops; Carol has none, the others are hidden.
    admin, dev, ops = (1, 7, 16, 28), (2, 8, 22, 29), (11, 21, 27)
    rest = sorted(set(range(1, 32)) - {*admin, *dev, *ops})
    assert [item["id"] for item in items] == [*admin, *dev, *ops, *rest]
    assert items == [_to_one(expected_under_policies(item["id"])) for item in items]
