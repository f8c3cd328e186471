"""``ListQuery`` -> SQLAlchemy ``Select`` statements for the page and the total.

To-one paths join with one LEFT OUTER JOIN alias per path; to-many paths become correlated EXISTS
subqueries, so no row repeats and totals are exact (DESIGN.md, "Relation paths").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    ColumnElement,
    LargeBinary,
    Numeric,
    Select,
    and_,
    case,
    cast,
    exists,
    false,
    func,
    inspect,
    literal,
    or_,
    select,
    true,
    tuple_,
)
from sqlalchemy.orm import aliased

from litestar_listing.backends._sqlite import FOLD_FUNCTION
from litestar_listing.backends.base import dispatch, field_filter
from litestar_listing.core.query import Combine, FieldPath, Filter, ListQuery, OrderTerm, Search
from litestar_listing.core.text import LIKE_ESCAPE, LikePattern, contains_pattern, fold_case

__all__ = ("DEFERRED_OFFSET", "FOLD_FUNCTION", "KEY_LABEL", "StatementCompiler")


DEFERRED_OFFSET = 1000
"""From this many skipped rows on, a page is fetched by a deferred join (keys first, then rows)."""

KEY_LABEL = "_listing_key_"
"""Prefix of the labels of the ordering values a page statement selects for keyset continuation."""

Entity = Any  # a mapped class or an AliasedClass of one
Leaf = Callable[[ColumnElement[Any]], ColumnElement[Any]]


class _Scope:
    """The to-one joins of one FROM clause: the main statement or one EXISTS subquery."""

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

    def apply(self, statement: Select[Any]) -> Select[Any]:
        for alias, onclause in self.joins:
            statement = statement.outerjoin(alias, onclause)
        return statement


def _attribute_key(entity: Entity, column: Any) -> str:
    return str(inspect(entity).mapper.get_property_by_column(column).key)


def _correlate(parent: Entity, relationship: Any, child: Entity) -> tuple[list[tuple[Any, Any]], ColumnElement[bool]]:
    """Extra FROMs (with their join conditions) and the condition tying ``child`` rows to ``parent``."""
    if relationship.secondary is None:
        conditions = [
            getattr(parent, _attribute_key(parent, local)) == getattr(child, _attribute_key(child, remote))
            for local, remote in relationship.local_remote_pairs
        ]
        return [], and_(*conditions)
    secondary = relationship.secondary.alias()
    to_child = and_(
        *(
            getattr(child, _attribute_key(child, target)) == secondary.c[link.key]
            for target, link in relationship.secondary_synchronize_pairs
        )
    )
    to_parent = and_(
        *(
            getattr(parent, _attribute_key(parent, source)) == secondary.c[link.key]
            for source, link in relationship.synchronize_pairs
        )
    )
    return [(secondary, to_child)], to_parent


class StatementCompiler:
    """Compiles queries for one model on one dialect.

    Args:
        model: The listed mapped class.
        base: The statement to start from (``select(model)`` by default): a base list query may add
            computed columns and exclude rows, e.g. soft-deleted ones (spec §4.4.11).
        computed: Computed aliases mapped to expressions, for ordering (spec §4.3.2).
        dialect: The SQLAlchemy dialect name (``sqlite``, ``postgresql``, ...).
    """

    def __init__(
        self,
        model: type[Any],
        base: Select[Any],
        computed: Mapping[str, ColumnElement[Any]],
        dialect: str,
        *,
        custom_base: bool,
    ) -> None:
        self.model = model
        self.base = base
        self.computed = computed
        self.dialect = dialect
        self.custom_base = custom_base
        self._nullable = {
            prop.key: bool(prop.columns[0].nullable) for prop in inspect(model).column_attrs if len(prop.columns) == 1
        }

    # -- statements ---------------------------------------------------------------------------
    def compile(self, query: ListQuery, *, keys: bool = False) -> tuple[Select[Any], Select[Any]]:
        """Return ``(page statement, total statement)`` for ``query``.

        Args:
            query: The query; with ``after``, the page starts after those ordering values instead of
                at an offset (keyset continuation).
            keys: Append each ordering term's value to the page's columns, labelled
                ``KEY_LABEL + <index>``, after any extra columns of the base statement.
        """
        scope = _Scope(self.model)
        where = self.where(scope, query)
        # The total joins only what the WHERE clause needs: order joins never change a count.
        if self.custom_base:
            total = select(func.count()).select_from(self._where(scope.apply(self.base), where).subquery())
        else:
            total = self._where(scope.apply(select(func.count()).select_from(self.model)), where)
        columns = [self.column(scope, term.path) for term in query.order]
        order = [self.order_term(term, column) for term, column in zip(query.order, columns, strict=True)]
        offset = query.window.offset
        if query.after is None and offset >= DEFERRED_OFFSET:
            # A deferred join: the skipped rows are walked for their keys alone (an index-only scan
            # where an index covers the order), and only the page's rows are read whole.
            pk = [getattr(self.model, _attribute_key(self.model, column)) for column in inspect(self.model).primary_key]
            page_keys = self._where(scope.apply(self.base), where).with_only_columns(*pk, maintain_column_froms=True)
            page_keys = page_keys.order_by(*order).limit(query.window.count).offset(offset).correlate(None)
            chosen = pk[0].in_(page_keys) if len(pk) == 1 else tuple_(*pk).in_(page_keys)
            page = scope.apply(self.base).where(chosen)
        elif query.after is None:
            page = self._where(scope.apply(self.base), where).offset(offset)
        else:
            after = self.keyset(query, columns)
            page = scope.apply(self.base).where(after if where is None else and_(where, after))
        if keys:
            page = page.add_columns(*(column.label(f"{KEY_LABEL}{index}") for index, column in enumerate(columns)))
        return page.order_by(*order).limit(query.window.count), total

    @staticmethod
    def _where(statement: Select[Any], where: ColumnElement[bool] | None) -> Select[Any]:
        return statement if where is None else statement.where(where)

    def where(self, scope: _Scope, query: ListQuery) -> ColumnElement[bool] | None:
        """The WHERE clause: forced filters AND (client filters, combined) AND search."""
        parts = [self.filter(scope, item) for item in query.forced_filters]
        if query.filters:
            client = [self.filter(scope, field_filter(item)) for item in query.filters]
            parts.append(and_(*client) if query.combine is Combine.AND else or_(*client))
        if query.search is not None:
            parts.append(self.search(scope, query.search))
        return and_(*parts) if parts else None

    # -- paths --------------------------------------------------------------------------------
    def predicate(self, scope: _Scope, path: FieldPath, leaf: Leaf, *, semi: bool = False) -> ColumnElement[Any]:
        """``leaf`` applied to the column at ``path``, through joins and EXISTS subqueries.

        On a to-one path with an identity ``leaf`` this is the (joined) column itself. With
        ``semi`` (a ``leaf`` that never holds for NULL), a to-one step with a single-column key
        becomes ``<key> IN (SELECT <target key> FROM <target> WHERE ...)`` instead of a join: the
        same rows (no related row, no match), but the condition is evaluated once per related row
        rather than once per listed row, and a count needs no join at all.
        """
        entity = scope.root
        steps: tuple[str, ...] = ()
        for index, step in enumerate(path.relations):
            relationship = inspect(entity).mapper.relationships[step]
            if semi and not relationship.uselist and relationship.secondary is None:
                pairs = relationship.local_remote_pairs
                if len(pairs) == 1:
                    (local, remote), target = pairs[0], aliased(relationship.mapper.class_)
                    inner_scope = _Scope(target)
                    inner = self.predicate(inner_scope, FieldPath(path.segments[index + 1 :]), leaf, semi=True)
                    keys = select(getattr(target, _attribute_key(target, remote))).select_from(target)
                    parent_key: ColumnElement[Any] = getattr(entity, _attribute_key(entity, local))
                    return parent_key.in_(inner_scope.apply(keys).where(inner))
            if relationship.uselist:
                child = aliased(relationship.mapper.class_)
                inner_scope = _Scope(child)
                inner = self.predicate(inner_scope, FieldPath(path.segments[index + 1 :]), leaf, semi=semi)
                froms, correlation = _correlate(entity, relationship, child)
                subquery = select(literal(1)).select_from(child)
                for table, onclause in froms:
                    subquery = subquery.join(table, onclause)
                subquery = inner_scope.apply(subquery).where(correlation, inner)
                return exists(subquery)
            steps = (*steps, step)
            entity = scope.follow(entity, steps, relationship)
        return leaf(getattr(entity, path.field))

    def column(self, scope: _Scope, path: FieldPath) -> ColumnElement[Any]:
        """The column at a to-one ``path`` (or a computed alias's expression), joining as needed."""
        if len(path.segments) == 1 and path.field in self.computed:
            return self.computed[path.field]
        return self.predicate(scope, path, lambda column: column)

    # -- nodes --------------------------------------------------------------------------------
    def filter(self, scope: _Scope, item: Filter) -> ColumnElement[bool]:
        """One filter; the operator's ``op_<name>`` builds the comparison."""
        build = dispatch(self, "op", item.operator.name)
        # A filter that NULL satisfies must see the NULL of a missing related row: it keeps the join.
        return self.predicate(scope, item.path, lambda column: build(column, item.value), semi=not item.matches_null)

    def search(self, scope: _Scope, search: Search) -> ColumnElement[bool]:
        """Case-insensitive substring search over every searchable path, combined with OR."""
        pattern = contains_pattern(search.text)
        return or_(
            *(
                self.predicate(scope, path, lambda column: self._ilike(column, pattern), semi=True)
                for path in search.paths
            )
        )

    def nullable(self, term: OrderTerm) -> bool:
        """Whether ``term``'s value can be NULL: any relation path (a LEFT JOIN), computed alias, or nullable column."""
        return len(term.path.segments) != 1 or self._nullable.get(term.path.field) is not False

    def order_term(self, term: OrderTerm, column: ColumnElement[Any]) -> ColumnElement[Any]:
        """One ORDER BY term over ``column``; NULLs last in both directions (DESIGN.md, "Order")."""
        ordered = column.desc() if term.descending else column.asc()
        return ordered.nulls_last() if self.nullable(term) else ordered

    def keyset(self, query: ListQuery, columns: list[ColumnElement[Any]]) -> ColumnElement[bool]:
        """Rows that sort after ``query.after`` in ``query.order`` (``core.cursor.follows`` in SQL).

        One disjunct per term: the earlier terms equal, this one after (NULLs last); plus a bound
        on the leading term alone, which lets the database start from an index position. When
        every term has one direction and cannot be NULL, a row-value comparison says the same.
        """
        assert query.after is not None  # noqa: S101 - only called for a continued query
        terms = list(zip(query.order, columns, query.after, strict=True))
        directions = {term.descending for term in query.order}
        if len(directions) == 1 and not any(self.nullable(term) or bound is None for term, _, bound in terms):
            values = tuple_(*(self.bind(column, bound) for _, column, bound in terms))
            row = tuple_(*columns)
            return row < values if query.order[0].descending else row > values
        disjuncts: list[ColumnElement[bool]] = []
        equal: list[ColumnElement[bool]] = []
        for term, column, bound in terms:
            if bound is not None:
                beyond = column < self.bind(column, bound) if term.descending else column > self.bind(column, bound)
                disjuncts.append(and_(*equal, or_(beyond, column.is_(None)) if self.nullable(term) else beyond))
            equal.append(column.is_(None) if bound is None else column == self.bind(column, bound))
        lead_term, lead, lead_bound = terms[0]
        leading: ColumnElement[bool]
        if lead_bound is None:
            leading = lead.is_(None)
        else:
            reach = lead <= self.bind(lead, lead_bound) if lead_term.descending else lead >= self.bind(lead, lead_bound)
            leading = or_(reach, lead.is_(None)) if self.nullable(lead_term) else reach
        return and_(leading, or_(*disjuncts) if disjuncts else false())

    # -- text ---------------------------------------------------------------------------------
    def _like(self, column: ColumnElement[Any], pattern: LikePattern) -> ColumnElement[bool]:
        if self.dialect == "sqlite":
            return column.op("GLOB", is_comparison=True)(pattern.to_glob())
        return column.like(pattern.to_like(), escape=LIKE_ESCAPE)

    def _ilike(self, column: ColumnElement[Any], pattern: LikePattern) -> ColumnElement[bool]:
        if self.dialect != "sqlite":
            return func.lower(column).like(func.lower(literal(pattern.to_like())), escape=LIKE_ESCAPE)
        # SQLite's LIKE on ASCII text (as many bytes as characters), the Python fold on the rest
        # (see ``_sqlite.is_ascii_sql``).
        folded = literal(fold_case(pattern.to_like()))
        is_ascii = func.length(cast(column, LargeBinary)) == func.length(column)
        return case(
            (is_ascii, column.like(folded, escape=LIKE_ESCAPE)),
            else_=getattr(func, FOLD_FUNCTION)(column).like(folded, escape=LIKE_ESCAPE),
        )

    # -- values -------------------------------------------------------------------------------
    @staticmethod
    def value(value: Any) -> Any:
        """A coerced value as a bind parameter.

        A value bound with a ``NUMERIC(p, s)`` column's type is cast to it on PostgreSQL, which
        rounds it to ``s`` places (``price = 0.001`` would find ``0.00``) or overflows past ``p``
        digits; a plain ``NUMERIC`` keeps decimals exact (DESIGN.md, "Coercion").
        """
        return literal(value, Numeric()) if isinstance(value, Decimal) else value

    def bind(self, column: ColumnElement[Any], value: Any) -> ColumnElement[Any]:
        """``value`` as a bind parameter typed like ``column`` (``Decimal`` as a plain ``NUMERIC``, see ``value``)."""
        return literal(value, Numeric()) if isinstance(value, Decimal) else literal(value, column.type)

    # -- operators (one per entry of core.operators.OPERATORS) --------------------------------
    def op_eq(self, column: ColumnElement[Any], value: Any) -> ColumnElement[bool]:  # noqa: D102
        comparison: ColumnElement[bool] = column == self.value(value)
        return comparison

    def op_ne(self, column: ColumnElement[Any], value: Any) -> ColumnElement[bool]:  # noqa: D102
        return or_(column != self.value(value), column.is_(None))

    def op_gt(self, column: ColumnElement[Any], value: Any) -> ColumnElement[bool]:  # noqa: D102
        comparison: ColumnElement[bool] = column > self.value(value)
        return comparison

    def op_gte(self, column: ColumnElement[Any], value: Any) -> ColumnElement[bool]:  # noqa: D102
        comparison: ColumnElement[bool] = column >= self.value(value)
        return comparison

    def op_lt(self, column: ColumnElement[Any], value: Any) -> ColumnElement[bool]:  # noqa: D102
        comparison: ColumnElement[bool] = column < self.value(value)
        return comparison

    def op_lte(self, column: ColumnElement[Any], value: Any) -> ColumnElement[bool]:  # noqa: D102
        comparison: ColumnElement[bool] = column <= self.value(value)
        return comparison

    def op_in(self, column: ColumnElement[Any], value: tuple[Any, ...]) -> ColumnElement[bool]:  # noqa: D102
        return column.in_([self.value(item) for item in value]) if value else false()

    def op_nin(self, column: ColumnElement[Any], value: tuple[Any, ...]) -> ColumnElement[bool]:  # noqa: D102
        return or_(column.not_in([self.value(item) for item in value]), column.is_(None)) if value else true()

    def op_isnull(self, column: ColumnElement[Any], value: bool) -> ColumnElement[bool]:  # noqa: D102, FBT001
        return column.is_(None) if value else column.is_not(None)

    def op_like(self, column: ColumnElement[Any], value: LikePattern) -> ColumnElement[bool]:  # noqa: D102
        return self._like(column, value)

    def op_ilike(self, column: ColumnElement[Any], value: str) -> ColumnElement[bool]:  # noqa: D102
        return self._ilike(column, contains_pattern(value))

    def op_startswith(self, column: ColumnElement[Any], value: str) -> ColumnElement[bool]:  # noqa: D102
        return self._like(column, contains_pattern(value, leading=False))

    def op_istartswith(self, column: ColumnElement[Any], value: str) -> ColumnElement[bool]:  # noqa: D102
        return self._ilike(column, contains_pattern(value, leading=False))

    def op_endswith(self, column: ColumnElement[Any], value: str) -> ColumnElement[bool]:  # noqa: D102
        return self._like(column, contains_pattern(value, trailing=False))

    def op_iendswith(self, column: ColumnElement[Any], value: str) -> ColumnElement[bool]:  # noqa: D102
        return self._ilike(column, contains_pattern(value, trailing=False))
