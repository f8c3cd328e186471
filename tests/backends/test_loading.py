"""Eager loading (spec §4.5) on every SQL backend x database: nested items and statement counts.

Expected items are built from the fixture tuples, not from any backend; the statement count must
not grow with the page size (one statement per to-many relation for the whole page).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl

import pytest
from piccolo.querystring import QueryString
from sqlalchemy import event

from litestar_listing import ListContext
from tests.conformance.fixture import THINGS, USERS, company_row, part_rows, role_row, tag_rows
from tests.conformance.targets import Target, open_target
from tests.matrix import Store, selected

LOAD = ("owner__manager__role", "reviewer", "company", "tags", "parts__supplier")
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
    thing["owner"] = _user(thing["owner_id"], ("manager",))
    thing["reviewer"] = _user(thing["reviewer_id"], ())
    thing["company"] = company_row(thing["company_id"])
    thing["tags"] = tag_rows(thing_id)
    thing["parts"] = part_rows(thing_id)
    thing["part_count"] = len(thing["parts"])
    return thing


@pytest.fixture(scope="module", params=selected(store=Store.SQL), ids=str)
async def target(request: pytest.FixtureRequest) -> AsyncIterator[Target]:
    async with open_target(request.param) as loaded:
        yield loaded


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

    def record(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(sync_engine, "before_cursor_execute", record)


async def _page(target: Target, query_string: str, load: tuple[str, ...]) -> list[dict[str, Any]]:
    resource = target.resources["things"]
    query = resource.parser.parse(parse_qsl(query_string), [])
    async with target.context() as context:
        call = ListContext(request=context.request, session=context.session, load=load)
        page = await resource.backend.fetch(query, call)
    return page.items


@pytest.mark.parametrize("ids", [(1, 4, 12, 13, 17, 21), (2, 3, 5, 6, 7, 9, 14, 16, 19)])
async def test_loaded_items_nest_every_relation_kind(target: Target, ids: tuple[int, ...]) -> None:
    items = await _page(target, f"id__in={','.join(map(str, ids))}&order_by=id", LOAD)
    assert items == [expected_thing(thing_id) for thing_id in ids]


async def test_no_load_gives_only_columns_and_computed_values(target: Target) -> None:
    items = await _page(target, "id=13", ())
    expected = expected_thing(13)
    assert items == [{key: expected[key] for key in (*THING_COLUMNS, "part_count")}]


async def test_statements_do_not_grow_with_the_page(target: Target) -> None:
    with counting(target) as small:
        await _page(target, "count=2&order_by=id", LOAD)
    with counting(target) as large:
        await _page(target, "count=20&order_by=id", LOAD)
    # Page, total, then one statement per to-many relation (tags, parts) for the whole page.
    assert len(small) == len(large) == 4, large
