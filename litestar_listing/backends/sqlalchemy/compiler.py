"""SQLAlchemy's primitives for the shared relational compiler: ``Select`` statements and column expressions.

To-one paths join with one LEFT OUTER JOIN alias per path; to-many paths become correlated EXISTS
subqueries, so no row repeats and totals are exact (docs: design, "Relation paths"). A facet's
to-many rows are a derived table LEFT JOINed on its keys (docs: facets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import Any, ClassVar
from typing import cast as cast_type

from sqlalchemy import (
    BigInteger,
    BindParameter,
    Boolean,
    ClauseList,
    ColumnElement,
    CompoundSelect,
    Float,
    Integer,
    LargeBinary,
    Numeric,
    Select,
    String,
    Subquery,
    TableClause,
    Uuid,
    and_,
    bindparam,
    case,
    cast,
    exists,
    false,
    func,
    inspect,
    literal,
    literal_column,
    or_,
    select,
    true,
    tuple_,
    union_all,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import aliased
from sqlalchemy.sql import operators
from sqlalchemy.sql.visitors import InternalTraversal

from litestar_listing.backends._sqlite import FOLD_FUNCTION
from litestar_listing.backends.relational.compiler import Continue, Reach, RelationalCompiler
from litestar_listing.backends.relational.databases import DATABASES, PLACEHOLDER, Database
from litestar_listing.backends.relational.shapes import Slot
from litestar_listing.backends.sqlalchemy.introspection import attribute_key, model_graph
from litestar_listing.core.fields import ValueType
from litestar_listing.core.query import ListQuery
from litestar_listing.core.text import LIKE_ESCAPE, LikePattern, fold_case

__all__ = ("STATEMENT_COMPILERS", "MariaDBStatementCompiler", "SQLiteStatementCompiler", "StatementCompiler")


Entity = Any  # a mapped class or an AliasedClass of one
Place = tuple[Entity, tuple[str, ...]]  # an entity and the to-one steps that joined it


class _Source:
    """The joins of one FROM clause (the main statement or one subquery): to-one aliases, a facet's to-many rows."""

    def __init__(self, root: Entity) -> None:
        self.root = root
        self.aliases: dict[tuple[str, ...], Entity] = {}
        self.joins: list[tuple[Entity, Any]] = []

    def follow(self, parent: Entity, steps: tuple[str, ...], relationship: Any) -> Entity:
        alias = self.aliases.get(steps)
        if alias is None:
            alias = aliased(relationship.mapper.class_)
            self.aliases[steps] = alias
            self.joins.append((alias, getattr(parent, relationship.key).of_type(alias)))
        return alias

    def attach(self, item: Any, onclause: ColumnElement[Any]) -> None:
        """LEFT JOIN ``item`` (a derived table, a table-valued FROM item) ON ``onclause``, after the joins so far."""
        self.joins.append((item, onclause))

    def apply(self, statement: Select[Any]) -> Select[Any]:
        for alias, onclause in self.joins:
            statement = statement.outerjoin(alias, onclause)
        return statement


def _owners(
    parent: Entity, relationship: Any, child: Entity
) -> tuple[list[tuple[Any, Any]], list[tuple[ColumnElement[Any], ColumnElement[Any]]]]:
    """Extra FROMs of ``child`` rows (with their join conditions), and the columns that tie them to ``parent``.

    Pairs of a ``parent`` column and the one read beside a ``child`` row that holds its value: the
    row's own column, or the link table's.
    """
    if relationship.secondary is None:
        pairs = [
            (getattr(parent, attribute_key(parent, local)), getattr(child, attribute_key(child, remote)))
            for local, remote in relationship.local_remote_pairs
        ]
        return [], pairs
    secondary = relationship.secondary.alias()
    to_child = and_(
        *(
            getattr(child, attribute_key(child, target)) == secondary.c[link.key]
            for target, link in relationship.secondary_synchronize_pairs
        )
    )
    pairs = [
        (getattr(parent, attribute_key(parent, source)), secondary.c[link.key])
        for source, link in relationship.synchronize_pairs
    ]
    return [(secondary, to_child)], pairs


def _correlate(parent: Entity, relationship: Any, child: Entity) -> tuple[list[tuple[Any, Any]], ColumnElement[bool]]:
    """Extra FROMs (with their join conditions) and the condition tying ``child`` rows to ``parent``."""
    froms, pairs = _owners(parent, relationship, child)
    return froms, and_(*(own == owner for own, owner in pairs))


def _positions(count: int) -> list[ColumnElement[Any]]:
    """``GROUP BY 1, 2...``: the first ``count`` columns selected, by position."""
    return [literal_column(str(position)) for position in range(1, count + 1)]


class StatementCompiler(RelationalCompiler[ColumnElement[Any], Select[Any]]):
    """Compiles queries for one model on PostgreSQL (the algorithm: ``RelationalCompiler``).

    Each other database has a subclass with its own SQL (``STATEMENT_COMPILERS``).

    Args:
        model: The listed mapped class.
        base: The statement to start from (``select(model)`` by default): a base list query may add
            computed columns and exclude rows, e.g. soft-deleted ones (docs: soft delete).
        computed: Computed aliases mapped to expressions, for ordering (docs: computed).
        custom_base: ``base`` is not a plain ``select(model)``: the total counts its rows as a subquery.
    """

    dialect: ClassVar[str] = "postgresql"
    """The database it compiles for (``relational.databases``)."""

    def __init__(
        self,
        model: type[Any],
        base: Select[Any],
        computed: Mapping[str, ColumnElement[Any]],
        *,
        custom_base: bool,
    ) -> None:
        self.model = model
        self.base = base
        self.computed = computed
        self.custom_base = custom_base
        self.graph = model_graph(model)
        self._nullable = {
            prop.key: bool(prop.columns[0].nullable) for prop in inspect(model).column_attrs if len(prop.columns) == 1
        }

    @property
    def database(self) -> Database:  # noqa: D102
        return DATABASES[self.dialect]

    # -- statements ---------------------------------------------------------------------------
    def source(self) -> _Source:  # noqa: D102
        return _Source(self.model)

    @staticmethod
    def _where(statement: Select[Any], condition: ColumnElement[bool] | None) -> Select[Any]:
        return statement if condition is None else statement.where(condition)

    def total_statement(self, source: _Source, condition: ColumnElement[Any] | None) -> Select[Any]:  # noqa: D102
        if self.custom_base:
            return select(func.count()).select_from(self._where(source.apply(self.base), condition).subquery())
        return self._where(source.apply(select(func.count()).select_from(self.model)), condition)

    def window_count(self) -> ColumnElement[int]:  # noqa: D102
        return func.count().over()

    def counts_in_page(self, query: ListQuery) -> bool:
        """``RelationalCompiler.counts_in_page``, and a base statement that is not ``DISTINCT``.

        A window is computed before ``DISTINCT`` merges rows, so it would count them unmerged (the
        total statement counts the base statement's rows as a subquery; ``merges_rows``).
        """
        return super().counts_in_page(query) and not self.merges_rows

    def page_statement(  # noqa: D102
        self,
        source: _Source,
        condition: ColumnElement[Any] | None,
        order: Sequence[ColumnElement[Any]],
        selected: Sequence[Any],  # the base statement selects the page's columns
        labelled: Sequence[tuple[str, ColumnElement[Any]]],
        limit: int,
        offset: int | Slot | None,
    ) -> Select[Any]:
        page = self._where(source.apply(self.base), condition)
        if offset is not None:
            page = page.offset(self._rows(offset))
        return self._page(page, order, labelled, limit)

    @staticmethod
    def _page(
        page: Select[Any],
        order: Sequence[ColumnElement[Any]],
        labelled: Sequence[tuple[str, ColumnElement[Any]]],
        limit: int | None,
    ) -> Select[Any]:
        if labelled:
            page = page.add_columns(*(value.label(label) for label, value in labelled))
        return page.order_by(*order).limit(limit)

    def _primary_key(self) -> list[ColumnElement[Any]]:
        return [getattr(self.model, attribute_key(self.model, column)) for column in inspect(self.model).primary_key]

    def keys_statement(  # noqa: D102
        self,
        source: _Source,
        condition: ColumnElement[Any] | None,
        order: Sequence[ColumnElement[Any]],
        limit: int | None,
        offset: int | Slot | None,
    ) -> Select[Any]:
        keys = self._where(source.apply(self.base), condition).with_only_columns(
            *self._primary_key(), maintain_column_froms=True
        )
        if limit is not None:
            keys = keys.order_by(*order).limit(limit).offset(None if offset is None else self._rows(offset))
        return keys.correlate(None)

    @staticmethod
    def _rows(count: int | Slot) -> Any:
        # Rendered into the SQL when it runs, as SQLAlchemy renders an int offset itself.
        if isinstance(count, Slot):
            return bindparam(count.name, type_=Integer(), required=True, literal_execute=True)
        return count

    def among_keys(self, keys: Select[Any] | CompoundSelect[Any]) -> ColumnElement[Any]:  # noqa: D102
        pk = self._primary_key()
        return pk[0].in_(keys) if len(pk) == 1 else tuple_(*pk).in_(keys)

    def union_keys(self, statements: Sequence[Select[Any]]) -> Any:  # noqa: D102
        return statements[0] if len(statements) == 1 else union_all(*statements)

    def statement_value(self, statement: Select[Any] | CompoundSelect[Any]) -> ColumnElement[Any]:  # noqa: D102
        return statement.scalar_subquery()

    def capped_count(self, keys: Select[Any] | CompoundSelect[Any], limit: int) -> Select[Any]:  # noqa: D102
        rows: Select[Any] = select(literal_column("1")).select_from(keys.subquery()).limit(limit)
        return select(func.count()).select_from(rows.subquery())

    @property
    def merges_rows(self) -> bool:
        """Whether the base statement is ``DISTINCT`` (SQLAlchemy keeps it in ``_distinct`` and ``_distinct_on``)."""
        return bool(getattr(self.base, "_distinct", False) or getattr(self.base, "_distinct_on", ()))

    def listed_rows(  # noqa: D102
        self,
        source: _Source,
        condition: ColumnElement[Any] | None,
        selected: Sequence[tuple[str, ColumnElement[Any]]],
        *,
        distinct: bool = False,
        grouped: int = 0,
    ) -> Select[Any]:
        rows = self._where(source.apply(self.base), condition).with_only_columns(
            *(value.label(label) for label, value in selected), maintain_column_froms=True
        )
        rows = rows.order_by(None).group_by(*_positions(grouped))
        return rows.distinct() if distinct else rows

    def derived(self, statement: Select[Any], name: str) -> Subquery:  # noqa: D102
        return statement.subquery(name)

    def derived_column(self, derived: Subquery, label: str) -> ColumnElement[Any]:  # noqa: D102
        return derived.c[label]

    def from_derived(  # noqa: D102
        self,
        derived: Subquery,
        selected: Sequence[tuple[str, ColumnElement[Any]]],
        *,
        grouped: int = 0,
        order: Sequence[ColumnElement[Any]] = (),
        limit: int | None = None,
    ) -> Select[Any]:
        rows = select(*(value.label(label) for label, value in selected)).select_from(derived)
        return rows.group_by(*_positions(grouped)).order_by(*order).limit(limit)

    # -- paths --------------------------------------------------------------------------------
    def start(self, source: _Source) -> Place:  # noqa: D102
        return source.root, ()

    def relation(self, place: Place, name: str) -> Any:  # noqa: D102
        return inspect(place[0]).mapper.relationships[name]

    def is_to_many(self, relation: Any) -> bool:  # noqa: D102
        return bool(relation.uselist)

    def join(self, source: _Source, place: Place, steps: tuple[str, ...], relation: Any) -> Place:  # noqa: D102
        return source.follow(place[0], steps, relation), steps

    def semi_join_one(self, place: Place, relation: Any, inner: Continue) -> ColumnElement[Any] | None:  # noqa: D102
        pairs = relation.local_remote_pairs
        if relation.secondary is not None or len(pairs) != 1:
            return None
        (local, remote), target = pairs[0], aliased(relation.mapper.class_)
        inner_source = _Source(target)
        condition = inner(inner_source, self.start(inner_source), semi=True)
        keys = select(getattr(target, attribute_key(target, remote))).select_from(target)
        parent_key: ColumnElement[Any] = getattr(place[0], attribute_key(place[0], local))
        return parent_key.in_(inner_source.apply(keys).where(condition))

    def semi_join_many(self, place: Place, relation: Any, inner: Continue, *, semi: bool) -> ColumnElement[Any]:  # noqa: D102
        child = aliased(relation.mapper.class_)
        inner_source = _Source(child)
        condition = inner(inner_source, self.start(inner_source), semi=semi)
        froms, correlation = _correlate(place[0], relation, child)
        subquery = select(literal(1)).select_from(child)
        for table, onclause in froms:
            subquery = subquery.join(table, onclause)
        return exists(inner_source.apply(subquery).where(correlation, condition))

    def join_many(self, source: _Source, place: Place, relation: Any, reach: Reach) -> ColumnElement[Any]:  # noqa: D102
        child = aliased(relation.mapper.class_)
        inner_source = _Source(child)
        value, allowed = reach(inner_source, self.start(inner_source))
        froms, pairs = _owners(place[0], relation, child)
        owners = [owner.label(f"listing_owner_{index}") for index, (_, owner) in enumerate(pairs)]
        rows: Select[Any] = select(value.label("listing_value")).add_columns(*owners).select_from(child)
        for table, onclause in froms:
            rows = rows.join(table, onclause)  # an inner join: a link naming no row reaches none
        related = self._where(inner_source.apply(rows), allowed).subquery()
        source.attach(
            related, and_(*(own == related.c[owner.name] for (own, _), owner in zip(pairs, owners, strict=True)))
        )
        return related.c.listing_value

    def join_sql(self, source: _Source, template: str, condition: ColumnElement[Any], *values: Any) -> None:  # noqa: D102
        source.attach(_FromTemplate(template, values), condition)

    def field(self, place: Place, name: str) -> ColumnElement[Any]:  # noqa: D102
        return getattr(place[0], name)  # type: ignore[no-any-return]

    def nullable_field(self, name: str) -> bool:  # noqa: D102
        return self._nullable.get(name) is not False

    # -- conditions and values ----------------------------------------------------------------
    def all_of(self, parts: Sequence[ColumnElement[Any]]) -> ColumnElement[Any]:  # noqa: D102
        return and_(*parts)

    def any_of(self, parts: Sequence[ColumnElement[Any]]) -> ColumnElement[Any]:  # noqa: D102
        return or_(*parts)

    def constant(self, *, value: bool) -> ColumnElement[Any]:  # noqa: D102
        return true() if value else false()

    def bind(self, value: Any, like: Any = None) -> Any:
        """A coerced value as a bind parameter, typed like ``like`` when given.

        A value bound with a ``NUMERIC(p, s)`` column's type is cast to it on PostgreSQL, which
        rounds it to ``s`` places (``price = 0.001`` would find ``0.00``) or overflows past ``p``
        digits: a ``Decimal`` is bound as a plain ``NUMERIC``, which keeps it exact (docs: design, "Coercion").

        A ``Slot`` (a query's shape, ``shapes.shape_of``) becomes the bind parameter of its name,
        typed the same way; untyped, it takes the type of the column it is compared with.
        """
        if isinstance(value, Slot):
            type_ = Numeric() if value.kind is Decimal else None if like is None else like.type
            return bindparam(value.name, type_=type_, required=True)
        if isinstance(value, Decimal):
            return literal(value, Numeric())
        return value if like is None else literal(value, like.type)

    def compare(self, left: Any, operator: str, right: Any) -> ColumnElement[Any]:  # noqa: D102
        return left.operate(_OPERATORS[operator], right)  # type: ignore[no-any-return]

    def row_compare(self, left: Sequence[Any], operator: str, right: Sequence[Any]) -> ColumnElement[Any]:  # noqa: D102
        return self.compare(tuple_(*left), operator, tuple_(*right))

    def among(self, column: Any, values: Sequence[Any], *, negate: bool) -> ColumnElement[Any]:  # noqa: D102
        # An untyped parameter in a list is not typed by the column as in a comparison: it is here.
        values = [
            value._with_binary_element_type(column.type)  # noqa: SLF001
            if isinstance(value, BindParameter) and value.type._isnull  # noqa: SLF001
            else value
            for value in values
        ]
        return column.not_in(values) if negate else column.in_(values)  # type: ignore[no-any-return]

    def guarded(self, value: Any, condition: ColumnElement[Any]) -> ColumnElement[Any]:  # noqa: D102
        return case((condition, value), else_=None)

    def is_null(self, value: Any, *, null: bool) -> ColumnElement[Any]:  # noqa: D102
        return value.is_(None) if null else value.is_not(None)  # type: ignore[no-any-return]

    def ordered(self, value: Any, *, descending: bool, nulls_last: bool) -> ColumnElement[Any]:  # noqa: D102
        ordered = value.desc() if descending else value.asc()
        return ordered.nulls_last() if nulls_last else ordered  # type: ignore[no-any-return]

    def like(self, column: Any, pattern: LikePattern) -> ColumnElement[Any]:  # noqa: D102
        return column.like(pattern.to_like(), escape=LIKE_ESCAPE)  # type: ignore[no-any-return]

    def ilike(self, column: Any, pattern: LikePattern) -> ColumnElement[Any]:  # noqa: D102
        return func.lower(column).like(func.lower(literal(pattern.to_like())), escape=LIKE_ESCAPE)

    def sql(self, template: str, value_type: ValueType, *values: Any) -> ColumnElement[Any]:  # noqa: D102
        return _Template(template, _SQL_TYPES[value_type], values)

    def condition_sql(self, template: str, *values: Any) -> ColumnElement[Any]:  # noqa: D102
        return _Condition(template, Boolean(), values)


class SQLiteStatementCompiler(StatementCompiler):
    """``StatementCompiler`` on SQLite: case-sensitive ``like`` by ``GLOB``, case folding beyond ASCII.

    SQLite's ``LIKE`` ignores the case of ASCII letters and ``lower()`` folds ASCII only.
    """

    dialect = "sqlite"

    def like(self, column: Any, pattern: LikePattern) -> ColumnElement[Any]:  # noqa: D102
        return column.op("GLOB", is_comparison=True)(pattern.to_glob())  # type: ignore[no-any-return]

    def ilike(self, column: Any, pattern: LikePattern) -> ColumnElement[Any]:  # noqa: D102
        # SQLite's LIKE on ASCII text (as many bytes as characters), the Python fold on the rest
        # (see ``_sqlite.is_ascii_sql``).
        folded = literal(fold_case(pattern.to_like()))
        is_ascii = func.length(cast(column, LargeBinary)) == func.length(column)
        return case(
            (is_ascii, column.like(folded, escape=LIKE_ESCAPE)),
            else_=getattr(func, FOLD_FUNCTION)(column).like(folded, escape=LIKE_ESCAPE),
        )


EXACT_COLLATION = "utf8mb4_nopad_bin"
"""MariaDB's collation that compares text by code point, trailing spaces included (docs: backends, "MariaDB")."""
FOLD_COLLATION = "utf8mb4_uca1400_as_cs"
"""MariaDB's collation whose ``LOWER()`` is Unicode 14's simple lowercase mapping (docs: backends, "MariaDB")."""


class MariaDBStatementCompiler(StatementCompiler):
    """``StatementCompiler`` on MariaDB: text compared exactly whatever the column's collation, NULLs last.

    MariaDB's default collations ignore case and accents and pad with spaces (``'a' = 'A '``), in
    ``=``, ``IN`` and ``LIKE`` alike: the text operators compare in ``EXACT_COLLATION``, beside the
    column's own comparison where that lets an index find the candidates (any collation's equal
    values include the identical ones). The case-insensitive ones lowercase in ``FOLD_COLLATION``,
    then match exactly. ``NULLS LAST`` is not MariaDB's syntax: an ascending nullable term sorts on
    ``value IS NULL`` first (descending, MariaDB puts NULLs last itself). The deferred join joins its
    page's keys as a derived table (``deferred_page``).
    """

    dialect = "mariadb"

    @staticmethod
    def _text(column: Any) -> bool:
        return isinstance(getattr(column, "type", None), String)

    def _in(self, column: Any, collation: str) -> ColumnElement[Any]:
        # Whatever the column's character set: a collation belongs to one.
        return self.sql("CONVERT({0} USING utf8mb4)", ValueType.TEXT, column).collate(collation)

    def op_eq(self, column: Any, value: Any) -> ColumnElement[Any]:  # noqa: D102
        plain = super().op_eq(column, value)
        if not self._text(column):
            return plain
        return and_(plain, self._in(column, EXACT_COLLATION) == self.bind(value, like=column))

    def op_ne(self, column: Any, value: Any) -> ColumnElement[Any]:  # noqa: D102
        if not self._text(column):
            return super().op_ne(column, value)
        exact: ColumnElement[Any] = self._in(column, EXACT_COLLATION) != self.bind(value, like=column)
        return exact

    def op_in(self, column: Any, value: tuple[Any, ...]) -> ColumnElement[Any]:  # noqa: D102
        plain = super().op_in(column, value)
        if not (value and self._text(column)):
            return plain
        return and_(plain, self._in(column, EXACT_COLLATION).in_([self.bind(item, like=column) for item in value]))

    def op_nin(self, column: Any, value: tuple[Any, ...]) -> ColumnElement[Any]:  # noqa: D102
        if not (value and self._text(column)):
            return super().op_nin(column, value)
        return self._in(column, EXACT_COLLATION).not_in([self.bind(item, like=column) for item in value])

    def like(self, column: Any, pattern: LikePattern) -> ColumnElement[Any]:  # noqa: D102
        exact = self._in(column, EXACT_COLLATION).like(pattern.to_like(), escape=LIKE_ESCAPE)
        return and_(column.like(pattern.to_like(), escape=LIKE_ESCAPE), exact)

    def ilike(self, column: Any, pattern: LikePattern) -> ColumnElement[Any]:  # noqa: D102
        folded = self.sql("LOWER({0})", ValueType.TEXT, self._in(column, FOLD_COLLATION)).collate(EXACT_COLLATION)
        return folded.like(fold_case(pattern.to_like()), escape=LIKE_ESCAPE)

    def exact(self, value: ColumnElement[Any]) -> ColumnElement[Any]:
        """Text in ``EXACT_COLLATION``, which merges no two texts; other values as they are."""
        return self._in(value, EXACT_COLLATION) if self._text(value) else value

    def sortable(self, value: ColumnElement[Any]) -> ColumnElement[Any]:
        """A native UUID by its text, as the other databases order it.

        MariaDB's ``UUID`` type compares its groups in another order than the text's.
        """
        if isinstance(value.type, Uuid) and value.type.native_uuid:
            return self._in(cast(value, String(36)), EXACT_COLLATION)
        return value

    def ordered(self, value: Any, *, descending: bool, nulls_last: bool) -> ColumnElement[Any]:  # noqa: D102
        if descending or not nulls_last:
            return value.desc() if descending else value.asc()  # type: ignore[no-any-return]
        # Two ORDER BY terms, which ``order_by`` takes as one.
        return cast_type("ColumnElement[Any]", ClauseList(value.is_(None), value.asc()))

    def defers(self, query: ListQuery) -> bool:
        """``StatementCompiler.defers``, and every page ordered through a relation.

        MariaDB sorts joined rows whole, in a temporary table: the first page of the demo's flights
        ordered by ``-plane__year`` took 1.8 s, its last page (a deferred join, which sorts keys) 0.24 s.
        """
        return super().defers(query) or any(term.path.relations for term in query.order)

    def deferred_page(  # noqa: D102
        self,
        source: _Source,
        keys: Select[Any],
        order: Sequence[ColumnElement[Any]],
        selected: Sequence[Any],
        labelled: Sequence[tuple[str, ColumnElement[Any]]],
        limit: int,
    ) -> Select[Any]:
        # Joined, not ``IN``: MariaDB takes the derived table for as many rows as the keys skip and
        # walks the whole order's index, testing each row against the keys (3.9 s for a page of 10 a
        # million rows deep, 0.2 s joined); nor may an ``IN`` subquery hold a ``LIMIT``. And no
        # ``LIMIT`` outside (the keys hold the page's rows alone): with one, MariaDB walks the order's
        # index again once the keys lie past the end (4.4 s for an empty page, 0.2 s without).
        derived = keys.subquery("listing_keys")
        on = and_(*(key == column for key, column in zip(self._primary_key(), derived.c, strict=True)))
        return self._page(source.apply(self.base).join(derived, on), order, labelled, None)


STATEMENT_COMPILERS: Mapping[str, type[StatementCompiler]] = MappingProxyType(
    {"sqlite": SQLiteStatementCompiler, "postgresql": StatementCompiler, "mariadb": MariaDBStatementCompiler}
)
"""The statement compiler of each supported database, by its name (``relational.databases``)."""


_SQL_TYPES: Mapping[ValueType, Any] = MappingProxyType(
    {
        ValueType.TEXT: String(),
        ValueType.INTEGER: BigInteger(),
        ValueType.FLOAT: Float(),
        ValueType.BOOLEAN: Boolean(),
        ValueType.DATE: String(),  # a JSON document's date is its ISO text
    }
)


class _Template(ColumnElement[Any]):
    """SQL text around expressions: ``template`` with the expressions in place of ``{0}``, ``{1}``..."""

    inherit_cache = True
    _traverse_internals = [
        ("template", InternalTraversal.dp_string),
        ("type", InternalTraversal.dp_type),
        ("values", InternalTraversal.dp_clauseelement_tuple),
    ]

    def __init__(self, template: str, type_: Any, values: tuple[ColumnElement[Any], ...]) -> None:
        self.template = template
        self.type = type_
        self.values = values


class _Condition(_Template):
    """SQL text that is a condition: rendered as it is where a condition goes (no ``= 1`` on SQLite, MariaDB)."""

    inherit_cache = True
    _is_implicitly_boolean = True


class _FromTemplate(TableClause):
    """SQL text that is a FROM item, its alias included: ``template`` with expressions in place of ``{0}``..."""

    inherit_cache = True
    _traverse_internals = [
        ("template", InternalTraversal.dp_string),
        ("values", InternalTraversal.dp_clauseelement_tuple),
    ]

    def __init__(self, template: str, values: tuple[Any, ...]) -> None:
        super().__init__("listing_from")
        self.template = template
        self.values = values


@compiles(_FromTemplate)
def _render_from(element: _FromTemplate, compiler: Any, from_linter: Any = None, **kw: Any) -> str:
    if from_linter is not None:
        # As SQLAlchemy registers an alias (the original, not a copy), joined to the FROMs its values
        # read: the item is lateral to them, whatever its join condition names.
        item = element._de_clone()  # type: ignore[no-untyped-call]  # noqa: SLF001
        from_linter.froms[item] = element.name
        for value in element.values:
            clause = value.__clause_element__() if hasattr(value, "__clause_element__") else value
            from_linter.edges.update((read._de_clone(), item) for read in clause._from_objects)  # noqa: SLF001
    kw.pop("asfrom", None)
    return _render_template(element, compiler, **kw)


@compiles(_Condition)
@compiles(_Template)
def _render_template(element: _Template | _FromTemplate, compiler: Any, **kw: Any) -> str:
    # A driver whose parameters are written ``%(name)s`` reads a lone ``%`` of the SQL as one.
    template = element.template.replace("%", "%%") if compiler.preparer._double_percents else element.template  # noqa: SLF001
    pieces = PLACEHOLDER.split(template)
    # Each place an expression appears is rendered anew: positional parameters are then in order.
    return "".join(
        compiler.process(element.values[int(piece)], **kw) if index % 2 else piece for index, piece in enumerate(pieces)
    )


_OPERATORS = {
    "=": operators.eq,
    "<>": operators.ne,
    "<": operators.lt,
    "<=": operators.le,
    ">": operators.gt,
    ">=": operators.ge,
}
