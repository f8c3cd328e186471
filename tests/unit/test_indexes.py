"""The index advisor's rules, its test of an existing index, and its DDL, on no database.

The expected needs and statements are written out by hand from the rules of the docs' indexes page.
"""

from __future__ import annotations

import pytest

from litestar_listing.backends.relational.databases import MARIADB, POSTGRESQL, SQLITE
from litestar_listing.backends.relational.indexes import (
    ExistingIndex,
    alembic_operation,
    create_index,
    existing_indexes,
    serving,
)
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.indexes import IndexKey, IndexKind, IndexNeed, index_needs, merge_needs, order_terms
from tests.unit.graph import field_map

ORDERED, TRIGRAM = IndexKind.ORDERED, IndexKind.TRIGRAM


class Storage:
    """The graph's entities as tables named in plural, relations by their key columns."""

    tables = {"Thing": "things", "User": "users", "Tag": "tags"}
    keys = {
        ("Thing", "owner"): ("things", ("owner_id",)),
        ("Thing", "tags"): ("thing_tags", ("thing_id",)),
        ("User", "boss"): ("users", ("boss_id",)),
        ("User", "things"): ("things", ("owner_id",)),
    }

    def table(self, entity: str) -> str:
        return self.tables[entity]

    def column(self, entity: str, field: str) -> str | None:
        return None if field == "computed" else field

    def row_key(self, entity: str) -> str | None:
        return "id" if entity == "Thing" else None  # things have an integer key, the others not

    def relation_key(self, entity: str, relation: str) -> tuple[str, tuple[str, ...]] | None:
        return self.keys.get((entity, relation))


def key(column: str, *, descending: bool = False, nullable: bool = False, lookup: bool = False) -> IndexKey:
    return IndexKey(column, descending=descending, nullable=nullable, lookup=lookup)


def test_the_needs_of_a_resource_follow_the_rules() -> None:
    fields = field_map(filter_fields=["*", "owner__*", "owner__boss__name", "tags__name"])
    orders = [order_terms(fields, ["name", "-weight"], argument="indexed_orders")]
    needs = index_needs("things", fields, Storage(), scopes=["owner_id", "owner__name"], orders=orders)
    at = key("at", descending=True, nullable=True)
    assert [(need.table, need.keys, need.kind, need.reasons) for need in needs] == [
        ("things", (at, key("id")), ORDERED, ("things: default order -at,id",)),
        (
            "things",
            (key("owner_id", lookup=True), at, key("id")),
            ORDERED,
            ("things: scope owner_id with the default order",),
        ),
        (
            "things",
            (key("name", nullable=True), key("weight", descending=True, nullable=True), key("id")),
            ORDERED,
            ("things: ordering name,-weight,id",),
        ),
        # Crossed by owner__*, owner__boss__name and tags__name, in the order first crossed.
        ("things", (key("owner_id", lookup=True),), ORDERED, ("things: relation Thing.owner",)),
        ("users", (key("boss_id", lookup=True),), ORDERED, ("things: relation User.boss",)),
        ("thing_tags", (key("thing_id", lookup=True),), ORDERED, ("things: relation Thing.tags",)),
        ("things", (key("name", nullable=True),), TRIGRAM, ("things: search name",)),
        ("users", (key("name", nullable=True),), TRIGRAM, ("things: search owner__name",)),
        ("tags", (key("name", nullable=True),), TRIGRAM, ("things: search tags__name",)),
    ]
    # A trigram need carries the integer key that names its table's rows on SQLite, where there is one.
    assert [need.row_key for need in needs if need.kind is TRIGRAM] == ["id", None, None]


def test_an_ordering_through_a_relation_needs_no_index_of_its_own() -> None:
    fields = field_map(default_order=["owner__name"])
    needs = index_needs("things", fields, Storage())
    assert all(need.reasons[0].startswith(("things: relation", "things: search")) for need in needs)


def test_indexed_orders_name_orderable_fields() -> None:
    with pytest.raises(ConfigurationError, match=r"indexed_orders: 'nope' is not an orderable field"):
        order_terms(field_map(), ["-nope"], argument="indexed_orders")


def test_needs_shared_by_resources_merge_their_reasons() -> None:
    first = IndexNeed("things", (key("owner_id", lookup=True),), reasons=("a: relation Thing.owner",))
    second = IndexNeed("things", (key("owner_id", lookup=True),), reasons=("b: relation Thing.owner",))
    other = IndexNeed("things", (key("owner_id", lookup=True),), TRIGRAM, ("c: search owner_id",))
    merged = merge_needs([first, second, other, first])
    assert [need.reasons for need in merged] == [("a: relation Thing.owner", "b: relation Thing.owner"), other.reasons]


def test_an_index_leads_the_needs_of_its_leading_keys() -> None:
    scoped = IndexNeed("things", (key("owner_id", lookup=True), key("at", descending=True), key("id")))
    assert scoped.leads(IndexNeed("things", (key("owner_id", lookup=True),)))
    assert scoped.leads(IndexNeed("things", (key("owner_id"),)))  # a lookup reads either direction
    assert not scoped.leads(IndexNeed("users", (key("owner_id", lookup=True),)))
    assert not scoped.leads(IndexNeed("things", (key("owner_id", lookup=True),), TRIGRAM))
    ordered = IndexNeed("things", (key("at", descending=True), key("id")))
    assert ordered.leads(IndexNeed("things", (key("at"), key("id", descending=True))))  # read backwards
    assert not ordered.leads(IndexNeed("things", (key("at"), key("id"))))
    nullable = IndexNeed("things", (key("at", descending=True, nullable=True), key("id")))
    # Backwards, NULLs would come first: an index does not serve the reversed ordering then.
    assert not nullable.leads(IndexNeed("things", (key("at", nullable=True), key("id", descending=True))))


def test_long_names_are_cut_with_a_hash() -> None:
    need = IndexNeed("a_table_with_a_long_name", tuple(key(f"column_number_{n}") for n in range(4)))
    assert len(need.name) == 63
    assert need.name.startswith("ix_a_table_with_a_long_name_column_number_0_column_num_")
    other = IndexNeed("a_table_with_a_long_name", tuple(key(f"column_number_{n}") for n in range(5)))
    assert other.name != need.name


DEP_DELAY = IndexNeed("flights", (key("dep_delay", descending=True, nullable=True), key("id")))


@pytest.mark.parametrize(
    ("database", "statement"),
    [
        (
            POSTGRESQL,
            "CREATE INDEX IF NOT EXISTS ix_flights_dep_delay_desc_id ON flights (dep_delay DESC NULLS LAST, id)",
        ),
        (SQLITE, "CREATE INDEX IF NOT EXISTS ix_flights_dep_delay_desc_id ON flights (dep_delay DESC, id)"),
        (MARIADB, "CREATE INDEX IF NOT EXISTS ix_flights_dep_delay_desc_id ON flights (dep_delay DESC, id)"),
    ],
    ids=["postgresql", "sqlite", "mariadb"],
)
def test_create_index_per_database(database: object, statement: str) -> None:
    assert create_index(DEP_DELAY, database) == (statement,)  # type: ignore[arg-type]


def test_trigram_indexes_on_postgresql_and_sqlite() -> None:
    need = IndexNeed("flights", (key("tailnum", nullable=True),), TRIGRAM, row_key="id")
    assert create_index(need, POSTGRESQL) == (
        "CREATE INDEX IF NOT EXISTS ix_flights_tailnum_trgm ON flights USING gin (lower(tailnum) gin_trgm_ops)",
    )
    assert alembic_operation(need, POSTGRESQL) == (
        (
            'op.create_index("ix_flights_tailnum_trgm", "flights", [sa.text("lower(tailnum) gin_trgm_ops")],'
            ' postgresql_using="gin")'
        ),
    )
    made = create_index(need, SQLITE)
    assert made[0] == (
        "CREATE VIRTUAL TABLE IF NOT EXISTS ix_flights_tailnum_trgm USING fts5(tailnum, content='flights',"
        " content_rowid='id', tokenize='trigram case_sensitive 1', detail=none)"
    )
    assert [statement.split(" ")[5] for statement in made[1:4]] == [
        "ix_flights_tailnum_trgm_insert",
        "ix_flights_tailnum_trgm_delete",
        "ix_flights_tailnum_trgm_update",
    ]
    assert made[4] == "INSERT INTO ix_flights_tailnum_trgm(ix_flights_tailnum_trgm) VALUES ('rebuild')"
    assert alembic_operation(need, SQLITE) == tuple(f"op.execute({statement!r})" for statement in made)
    # MariaDB has no trigram index; nor has SQLite a trigram table for a table without an integer key.
    assert create_index(need, MARIADB) == ()
    assert create_index(IndexNeed("planes", (key("model"),), TRIGRAM), SQLITE) == ()


def test_names_that_need_quotes_get_them() -> None:
    need = IndexNeed("Order Lines", (key("Line No", descending=True),))
    assert create_index(need, POSTGRESQL) == (
        'CREATE INDEX IF NOT EXISTS "ix_Order Lines_Line No_desc" ON "Order Lines" ("Line No" DESC)',
    )
    assert create_index(need, MARIADB) == (
        "CREATE INDEX IF NOT EXISTS `ix_Order Lines_Line No_desc` ON `Order Lines` (`Line No` DESC)",
    )


def test_alembic_operations_spell_columns_and_ordered_keys() -> None:
    assert alembic_operation(DEP_DELAY, POSTGRESQL) == (
        'op.create_index("ix_flights_dep_delay_desc_id", "flights", [sa.text("dep_delay DESC NULLS LAST"), "id"])',
    )
    assert alembic_operation(DEP_DELAY, SQLITE) == (
        'op.create_index("ix_flights_dep_delay_desc_id", "flights", [sa.text("dep_delay DESC"), "id"])',
    )


def test_catalog_rows_become_indexes_in_key_order() -> None:
    rows = [
        ("ix_a", "ordered", "dep_delay", True, False),
        ("ix_a", "ordered", "id", False, False),
        ("ix_b", "trigram", "lower((tailnum)::text)", False, False),
        ("ix_c", "other", 'lower("Name"::character varying)', False, False),
    ]
    assert existing_indexes(rows) == [
        ExistingIndex("ix_a", ORDERED, (("dep_delay", True, False), ("id", False, False))),
        ExistingIndex("ix_b", TRIGRAM, (("lower(tailnum)", False, False),)),
        ExistingIndex("ix_c", None, (("lower(Name)", False, False),)),
    ]


def _index(*keys: tuple[str, bool, bool], kind: IndexKind | None = ORDERED) -> ExistingIndex:
    return ExistingIndex("ix", kind, keys)


def test_an_existing_index_serves_a_need_as_the_listing_reads_it() -> None:
    # PostgreSQL: NULLs first in a descending key unless told; last in an ascending one.
    assert serving(DEP_DELAY, [_index(("dep_delay", True, False), ("id", False, False))])
    assert not serving(DEP_DELAY, [_index(("dep_delay", True, True), ("id", False, False))])
    # Read backwards: ascending with NULLs first (SQLite, MariaDB) is descending with NULLs last.
    assert serving(DEP_DELAY, [_index(("dep_delay", False, True), ("id", True, False))])
    assert not serving(DEP_DELAY, [_index(("dep_delay", False, False), ("id", True, False))])
    # Leading keys only, in the need's order; a longer index serves too.
    assert serving(DEP_DELAY, [_index(("dep_delay", True, False), ("id", False, False), ("x", False, False))])
    assert not serving(DEP_DELAY, [_index(("dep_delay", True, False))])
    assert not serving(DEP_DELAY, [_index(("id", False, False), ("dep_delay", True, False))])
    assert not serving(DEP_DELAY, [_index(("dep_delay", True, False), ("id", False, False), kind=None)])
    lookup = IndexNeed("flights", (key("carrier", lookup=True),))
    assert serving(lookup, [_index(("carrier", True, True), ("tailnum", False, False))])
    trigram = IndexNeed("flights", (key("tailnum", nullable=True),), TRIGRAM)
    assert serving(trigram, [_index(("lower(tailnum)", False, False), kind=TRIGRAM)])
    assert not serving(trigram, [_index(("tailnum", False, False), kind=TRIGRAM)])
    assert not serving(trigram, [_index(("lower(tailnum)", False, False))])
