"""The conformance data set as plain Python: the same rows for the memory backend and every database.

The expectations in ``cases.py`` were computed by hand from these rows; change one and recompute.
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import Table

from tests.conformance.models import (
    Company,
    ConformanceBase,
    Part,
    Role,
    Status,
    Tag,
    Thing,
    User,
    thing_tags,
)

__all__ = (
    "ATTRIBUTES",
    "COMPANIES",
    "DELETED_IDS",
    "MISSING",
    "PARTS",
    "PROFILES",
    "ROLES",
    "TAGS",
    "THINGS",
    "THING_TAGS",
    "USERS",
    "company_row",
    "dangling_rows",
    "memory_rows",
    "orm_objects",
    "part_rows",
    "role_row",
    "table_rows",
    "tag_rows",
)


def _at(text: str) -> dt.datetime:
    """An aware UTC datetime from ``YYYY-MM-DD HH:MM:SS``."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)


_D = Decimal
_DAY = dt.date

# Companies: id, name, founded (a date a relation path reaches, for the date parts).
COMPANIES: tuple[tuple[int, str, dt.date | None], ...] = (
    (1, "Acme", dt.date(1999, 3, 15)),
    (2, "Globex", dt.date(1989, 12, 31)),
    (3, "Initech", None),
    (4, "Umbrella", dt.date(2001, 9, 9)),  # owns no thing; only supplies parts
)

# The JSON documents (``Company.profile``, ``Thing.attributes``) by id; a missing id is SQL NULL.
# Declared keys: profile {tier: str, regions: list[str]}; attributes {color: str, size: int,
# ratio: float, fragile: bool, released: date, tags: list[str], dims: {width: float, unit: str}}.
# Values of another type than declared, JSON null and missing keys read as NULL.
PROFILES: dict[int, Any] = {
    1: {"tier": "gold", "regions": ["eu", "us"]},
    2: {"tier": "silver", "regions": ["us"]},
    4: {"tier": "gold", "regions": "eu"},  # not a list
}
ATTRIBUTES: dict[int, Any] = {
    1: {
        "color": "red", "size": 42, "ratio": 0.5, "fragile": True, "released": "2024-03-01",
        "tags": ["new", "sale"], "dims": {"width": 10.5, "unit": "cm"},
    },
    2: {
        "color": "Red", "size": 7, "ratio": 2, "fragile": False, "released": "2023-12-31",
        "tags": ["sale"], "dims": {"width": 3},
    },
    3: {"color": "blue", "size": "42", "tags": [], "dims": {"width": None}},
    4: {"color": None, "size": 42.0, "fragile": "yes", "released": "soon", "tags": ["new", 5, None, "clearance"]},
    5: {"color": "ΩMEGA", "size": -3, "released": "2024-02-30", "tags": "sale", "dims": "wide"},
    6: {"size": 100, "ratio": 12.75, "released": "2025-01-01", "tags": ["Sale"], "dims": {"width": 0}},
    7: {"color": ["red", "crimson"], "dims": [{"width": 10.5, "unit": "mm"}]},  # arrays a dotted path reaches into
    9: {"color": "green", "size": 9007199254740993, "tags": ["new"]},
    10: {"color": "red", "size": 42, "fragile": True, "dims": {"width": 10.5, "unit": "mm"}},
}  # fmt: skip

# Roles: id, code, label.
ROLES: tuple[tuple[int, str, str | None], ...] = (
    (1, "admin", "Administrator"),
    (2, "dev", None),
    (3, "ops", "Operations"),
)

# Users: id, name, email, company_id, role_id, manager_id, password_hash.
# Manager chains: Frank(6) -> Carol(3) -> Bob(2) -> Alice(1); Eve(5) -> Dave(4); Zoë(7) -> Dave(4);
# alice(8) -> Alice(1). Carol, Eve have no role; Alice, Dave have no manager; Frank has no company.
# Every manager has a smaller id than the users they manage, so rows insert in id order.
USERS: tuple[tuple[int, str, str | None, int | None, int | None, int | None, str], ...] = (
    (1, "Alice", "alice@acme.test", 1, 1, None, "hash-alice"),
    (2, "Bob", "bob@acme.test", 1, 2, 1, "hash-bob"),
    (3, "Carol", None, 1, None, 2, "hash-carol"),
    (4, "Dave", "dave@globex.test", 2, 3, None, "hash-dave"),
    (5, "Eve", "eve@globex.test", 2, None, 4, "hash-eve"),
    (6, "Frank", None, None, 2, 3, "hash-frank"),
    (7, "Zoë", "ZOE@initech.test", 3, 1, 4, "hash-zoe"),
    (8, "alice", None, 1, 3, 1, "hash-alice-2"),
)

# Tags: id, name.
TAGS: tuple[tuple[int, str], ...] = (
    (1, "red"),
    (2, "blue"),
    (3, "Green"),
    (4, "50%_off"),
    (5, "Ωmega"),
    (6, "RED"),
)

# Things: id, name, status, quantity, weight, price, active, release_date, created_at, uid, note,
# then owner_id, reviewer_id, company_id, deleted_at.
# fmt: off
THINGS: tuple[tuple[Any, ...], ...] = (
    (1, "Álbum", "active", 10, 1.5, _D("10.00"), True, _DAY(2024, 1, 15), _at("2024-03-01 10:00:00"),
     uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e"), "Classic record", 1, 2, 1, None),
    (2, "álbum", "draft", 5, 2.5, _D("10.50"), True, _DAY(2024, 2, 29), _at("2024-03-01 10:00:00"),
     uuid.UUID("7c9e6679-7425-40de-944b-e07fc1f90ae7"), "lowercase twin", 2, None, 1, None),
    (3, "ÁLBUM", "archived", 0, 0.0, _D("0.00"), False, _DAY(2023, 12, 31), _at("2024-03-01 10:00:00"),
     None, None, 3, 3, 1, None),
    (4, "Straße", "active", 7, 3.25, _D("19.99"), True, _DAY(2024, 6, 15), _at("2024-02-15 08:30:00"),
     uuid.UUID("16fd2706-8baf-433b-82eb-8c7fada847da"), "German street", 4, 5, 2, None),
    (5, "STRASSE", "active", 7, 3.25, _D("19.99"), None, None, _at("2024-02-15 08:30:00"),
     None, "caps, no eszett", 5, 4, 2, None),
    (6, "Ωμέγα", "draft", 12, 0.5, _D("5.00"), True, _DAY(2024, 4, 1), _at("2024-04-01 00:00:00"),
     uuid.UUID("886313e1-3b8a-5372-9b90-0c9aee199e5d"), "Greek letter", 7, 7, 3, None),
    (7, "100% cotton", "active", 100, 1.25, _D("25.00"), True, _DAY(2024, 5, 5), _at("2024-03-10 12:30:00"),
     uuid.UUID("a8098c1a-f86e-11da-bd1a-00112444be1e"), "50% off", 1, 4, 1, None),
    (8, "100 percent", "active", 100, 1.25, _D("25.00"), False, _DAY(2024, 5, 5), _at("2024-03-10 12:30:01"),
     None, "no percent sign", 2, None, 1, None),
    (9, "snake_case", "draft", -3, -1.5, _D("9.99"), False, _DAY(2024, 1, 1), _at("2024-01-01 00:00:00"),
     uuid.UUID("e902893a-9d22-3c7e-a7b8-d6e313b71d9f"), "under_score", 6, 1, 1, None),
    (10, "snakeXcase", "draft", 3, 1.5, _D("9.99"), True, _DAY(2024, 1, 2), _at("2023-12-31 23:59:59"),
     None, "underXscore", 6, 6, 2, None),
    (11, "back\\slash", "archived", 1, 4.0, _D("1.00"), None, _DAY(2023, 6, 30), _at("2023-06-30 15:00:00"),
     uuid.UUID("3f333df6-90a4-4fda-8dd3-9485d27cee36"), "C:\\temp", 8, None, 2, None),
    (12, "O'Brien's", "active", 2, None, _D("12.00"), True, None, _at("2024-05-20 06:00:00"),
     None, "single 'quotes'", 4, 2, 2, None),
    (13, 'say "hi"', "active", 2, 2.0, None, False, _DAY(2024, 7, 4), _at("2024-05-20 06:00:00"),
     uuid.UUID("9b2e6f7a-0c4d-4e1f-8a3b-5c6d7e8f9a0b"), 'double "quotes"', None, 1, 1, None),
    (14, "Widget", "active", 20, 2.0, _D("15.00"), True, _DAY(2024, 3, 15), _at("2024-03-15 09:00:00"),
     None, None, None, None, 1, None),
    (15, "widget", "draft", 20, None, _D("15.00"), None, _DAY(2024, 3, 15), _at("2024-03-15 09:00:00"),
     uuid.UUID("c56a4180-65aa-42ec-a945-5fd21dec0538"), "", 5, None, 2, None),
    (16, "Widget", "archived", None, 2.0, _D("15.00"), False, _DAY(2024, 3, 16), _at("2024-03-15 09:00:00"),
     None, "Widget again", 1, 1, 3, None),
    (17, "Gadget", None, None, None, None, None, None, _at("2024-01-20 18:45:00"),
     None, None, None, None, 1, None),
    (18, None, "active", 8, 1.0, _D("8.00"), True, _DAY(2024, 2, 1), _at("2024-02-01 12:00:00"),
     uuid.UUID("5e2c9b1a-7f3d-4c8e-9a6b-1d2e3f4a5b6c"), "nameless", 3, 5, 1, None),
    (19, None, None, None, None, None, None, None, _at("2024-02-01 12:00:00"),
     None, None, None, None, 2, None),
    (20, "", "draft", 0, 0.0, _D("0.00"), False, _DAY(2024, 1, 1), _at("2023-11-11 11:11:11"),
     None, "empty name", 7, None, 3, None),
    (21, "Zeta", "active", 9007199254740993, 100.5, _D("99.99"), True, _DAY(2025, 1, 1),
     _at("2024-06-01 00:00:00"), uuid.UUID("d4c3b2a1-0f9e-4d8c-b7a6-958473625140"),
     "big quantity", 8, 3, 1, None),
    (22, "alpha", "active", 4, 0.75, _D("4.50"), True, _DAY(2024, 8, 8), _at("2024-06-01 00:00:00"),
     None, "ALPHA lower", 2, 4, 2, None),
    (23, "Alpha", "draft", 4, 0.75, _D("4.50"), False, _DAY(2024, 8, 8), _at("2024-06-02 00:00:00"),
     None, "alpha upper", 3, None, 3, None),
    (24, "éclair", "active", 6, 0.25, _D("3.50"), True, _DAY(2024, 9, 9), _at("2024-07-01 07:00:00"),
     uuid.UUID("1b4e28ba-2fa1-4d2b-883f-0016d3cca427"), "Über sweet", 5, 2, 2, None),
    (25, "Gizmo", "archived", 15, 5.5, _D("30.00"), True, _DAY(2024, 10, 10), _at("2024-07-15 16:00:00"),
     None, "über gadget", 6, 8, 1, None),
    (26, "gizmo", "active", 15, 5.5, _D("30.00"), None, _DAY(2024, 10, 10), _at("2024-07-15 16:00:00"),
     None, "ÜBER", 7, 7, 3, None),
    (27, "Doohickey", "draft", 1, 9.75, _D("7.25"), True, _DAY(2023, 3, 3), _at("2023-03-03 03:03:03"),
     uuid.UUID("6fa459ea-ee8a-3ca4-894e-db77e160355e"), 'it\'s "mixed"', 8, 1, 2, None),
    (28, "Thingamajig", "active", 50, 12.0, _D("100.00"), False, _DAY(2024, 11, 11),
     _at("2024-08-01 00:00:00"), None, "Ωmega fan", 1, 5, 1, None),
    (29, "Sprocket", "archived", 3, 1.0, _D("2.00"), False, _DAY(2024, 2, 2), _at("2024-02-02 02:00:00"),
     None, "retired", 2, None, 1, _at("2024-09-01 00:00:00")),
    (30, "Cog", "active", 3, 1.0, _D("2.00"), True, _DAY(2024, 2, 2), _at("2024-03-01 10:00:00"),
     None, "gone", None, None, 2, _at("2024-09-02 00:00:00")),
    (31, "Flange", "draft", 2, 1.0, _D("2.00"), True, None, _at("2024-09-03 00:00:00"),
     None, None, 7, None, 3, _at("2024-09-03 00:00:00")),
)
# fmt: on

_THING_COLUMNS = (
    "id", "name", "status", "quantity", "weight", "price", "active", "release_date", "created_at", "uid",
    "note", "owner_id", "reviewer_id", "company_id", "deleted_at",
)  # fmt: skip

DELETED_IDS = frozenset(row[0] for row in THINGS if row[-1] is not None)
"""Things with ``deleted_at`` set: absent from the ``things_live`` resource."""

MISSING = 99
"""The id of no tag and of no company: the rows that refer to it dangle.

A related row that is missing reads exactly like a hidden one (docs: query language, "Relation
paths"; scoping, "Row policies"): a to-many path sees only the related rows that exist, so a link
row to no tag is no tag of its thing; a to-one path to no row reads NULL. Such rows are written with the
database's foreign-key checks off (SQLite without ``PRAGMA foreign_keys``, PostgreSQL's
``session_replication_role = replica``). Read by that rule they change no answer the cases held
before them: things 2 and 3 keep the tags they had (red, none), and part 8's supplier still reads
NULL (it had none). The ``missing:*`` cases pin the rule itself.
"""

# Thing tags: thing_id, tag_id. Two link rows to no tag: thing 2's only other tag is red, thing 3 has none.
THING_TAGS: tuple[tuple[int, int], ...] = (
    (1, 1), (1, 2),
    (2, 1), (2, MISSING),
    (3, MISSING),
    (4, 3),
    (5, 3), (5, 6),
    (6, 5),
    (7, 4), (7, 1),
    (9, 2),
    (12, 1), (12, 2), (12, 3),
    (14, 6),
    (16, 2),
    (21, 1), (21, 2), (21, 3), (21, 4),
    (24, 5),
    (26, 3),
    (28, 2),
    (29, 1),
    (30, 3),
)  # fmt: skip

# Parts: id, thing_id, name, quantity, supplier_id. Part 8's supplier is missing (thing 7's only part).
PARTS: tuple[tuple[int, int, str, int | None, int | None], ...] = (
    (1, 1, "bolt", 10, 4),
    (2, 1, "nut", 20, None),
    (3, 2, "bolt", 5, 2),
    (4, 4, "gear", None, 4),
    (5, 4, "Gear", 3, 3),
    (6, 4, "spring_coil", 1, None),
    (7, 6, "Ωring", 2, 1),
    (8, 7, "thread%", 100, MISSING),
    (9, 9, "nut", 0, 4),
    (10, 12, "lever", 7, 2),
    (11, 12, "bolt", 1, 2),
    (12, 14, "cam", 2, None),
    (13, 16, "cam", 3, 4),
    (14, 21, "axle", 4, 1),
    (15, 21, "bolt", 8, None),
    (16, 21, "nut", 8, 3),
    (17, 21, "washer", None, 4),
    (18, 25, "Spring", 2, 3),
    (19, 29, "sprocket tooth", 12, 1),
    (20, 13, "O'ring", 1, None),
)


_USER_COLUMNS = ("id", "name", "email", "company_id", "role_id", "manager_id", "password_hash")


def company_row(company_id: int | None) -> dict[str, Any] | None:
    """The company ``company_id`` as a dict, or None."""
    for row in COMPANIES:
        if row[0] == company_id:
            return {"id": row[0], "name": row[1], "founded": row[2], "profile": PROFILES.get(row[0])}
    return None


def role_row(role_id: int | None) -> dict[str, Any] | None:
    """The role ``role_id`` as a dict, or None."""
    for row in ROLES:
        if row[0] == role_id:
            return {"id": row[0], "code": row[1], "label": row[2]}
    return None


def _user(user_id: int | None, depth: int) -> dict[str, Any] | None:
    """A user row with its company and role, and its manager while ``depth`` (relations crossed so far) is below 3.

    The company is there at every depth: a row policy that follows it (a user visible when its
    company is) reads it wherever a user is reached.
    """
    for row in USERS:
        if row[0] != user_id:
            continue
        user: dict[str, Any] = dict(zip(_USER_COLUMNS, row, strict=True))
        user["company"] = company_row(user["company_id"])
        user["role"] = role_row(user["role_id"])
        if depth < 3:
            user["manager"] = _user(user["manager_id"], depth + 1)
        return user
    return None


def part_rows(thing_id: int) -> list[dict[str, Any]]:
    """The parts of thing ``thing_id`` in id order, each with its ``supplier`` nested."""
    return [
        {
            "id": part_id,
            "thing_id": owner,
            "name": name,
            "quantity": quantity,
            "supplier_id": supplier_id,
            "supplier": company_row(supplier_id),
        }
        for part_id, owner, name, quantity, supplier_id in PARTS
        if owner == thing_id
    ]


def tag_rows(thing_id: int) -> list[dict[str, Any]]:
    """The tags of thing ``thing_id`` in id order (a link row to no tag links none)."""
    wanted = [tag_id for owner, tag_id in THING_TAGS if owner == thing_id]
    return [{"id": tag_id, "name": name} for tag_id, name in TAGS if tag_id in wanted]


def _linked_tags(thing_id: int) -> list[dict[str, Any] | None]:
    """The tags of thing ``thing_id`` as the memory backend takes them: a None for each link row to no tag."""
    tag_ids = {tag_id for tag_id, _ in TAGS}
    dangling = [None for owner, tag_id in THING_TAGS if owner == thing_id and tag_id not in tag_ids]
    return [*tag_rows(thing_id), *dangling]


def memory_rows() -> list[dict[str, Any]]:
    """One dict per thing, relations nested, for the memory backend.

    Returns:
        Rows with every column of ``Thing`` (``status`` as its string value, datetimes aware UTC),
        ``owner``/``reviewer``/``company`` as nested dicts or None (users nested to three relations
        from the thing: ``owner.manager.role``), ``tags`` and ``parts`` as lists of dicts (a part
        with its ``supplier``, None when missing; a tag link to no tag as None in ``tags``), and
        the computed ``part_count``.
    """
    rows: list[dict[str, Any]] = []
    for values in THINGS:
        row: dict[str, Any] = dict(zip(_THING_COLUMNS, values, strict=True))
        row["attributes"] = ATTRIBUTES.get(row["id"])
        row["owner"] = _user(row["owner_id"], 1)
        row["reviewer"] = _user(row["reviewer_id"], 1)
        row["company"] = company_row(row["company_id"])
        row["tags"] = _linked_tags(row["id"])
        row["parts"] = part_rows(row["id"])
        row["part_count"] = len(row["parts"])
        rows.append(row)
    return rows


def table_rows(*, dangling: bool = True) -> list[tuple[Table, list[dict[str, Any]]]]:
    """Every table with its rows as column dicts, parents before children.

    For ``session.execute(insert(table), rows)``; ``status`` is a ``Status`` member. ``dangling``:
    include the rows that refer to a missing row (``MISSING``), which only a database that does not
    check foreign keys takes; False: every other row (``dangling_rows`` gives those).
    """

    def columns(names: tuple[str, ...], data: tuple[tuple[Any, ...], ...]) -> list[dict[str, Any]]:
        return [dict(zip(names, row, strict=True)) for row in data]

    things = columns(_THING_COLUMNS, THINGS)
    for thing in things:
        thing["attributes"] = ATTRIBUTES.get(thing["id"])
        thing["status"] = None if thing["status"] is None else Status(thing["status"])
    tables = ConformanceBase.metadata.tables
    every = [
        (
            tables["companies"],
            [{**row, "profile": PROFILES.get(row["id"])} for row in columns(("id", "name", "founded"), COMPANIES)],
        ),
        (tables["roles"], columns(("id", "code", "label"), ROLES)),
        (
            tables["users"],
            columns(_USER_COLUMNS, USERS),
        ),
        (tables["tags"], columns(("id", "name"), TAGS)),
        (tables["things"], things),
        (thing_tags, columns(("thing_id", "tag_id"), THING_TAGS)),
        (tables["parts"], columns(("id", "thing_id", "name", "quantity", "supplier_id"), PARTS)),
    ]
    if dangling:
        return every
    return [(table, [row for row in rows if not _dangles(table, row)]) for table, rows in every]


def dangling_rows() -> list[tuple[Table, list[dict[str, Any]]]]:
    """The rows of ``table_rows`` that refer to a missing row, by table (those with none left out)."""
    every = table_rows()
    dangling = [(table, [row for row in rows if _dangles(table, row)]) for table, rows in every]
    return [(table, rows) for table, rows in dangling if rows]


def _dangles(table: Table, row: dict[str, Any]) -> bool:
    """Whether a foreign key of ``row`` names a row its table does not hold (``MISSING``)."""
    return any(row[key.parent.name] == MISSING for key in table.foreign_keys)


def orm_objects() -> list[object]:
    """Model instances of the whole data set, parents before children, for ``session.add_all``.

    Foreign keys are set as columns; only ``Thing.tags`` is set through the relation (it fills the
    association table), so the link rows to no tag are not among them (``table_rows`` has them).
    """
    tags = {tag_id: Tag(id=tag_id, name=name) for tag_id, name in TAGS}
    objects: list[object] = [
        Company(id=company_id, name=name, founded=founded, profile=PROFILES.get(company_id))
        for company_id, name, founded in COMPANIES
    ]
    objects += [Role(id=role_id, code=code, label=label) for role_id, code, label in ROLES]
    objects += [
        User(
            id=user_id,
            name=name,
            email=email,
            company_id=company_id,
            role_id=role_id,
            manager_id=manager_id,
            password_hash=password_hash,
        )
        for user_id, name, email, company_id, role_id, manager_id, password_hash in USERS
    ]
    objects += tags.values()
    for values in THINGS:
        data = dict(zip(_THING_COLUMNS, values, strict=True))
        data["status"] = None if data["status"] is None else Status(data["status"])
        thing = Thing(**data, attributes=ATTRIBUTES.get(data["id"]))
        thing.tags = [tags[tag_id] for owner, tag_id in THING_TAGS if owner == data["id"] and tag_id in tags]
        objects.append(thing)
    objects += [
        Part(id=part_id, thing_id=thing_id, name=name, quantity=quantity, supplier_id=supplier_id)
        for part_id, thing_id, name, quantity, supplier_id in PARTS
    ]
    return objects
