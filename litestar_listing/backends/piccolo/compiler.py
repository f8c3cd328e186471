"""Piccolo's primitives for the shared relational compiler: ``QueryString`` statements and conditions.

To-one paths follow Piccolo's foreign-key chains (``Thing.owner.role.code``): one LEFT JOIN alias per
path, named by Piccolo (``things$owner$users$role``). To-many paths (``M2M`` and declared reverse
keys) become semi-joins, ``<key> IN (SELECT <link> FROM <link table> ... WHERE ...)``: no row repeats
and totals stay exact (docs: design, "Relation paths"). They are uncorrelated on purpose: Piccolo cannot
alias a query's own table, so a correlated EXISTS over a self-referencing relation would bind the
inner table where the outer one was meant. For the same reason a facet's to-many rows are a derived
table, LEFT JOINed on its keys (``Joins``; docs: facets).

Statements are rendered from column metadata only, never through ``Table._meta.db``: the backend's
engine, not the process-wide one of ``piccolo_conf``, decides where they run.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from piccolo.columns import Column, ForeignKey
from piccolo.columns.combination import UNDEFINED, And, Or, Where, WhereRaw
from piccolo.querystring import QueryString
from piccolo.table import Table

from litestar_listing.backends._sqlite import FOLD_FUNCTION, is_ascii_sql
from litestar_listing.backends.piccolo.introspection import Relation, Tables
from litestar_listing.backends.relational.compiler import Continue, Reach, RelationalCompiler
from litestar_listing.backends.relational.databases import DATABASES, PLACEHOLDER, Database, database
from litestar_listing.backends.relational.shapes import Slot
from litestar_listing.core.fields import ValueType
from litestar_listing.core.query import ListQuery
from litestar_listing.core.text import LIKE_ESCAPE, LikePattern, fold_case

__all__ = (
    "QUERY_COMPILERS",
    "Anchor",
    "Compiled",
    "Dialect",
    "Joins",
    "QueryCompiler",
    "SQLiteQueryCompiler",
    "TableAlias",
    "engine_database",
    "opaque",
    "render_condition",
    "select_statement",
)


Dialect = Literal["sqlite", "postgres"]
Anchor = Any  # a Table class (the source's own table), a ForeignKey copy carrying its call chain, or a TableAlias
Place = tuple[type[Table], Anchor]  # a table and the anchor its columns are reached through

_TRUE = "1 = 1"
_FALSE = "1 = 0"


@dataclass(frozen=True, slots=True)
class TableAlias:
    """``table`` as a statement of one's own names it, ``FROM <table> AS "<name>"``: an anchor of its columns.

    Its columns render as ``"<name>"."<column>"`` and ask the enclosing statement for no join: a
    condition over them is over the rows that name reads, whatever the statement around it is.
    """

    table: type[Table]
    name: str

    def column(self, attribute: str) -> QueryString:
        """The column of ``table`` whose attribute name is ``attribute``, under the alias."""
        column = self.table._meta.get_column_by_name(attribute)
        return QueryString(f'"{self.name}"."{column._meta.db_column_name}"')


class Joins:
    """The joins of one statement besides those its columns' foreign-key chains ask for: a facet's LEFT JOINs.

    Args:
        prefix: The start of the aliases it names (``<prefix>0``, ``<prefix>1``...), unique in its statement.
    """

    __slots__ = ("items", "prefix")

    def __init__(self, prefix: str = "listing_many_") -> None:
        self.prefix = prefix
        self.items: list[QueryString] = []

    def alias(self) -> str:
        """A new alias of the statement."""
        return f"{self.prefix}{len(self.items)}"

    def add(self, item: QueryString, condition: QueryString) -> None:
        """``LEFT JOIN <item> ON <condition>``, after the joins so far."""
        self.items.append(QueryString("LEFT JOIN {} ON {}", item, condition))


@dataclass(frozen=True, slots=True)
class Derived:
    """``(<statement>) AS "<name>"``: a FROM item of a statement's rows."""

    statement: QueryString
    name: str


def driver_value(value: Any) -> Any:
    """A coerced value as the driver takes it: an enum by its value, else as it is (docs: design, "Coercion")."""
    return value.value if isinstance(value, enum.Enum) else value


@dataclass(frozen=True, slots=True)
class Compiled:
    """One statement as the driver runs it: its SQL, and its arguments with a ``Slot`` for each value left out.

    Compiled once per query shape (``shapes.shape_of``); ``bound`` gives each run its values.
    """

    sql: str
    template: tuple[Any, ...]

    @classmethod
    def of(cls, statement: QueryString, dialect: Dialect) -> Compiled:
        """``statement`` rendered for ``dialect`` (``$n`` parameters on PostgreSQL, ``?`` on SQLite)."""
        sql, arguments = statement.compile_string(engine_type=dialect)
        return cls(sql, tuple(arguments))

    def bound(self, values: Mapping[str, object]) -> tuple[str, list[Any]]:
        """``(sql, arguments)`` as ``QueryString.compile_string`` gives them, each ``Slot`` replaced by its value.

        Raises:
            KeyError: A slot has no value in ``values`` (by slot name).
        """
        return self.sql, [driver_value(values[part.name]) if isinstance(part, Slot) else part for part in self.template]


def opaque(querystring: QueryString) -> QueryString:
    """Wrap a subquery so that its columns do not ask the enclosing statement for joins."""
    wrapped = QueryString("{}", querystring)
    wrapped.columns = []
    return wrapped


def _conjunction(parts: Sequence[QueryString], operator: str) -> QueryString:
    if len(parts) == 1:
        return parts[0]
    return QueryString("(" + f" {operator} ".join("{}" for _ in parts) + ")", *parts)


def render_condition(condition: Any) -> QueryString:
    """A Piccolo condition (``Table.column.is_null()``, ``&``, ``|``, ``WhereRaw``) as a QueryString.

    Rendered without ``Column._meta.engine_type``, which would look the engine up in ``piccolo_conf``.

    Raises:
        TypeError: ``condition`` is not a Piccolo condition nor a ``QueryString``.
    """
    if isinstance(condition, QueryString):
        return condition
    if isinstance(condition, WhereRaw):
        return condition.querystring
    if isinstance(condition, (And, Or)):
        return QueryString(
            "({} " + condition.operator + " {})", render_condition(condition.first), render_condition(condition.second)
        )
    if isinstance(condition, Where):
        args: list[Any] = []
        if condition.value is not UNDEFINED:
            args.append(condition.value)
        if condition.values is not UNDEFINED:
            args.append(condition.get_values_querystring(condition.values))
        name = condition.column._meta.get_full_name(with_alias=False)
        rendered = QueryString(condition.operator.template.format(name=name, value="{}", values="{}"), *args)
        rendered.columns = [condition.column]
        return rendered
    msg = f"expected a Piccolo condition or QueryString, not {condition!r}"
    raise TypeError(msg)


def _joins(columns: Iterable[Column]) -> list[str]:
    """LEFT JOINs for the foreign-key chains of ``columns``, one per alias, in first-use order."""
    joins: dict[str, None] = {}
    for column in columns:
        chain: Sequence[ForeignKey[Any]] = column._meta.call_chain
        for index, key in enumerate(chain):
            left = f'"{chain[index - 1].table_alias}"' if index else f'"{key._meta.table._meta.tablename}"'
            meta = key._foreign_key_meta
            right = meta.resolved_references._meta.get_formatted_tablename()
            target = meta.resolved_target_column._meta.db_column_name
            alias = key.table_alias
            joins[f'LEFT JOIN {right} "{alias}" ON ({left}."{key._meta.db_column_name}" = "{alias}"."{target}")'] = None
    return list(joins)


def select_statement(
    table: type[Table],
    selected: Sequence[QueryString],
    *,
    where: QueryString | None = None,
    order: Sequence[QueryString] = (),
    limit: int | None = None,
    offset: int | Slot = 0,
    joined: Sequence[QueryString] = (),
    distinct: bool = False,
    grouped: int = 0,
) -> QueryString:
    """``SELECT [DISTINCT] <selected> FROM <table> <joins> [WHERE] [GROUP BY] [ORDER BY] [LIMIT OFFSET]``.

    The joins are those the columns of ``selected``, ``where``, ``order`` and ``joined`` need, then
    ``joined`` (``Joins.items``). ``grouped``: ``GROUP BY`` the first ``grouped`` columns, by position.
    """
    parts: list[QueryString] = [*selected, *([] if where is None else [where]), *order, *joined]
    columns = [column for part in parts for column in part.columns]
    # Only identifiers from the table metadata enter the template; every value is a parameter.
    from_table = table._meta.get_formatted_tablename()
    listed = ", ".join("{}" for _ in selected)
    template = f"SELECT {'DISTINCT ' if distinct else ''}{listed} FROM {from_table}"  # noqa: S608
    for join in _joins(columns):
        template += f" {join}"
    template += "".join(" {}" for _ in joined)
    args: list[Any] = [*selected, *joined]
    if where is not None:
        template += " WHERE {}"
        args.append(where)
    if grouped:
        template += f" GROUP BY {_positions(grouped)}"
    if order:
        template += " ORDER BY " + ", ".join("{}" for _ in order)
        args.extend(order)
    if limit is not None:
        # Parameters, not literals: SQLite plans a literal LIMIT/OFFSET worse (measured; docs: benchmarks).
        template += " LIMIT {} OFFSET {}"
        args.extend((int(limit), offset if isinstance(offset, Slot) else int(offset)))
    return QueryString(template, *args)


def _positions(count: int) -> str:
    """``1, 2...``: the first ``count`` columns selected, by position."""
    return ", ".join(str(position) for position in range(1, count + 1))


def _labelled(selected: Sequence[tuple[str, Any]]) -> list[QueryString]:
    return [QueryString(f'{{}} AS "{label}"', value) for label, value in selected]


def _column(anchor: Anchor, attribute: str) -> Column | QueryString:
    """The column ``attribute`` of the table at ``anchor``: through its joins, or under its alias (``TableAlias``)."""
    if isinstance(anchor, TableAlias):
        return anchor.column(attribute)
    return getattr(anchor, attribute)  # type: ignore[no-any-return]


class QueryCompiler(RelationalCompiler[Any, QueryString]):
    """Compiles queries for one table on PostgreSQL (the algorithm: ``RelationalCompiler``).

    Each other database has a subclass with its own SQL (``QUERY_COMPILERS``).

    Args:
        tables: The listed table and every table reachable from it.
        computed: Computed aliases mapped to SQL expressions (docs: computed).
        where: The base list query's condition, e.g. excluding soft-deleted rows (docs: soft delete).
    """

    dialect: ClassVar[Dialect] = "postgres"
    """Piccolo's engine type of the database it compiles for: how its statements are rendered."""

    def __init__(
        self,
        tables: Tables,
        computed: Mapping[str, QueryString],
        where: QueryString | None,
    ) -> None:
        self.tables = tables
        self.table = tables.root
        self.graph = tables.model_graph()
        self.computed = computed
        self.base_where = where

    # -- statements ---------------------------------------------------------------------------
    def rows_statement(self, query: ListQuery) -> QueryString:
        """``SELECT 1`` over the rows the total counts, for the planner's estimate of their number."""
        return select_statement(self.table, [QueryString("1")], where=self.where(None, query))

    def load_guard(self, query: ListQuery) -> Callable[[type[Table], Anchor], QueryString | None]:
        """The row policies of ``query`` for eager loading: a table's condition on its row at an anchor."""
        policies = self.policies(query)

        def guard(table: type[Table], anchor: Anchor) -> QueryString | None:
            condition: QueryString | None = self.policy_condition((table, anchor), table.__name__, policies)
            return condition

        return guard

    @property
    def database(self) -> Database:  # noqa: D102
        return DATABASES[self.dialect]

    def source(self) -> Joins:
        """The joins its columns do not ask for (a facet's); Piccolo derives the others (``select_statement``)."""
        return Joins()

    def total_statement(self, source: Joins | None, condition: QueryString | None) -> QueryString:  # noqa: D102
        return select_statement(self.table, [QueryString('COUNT(*) AS "total"')], where=condition)

    def page_statement(  # noqa: D102
        self,
        source: Joins | None,
        condition: QueryString | None,
        order: Sequence[QueryString],
        selected: Sequence[QueryString],
        labelled: Sequence[tuple[str, Any]],
        limit: int,
        offset: int | Slot | None,
    ) -> QueryString:
        columns = [*selected, *(QueryString(f'{{}} AS "{label}"', value) for label, value in labelled)]
        return select_statement(self.table, columns, where=condition, order=order, limit=limit, offset=offset or 0)

    def window_count(self) -> QueryString:  # noqa: D102
        return QueryString("COUNT(*) OVER ()")

    def keys_statement(  # noqa: D102
        self,
        source: Joins | None,
        condition: QueryString | None,
        order: Sequence[QueryString],
        limit: int | None,
        offset: int | Slot | None,
    ) -> QueryString:
        pk = self.table._meta.primary_key
        return select_statement(
            self.table, [QueryString("{}", pk)], where=condition, order=order, limit=limit, offset=offset or 0
        )

    def among_keys(self, keys: QueryString) -> QueryString:  # noqa: D102
        return QueryString("{} IN ({})", self.table._meta.primary_key, opaque(keys))

    def union_keys(self, statements: Sequence[QueryString]) -> QueryString:  # noqa: D102
        return QueryString(" UNION ALL ".join("{}" for _ in statements), *(opaque(item) for item in statements))

    def statement_value(self, statement: QueryString) -> QueryString:  # noqa: D102
        return QueryString("({})", opaque(statement))

    def capped_count(self, keys: QueryString, limit: int) -> QueryString:  # noqa: D102
        return QueryString(
            'SELECT COUNT(*) AS "total" FROM (SELECT 1 FROM ({}) AS "keys" LIMIT {}) AS "capped"', opaque(keys), limit
        )

    def listed_rows(  # noqa: D102
        self,
        source: Joins,
        condition: QueryString | None,
        selected: Sequence[tuple[str, Any]],
        *,
        distinct: bool = False,
        grouped: int = 0,
    ) -> QueryString:
        return select_statement(
            self.table, _labelled(selected), where=condition, joined=source.items, distinct=distinct, grouped=grouped
        )

    def derived(self, statement: QueryString, name: str) -> Derived:  # noqa: D102
        return Derived(statement, name)

    def derived_column(self, derived: Derived, label: str) -> QueryString:  # noqa: D102
        return QueryString(f'"{derived.name}"."{label}"')

    def from_derived(  # noqa: D102
        self,
        derived: Derived,
        selected: Sequence[tuple[str, Any]],
        *,
        grouped: int = 0,
        order: Sequence[QueryString] = (),
        limit: int | None = None,
    ) -> QueryString:
        labelled = _labelled(selected)
        # Only labels and the derived table's name, never a client's text, enter the template.
        template = "SELECT " + ", ".join("{}" for _ in labelled) + f' FROM ({{}}) AS "{derived.name}"'  # noqa: S608
        args: list[Any] = [*labelled, opaque(derived.statement)]
        if grouped:
            template += f" GROUP BY {_positions(grouped)}"
        if order:
            template += " ORDER BY " + ", ".join("{}" for _ in order)
            args.extend(order)
        if limit is not None:
            template += " LIMIT {}"
            args.append(int(limit))
        return QueryString(template, *args)

    # -- paths --------------------------------------------------------------------------------
    def start(self, source: Joins | None) -> Place:  # noqa: D102
        return self.table, self.table

    def relation(self, place: Place, name: str) -> Relation:  # noqa: D102
        return self.tables.info[place[0]].relations[name]

    def is_to_many(self, relation: Relation) -> bool:  # noqa: D102
        return relation.to_many

    def join(self, source: Joins | None, place: Place, steps: tuple[str, ...], relation: Relation) -> Place:  # noqa: D102
        # Piccolo names one alias per foreign-key chain (``things$owner$users$role``).
        return relation.target, getattr(place[1], relation.column._meta.name)

    def semi_join_one(self, place: Place, relation: Relation, inner: Continue) -> QueryString:  # noqa: D102
        key = _column(place[1], relation.column._meta.name)
        target = relation.column._foreign_key_meta.resolved_target_column
        condition = inner(None, (relation.target, relation.target), semi=True)
        subquery = select_statement(relation.target, [QueryString("{}", target)], where=condition)
        return QueryString("{} IN ({})", key, opaque(subquery))

    def semi_join_many(self, place: Place, relation: Relation, inner: Continue, *, semi: bool) -> QueryString:  # noqa: D102
        key = _column(place[1], relation.key._meta.name)
        # Inside, the path goes on from the related table: through the joining table's second key
        # for a many-to-many relation, from the related table itself for a reverse key.
        inner_anchor = relation.secondary if relation.secondary is not None else relation.target
        condition = inner(None, (relation.target, inner_anchor), semi=semi and relation.secondary is None)
        back = relation.column
        parts = [QueryString("{} IS NOT NULL", back)]
        if relation.secondary is not None:
            # The related table is LEFT JOINed to the joining table: a joining row whose key names no
            # row would read as a related row of NULLs, which a condition true for NULL would match.
            # A missing related row is none (docs: scoping), so the joined row must exist.
            target_key = relation.secondary._foreign_key_meta.resolved_target_column
            parts.append(QueryString("{} IS NOT NULL", getattr(inner_anchor, target_key._meta.name)))
        linked = self.all_of([*parts, condition])
        subquery = select_statement(relation.link_table, [QueryString("{}", back)], where=linked)
        return QueryString("{} IN ({})", key, opaque(subquery))

    def join_many(self, source: Joins, place: Place, relation: Relation, reach: Reach) -> QueryString:  # noqa: D102
        key = _column(place[1], relation.key._meta.name)
        # The related rows as ``semi_join_many`` reads them: through the joining table's second key for a
        # many-to-many relation, the related table itself for a reverse key.
        anchor = relation.secondary if relation.secondary is not None else relation.target
        inner = Joins(f"{source.prefix}{len(source.items)}_")
        value, allowed = reach(inner, (relation.target, anchor))
        back = relation.column
        parts = [QueryString("{} IS NOT NULL", back)]
        if relation.secondary is not None:
            # A joining row whose key names no row is no related row (the related table is LEFT JOINed).
            target_key = relation.secondary._foreign_key_meta.resolved_target_column
            parts.append(QueryString("{} IS NOT NULL", getattr(anchor, target_key._meta.name)))
        if allowed is not None:
            parts.append(allowed)
        selected = _labelled([("listing_owner", back), ("listing_value", value)])
        rows = select_statement(relation.link_table, selected, where=self.all_of(parts), joined=inner.items)
        name = source.alias()
        source.add(
            QueryString(f'({{}}) AS "{name}"', opaque(rows)), QueryString(f'"{name}"."listing_owner" = {{}}', key)
        )
        return QueryString(f'"{name}"."listing_value"')

    def join_sql(self, source: Joins, template: str, condition: QueryString, *values: Any) -> None:  # noqa: D102
        source.add(self.sql(template, ValueType.TEXT, *values), condition)

    def field(self, place: Place, name: str) -> Column | QueryString:
        """The column of field ``name`` of ``place``'s table, reached through its anchor's joins, or under its alias."""
        return _column(place[1], self.tables.info[place[0]].fields[name]._meta.name)

    def nullable_field(self, name: str) -> bool:  # noqa: D102
        return bool(self.tables.info[self.table].fields[name]._meta.null)

    # -- conditions and values ----------------------------------------------------------------
    def all_of(self, parts: Sequence[QueryString]) -> QueryString:  # noqa: D102
        return _conjunction(parts, "AND")

    def any_of(self, parts: Sequence[QueryString]) -> QueryString:  # noqa: D102
        return _conjunction(parts, "OR")

    def constant(self, *, value: bool) -> QueryString:  # noqa: D102
        return QueryString(_TRUE if value else _FALSE)

    def bind(self, value: Any, like: Any = None) -> Any:
        """A coerced value as the driver takes it (``driver_value``); a ``Slot`` stays until ``Compiled.arguments``."""
        return value if isinstance(value, Slot) else driver_value(value)

    def compare(self, left: Any, operator: str, right: Any) -> QueryString:  # noqa: D102
        return QueryString(f"{{}} {operator} {{}}", left, right)

    def row_compare(self, left: Sequence[Any], operator: str, right: Sequence[Any]) -> QueryString:  # noqa: D102
        marks = ", ".join("{}" for _ in left)
        return QueryString(f"({marks}) {operator} ({marks})", *left, *right)

    def among(self, column: Any, values: Sequence[Any], *, negate: bool) -> QueryString:  # noqa: D102
        marks = ", ".join("{}" for _ in values)
        return QueryString(f"{{}} {'NOT IN' if negate else 'IN'} ({marks})", column, *values)

    def guarded(self, value: Any, condition: QueryString) -> QueryString:  # noqa: D102
        return QueryString("(CASE WHEN {} THEN {} END)", condition, value)

    def is_null(self, value: Any, *, null: bool) -> QueryString:  # noqa: D102
        return QueryString("{} IS NULL" if null else "{} IS NOT NULL", value)

    def ordered(self, value: Any, *, descending: bool, nulls_last: bool) -> QueryString:  # noqa: D102
        direction = "DESC" if descending else "ASC"
        return QueryString(f"{{}} {direction}" + (" NULLS LAST" if nulls_last else ""), value)

    def like(self, column: Any, pattern: LikePattern) -> QueryString:  # noqa: D102
        return QueryString(f"{{}} LIKE {{}} ESCAPE '{LIKE_ESCAPE}'", column, pattern.to_like())

    def ilike(self, column: Any, pattern: LikePattern) -> QueryString:  # noqa: D102
        return QueryString(f"lower({{}}) LIKE lower({{}}) ESCAPE '{LIKE_ESCAPE}'", column, pattern.to_like())

    def sql(self, template: str, value_type: ValueType, *values: Any) -> QueryString:  # noqa: D102
        pieces = PLACEHOLDER.split(template)
        # Each place an expression appears takes it as an argument of its own, in order.
        text = "".join("{}" if index % 2 else piece for index, piece in enumerate(pieces))
        return QueryString(text, *(values[int(piece)] for piece in pieces[1::2]))

    def condition_sql(self, template: str, *values: Any) -> QueryString:  # noqa: D102
        return self.sql(template, ValueType.BOOLEAN, *values)


class SQLiteQueryCompiler(QueryCompiler):
    """``QueryCompiler`` on SQLite: case-sensitive ``like`` by ``GLOB``, case folding beyond ASCII.

    SQLite's ``LIKE`` ignores the case of ASCII letters and ``lower()`` folds ASCII only; Piccolo's
    ``ilike`` is a plain ``LIKE`` there.
    """

    dialect = "sqlite"

    def like(self, column: Any, pattern: LikePattern) -> QueryString:  # noqa: D102
        return QueryString("{} GLOB {}", column, pattern.to_glob())

    def ilike(self, column: Any, pattern: LikePattern) -> QueryString:  # noqa: D102
        # SQLite's LIKE on ASCII text (as many bytes as characters), the Python fold on the rest.
        like = f"LIKE {{}} ESCAPE '{LIKE_ESCAPE}'"
        template = f"(CASE WHEN {is_ascii_sql('{}')} THEN {{}} {like} ELSE {FOLD_FUNCTION}({{}}) {like} END)"
        folded = fold_case(pattern.to_like())
        return QueryString(template, column, column, column, folded, column, folded)


QUERY_COMPILERS: Mapping[str, type[QueryCompiler]] = MappingProxyType(
    {"sqlite": SQLiteQueryCompiler, "postgresql": QueryCompiler}
)
"""The query compiler of each supported database, by its name (``relational.databases``)."""


def engine_database(engine_type: str) -> Database:
    """The supported database of a Piccolo engine type (``relational.databases``), one of ``QUERY_COMPILERS``.

    Raises:
        ConfigurationError: Piccolo's ``engine_type`` is no database this backend runs on.
    """
    return database(engine_type, "PiccoloBackend", QUERY_COMPILERS)
