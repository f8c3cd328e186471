"""The README's code: every ``python`` block is a file of ``docs/examples/readme/``, and each file runs.

``test_readme_blocks_are_the_files`` compares the text; the other tests import each file as the
README shows it and serve requests from it: SQLAlchemy on a SQLite file, Piccolo on this checkout's
PostgreSQL database (its pool opened and closed by the app's hooks), Beanie on the in-memory
document store. The expected ids are counted by hand from the rows written here.
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, cast

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import create_engine

from tests.conftest import postgres_database_url

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FILES = ("sqlalchemy_app", "piccolo_app", "beanie_app")

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


def test_readme_blocks_are_the_files() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", README.read_text(encoding="utf-8"), re.S | re.M)
    files = [(ROOT / "docs" / "examples" / "readme" / f"{name}.py").read_text(encoding="utf-8") for name in FILES]
    assert blocks == files


def fresh(name: str) -> ModuleType:
    """``docs/examples/readme/<name>.py`` imported anew (module-level state is per test)."""
    qualified = f"docs.examples.readme.{name}"
    sys.modules.pop(qualified, None)
    return importlib.import_module(qualified)


@asynccontextmanager
async def client_as(app: Litestar, user: object) -> AsyncIterator[AsyncTestClient[Any]]:
    """A client of ``app`` whose requests carry ``user`` in ``scope["user"]`` (what authentication sets)."""

    async def with_user(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and b"x-anonymous" not in dict(scope["headers"]):
            scope["user"] = user
        await app(scope, receive, send)

    async with AsyncTestClient(cast("Any", with_user)) as client:
        yield client


def pool_of(engine: Any) -> object:
    return engine.pool


def ids(body: Any) -> list[Any]:
    return [item["id"] for item in body["data"]]


async def test_sqlalchemy_snippet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the snippet's database is ./app.sqlite
    module = fresh("sqlalchemy_app")
    engine = create_engine("sqlite:///app.sqlite")
    module.Base.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO airlines VALUES ('UA', 'United Air Lines Inc.'), ('AA', 'American Airlines Inc.')"
        )
        connection.exec_driver_sql(
            "INSERT INTO flights (id, tailnum, time_hour, carrier) VALUES"
            " (1, 'N14228', '2013-01-01 05:00:00.000000', 'UA'), (2, 'N619AA', '2013-01-01 06:00:00.000000', 'AA'),"
            " (3, 'N24211', '2013-01-02 07:00:00.000000', 'UA')"
        )
    engine.dispose()
    async with client_as(module.app, SimpleNamespace(carrier="UA", is_platform_admin=False)) as client:
        body = (await client.get("/api/v1/flights/", params={"carrier": "AA"})).json()
        assert ids(body) == [3, 1]  # UA only, newest first; the client's carrier=AA is dropped
        assert body["data"][0]["airline"] == {"carrier": "UA", "name": "United Air Lines Inc."}
        assert ids((await client.get("/api/v1/flights/?search=n142")).json()) == [1]
        assert ids((await client.get("/api/v1/flights/?order_by=airline__name,id")).json()) == [1, 3]
        assert (await client.get("/api/v1/flights/", headers={"x-anonymous": "1"})).status_code == 401


async def test_piccolo_snippet(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("asyncpg")
    # A database of this process's own: the sessions without a database server of their own (other
    # Pythons, dependency floors) run this test at the same time, and each drops what it created.
    monkeypatch.setenv("DATABASE_URL", postgres_database_url(f"listing_readme_{os.getpid()}"))
    module = fresh("piccolo_app")
    tables = (module.Owner, module.Tag, module.Thing, module.ThingTag, module.Part)
    engine = module.engine
    for table in reversed(tables):
        await table.alter().drop_table(if_exists=True)
    for table in tables:
        await table.create_table()
    await module.Owner.insert(module.Owner(id=1, name="Ann"), module.Owner(id=2, name="Bob"))
    await module.Tag.insert(module.Tag(id=1, name="red"), module.Tag(id=2, name="blue"))
    deleted = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    await module.Thing.insert(
        module.Thing(id=1, name="Alpha", owner=1),
        module.Thing(id=2, name="Beta", owner=2),
        module.Thing(id=3, name="Gamma", owner=1, deleted_at=deleted),
    )
    await module.ThingTag.insert(module.ThingTag(thing=1, tag=1), module.ThingTag(thing=2, tag=2))
    await module.Part.insert(module.Part(name="bolt", thing=1), module.Part(name="nut", thing=1))
    assert pool_of(engine) is None
    async with AsyncTestClient(module.app) as client:
        assert pool_of(engine) is not None  # opened by the app's start-up hook
        body = (await client.get("/api/v1/things/?order_by=id")).json()
        assert [(item["id"], item["part_count"]) for item in body["data"]] == [(1, 2), (2, 0)]  # 3 is deleted
        assert ids((await client.get("/api/v1/things/?tags__name=blue")).json()) == [2]
        assert ids((await client.get("/api/v1/things/?parts__name=nut")).json()) == [1]
        assert ids((await client.get("/api/v1/things/?search=bob")).json()) == [2]
    assert pool_of(engine) is None  # closed by the shutdown hook


async def test_beanie_snippet() -> None:
    pytest.importorskip("beanie")
    pytest.importorskip("mongomock_motor")
    from tests.document_store.mongomock_adapter import mongomock_client

    module = fresh("beanie_app")
    setattr(module, "client", mongomock_client())  # noqa: B010 - the store the start hook reads, not a server
    async with AsyncTestClient(module.app):  # started: Beanie is initialised on the store
        acme = await module.Company(name="Acme").insert()
        globex = await module.Company(name="Globex").insert()
        ann = await module.User(name="Ann").insert()
        for title, company, labels, meta in (
            ("Groceries", acme, ["home"], {"color": "red"}),
            ("Budget", acme, ["work", "money"], {}),
            ("Roadmap", globex, ["work"], {"color": "red"}),
        ):
            await module.Note(title=title, labels=labels, meta=meta, owner=ann, company=company).insert()
        deleted = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
        await module.Note(title="Old", owner=ann, company=acme, deleted_at=deleted).insert()
    user = SimpleNamespace(company_id=acme.id, is_platform_admin=False)
    async with client_as(module.app, user) as client:
        body = (await client.get("/api/v1/notes/?order_by=-label_count")).json()
        assert [item["title"] for item in body["data"]] == ["Budget", "Groceries"]  # Acme's, not deleted
        assert [item["title"] for item in (await client.get("/api/v1/notes/?meta.color=red")).json()["data"]] == [
            "Groceries"
        ]
        assert (await client.get("/api/v1/notes/?search=ann")).json()["pagination"]["total"] == 2
        assert (await client.get("/api/v1/notes/", headers={"x-anonymous": "1"})).status_code == 401
