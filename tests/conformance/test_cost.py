"""A list's cost is the same on every relational backend, and pricing it runs no statement.

Every request of the conformance table that parses is priced on the memory, SQLAlchemy and Piccolo
declarations of the same models: the cost reads the parsed query and the models' declared indexes only
(docs: admission, "The cost of a list"). The document store is left out: its resources filter their own
fields only, so their field maps differ.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from litestar_listing import InvalidQueryError, list_resource
from litestar_listing.backends.sqlalchemy import prepare_engine
from litestar_listing.backends.sqlalchemy.sqlite import read_engine
from litestar_listing.core.cost import cost_of
from litestar_listing.plugin.prepared import prepare
from tests.apps import serving
from tests.conformance.cases import CASES
from tests.conformance.targets import (
    memory_target,
    piccolo_backend,
    sqlalchemy_backend,
    things_resources,
    write_sqlalchemy_rows,
)
from tests.conftest import scratch_folder
from tests.matrix import selected


def test_every_parsed_request_costs_the_same_on_every_relational_backend() -> None:
    declarations = {
        "memory": memory_target().resources,
        "sqlalchemy": things_resources(sqlalchemy_backend),
        "piccolo": things_resources(piccolo_backend),
    }
    priced = 0
    for case in CASES:
        costs: dict[str, float] = {}
        for backend, resources in declarations.items():
            prepared = prepare(resources[case.resource])
            try:
                query = prepared.parser.parse(parse_qsl(case.query, keep_blank_values=True))
            except InvalidQueryError:
                continue
            costs[backend] = cost_of(query, prepared.field_map, prepared.cost_model).total  # ceilings aside
        if len(costs) == len(declarations):
            priced += 1
            assert len(set(costs.values())) == 1, f"{case.id}: {costs}"
    assert priced > 400  # most of the table parses on all three


@pytest.mark.skipif(not selected(backend="sqlalchemy", database="sqlite"), reason="SQLAlchemy on SQLite")
async def test_a_list_over_the_ceiling_is_refused_before_any_statement() -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{scratch_folder('listing-cost') / 'cost.sqlite'}")
    prepare_engine(engine)
    await write_sqlalchemy_rows(engine)
    statements: list[str] = []
    # Lists on a SQLite file run on the read engine beside the session's (docs: backends, "Lists on SQLite
    # run on connections of their own"): both are counted.
    for counted in (engine.sync_engine, read_engine(engine.sync_engine)):
        assert counted is not None
        event.listen(counted, "before_cursor_execute", lambda *arguments: statements.append(arguments[2]))
    things = things_resources(sqlalchemy_backend)["things"]
    capped = type(things)(**{**things.__dict__, "max_cost": 30.0})
    app = serving(capped)
    try:
        async with async_sessionmaker(engine)() as session:
            with pytest.raises(InvalidQueryError) as raised:
                await list_resource(
                    capped, None, [("search", "a"), ("order_by", "owner__name")], app=app, session=session
                )
            assert statements == []
            # search 21 (name, note, owner__name with its join, tags__name through a semi-join) + order_by 10
            # (a sort of two terms; the owner join is search's) + 1.05: 32.05; without search, within 30.
            assert [error.key for error in raised.value.errors] == ["search"]
            listed = await list_resource(capped, None, [("order_by", "name")], app=app, session=session)
            assert statements  # the same resource lists a list under the ceiling
            assert listed.pagination.total == 31
    finally:
        await engine.dispose()
