"""``ListQuery`` -> Piccolo ``QueryString`` statements for the page and the total.

To-one paths follow Piccolo's foreign-key chains (``Thing.owner.role.code``): one LEFT JOIN alias per
path, named by Piccolo (``things$owner$users$role``). To-many paths (``M2M`` and declared reverse
keys) become semi-joins, ``<key> IN (SELECT <link> FROM <link table> ... WHERE ...)``: no row repeats
and totals stay exact (DESIGN.md, "Relation paths"). They are uncorrelated on purpose: Piccolo cannot
alias a query's own table, so a correlated EXISTS over a self-referencing relation would bind the
inner table where the outer one was meant.

Statements are rendered from column metadata only, never through ``Table._meta.db``: the backend's
engine, not the process-wide one of ``piccolo_conf``, decides where they run.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from piccolo.columns import Column, ForeignKey
from piccolo.columns.combination import UNDEFINED, And, Or, Where, WhereRaw
from piccolo.querystring import QueryString
from piccolo.table import Table

from litestar_listing.backends._sqlite import FOLD_FUNCTION, is_ascii_sql
from litestar_listing.backends.base import dispatch, field_filter
from litestar_listing.backends.piccolo.introspection import Relation, Tables
from litestar_listing.core.query import Combine, FieldPath, Filter, ListQuery, OrderTerm, Search
from litestar_listing.core.text import LIKE_ESCAPE, LikePattern, contains_pattern, fold_case

__all__ = (
    "DEFERRED_OFFSET",
    "FOLD_FUNCTION",
    "KEY_LABEL",
    "Anchor",
    "Dialect",
    "QueryCompiler",
    "opaque",
    "render_condition",
    "select_statement",
)


DEFERRED_OFFSET = 1000
"""From this many skipped rows on, a page is fetched by a deferred join (keys first, then rows)."""

KEY_LABEL = "_listing_key_"
"""Prefix of the aliases of the ordering values a page statement selects for keyset continuation."""

Dialect = Literal["sqlite", "postgres"]
Anchor = Any  # a Table class (the scope's own table) or a ForeignKey copy carrying its call chain
Leaf = Callable[[Any], QueryString]

_TRUE = "1 = 1"
_FALSE = "1 = 0"


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
    offset: int = 0,
) -> QueryString:
    """``SELECT <selected> FROM <table> <joins> [WHERE] [ORDER BY] [LIMIT OFFSET]``.

    The joins are those the columns of ``selected``, ``where`` and ``order`` need.
    """
    parts: list[QueryString] = [*selected, *([] if where is None else [where]), *order]
    columns = [column for part in parts for column in part.columns]
    # Only identifiers from the table metadata enter the template; every value is a parameter.
    from_table = table._meta.get_formatted_tablename()
    template = "SELECT " + ", ".join("{}" for _ in selected) + f" FROM {from_table}"  # noqa: S608
    for join in _joins(columns):
        template += f" {join}"
    args: list[Any] = list(selected)
    if where is not None:
        template += " WHERE {}"
        args.append(where)
    if order:
        template += " ORDER BY " + ", ".join("{}" for _ in order)
        args.extend(order)
    if limit is not None:
        # Parameters, not literals: SQLite plans a literal LIMIT/OFFSET worse (issue 6's measurement).
        template += " LIMIT {} OFFSET {}"
        args.extend((int(limit), int(offset)))
    return QueryString(template, *args)


class QueryCompiler:
    """Compiles queries for one table on one SQL dialect.

    Args:
        tables: The listed table and every table reachable from it.
        computed: Computed aliases mapped to SQL expressions (spec §4.3.2).
        where: The base list query's condition, e.g. excluding soft-deleted rows (spec §4.4.11).
        dialect: ``"sqlite"`` or ``"postgres"`` (Piccolo's engine type).
    """

    def __init__(
        self,
        tables: Tables,
        computed: Mapping[str, QueryString],
        where: QueryString | None,
        dialect: Dialect,
    ) -> None:
        self.tables = tables
        self.table = tables.root
        self.computed = computed
        self.base_where = where
        self.dialect: Dialect = dialect

    # -- statements ---------------------------------------------------------------------------
    def compile(
        self, query: ListQuery, selected: Sequence[QueryString], *, keys: bool = False
    ) -> tuple[QueryString, QueryString]:
        """Return ``(page statement, total statement)``; the page selects ``selected``.

        Args:
            query: The query; with ``after``, the page starts after those ordering values instead of
                at an offset (keyset continuation).
            selected: The page's select list.
            keys: Also select each ordering term's value as ``KEY_LABEL + <index>``.
        """
        where = self.where(query)
        total = select_statement(self.table, [QueryString('COUNT(*) AS "total"')], where=where)
        expressions = [self.order_expression(term) for term in query.order]
        order = [self.order_term(term, expression) for term, expression in zip(query.order, expressions, strict=True)]
        if keys:
            selected = [
                *selected,
                *(QueryString(f'{{}} AS "{KEY_LABEL}{index}"', value) for index, value in enumerate(expressions)),
            ]
        window = query.window
        offset = window.offset
        if query.after is not None:
            after = self.keyset(query, expressions)
            where = after if where is None else _conjunction([where, after], "AND")
            offset = 0
        elif offset >= DEFERRED_OFFSET:
            # A deferred join: the skipped rows are walked for their keys alone (an index-only scan
            # where an index covers the order), and only the page's rows are read whole.
            pk = self.table._meta.primary_key
            page_keys = select_statement(
                self.table, [QueryString("{}", pk)], where=where, order=order, limit=window.count, offset=offset
            )
            chosen = QueryString("{} IN ({})", pk, opaque(page_keys))
            page = select_statement(self.table, selected, where=chosen, order=order, limit=window.count)
            return page, total
        page = select_statement(self.table, selected, where=where, order=order, limit=window.count, offset=offset)
        return page, total

    def rows_statement(self, query: ListQuery) -> QueryString:
        """``SELECT 1`` over the rows the total counts, for the planner's estimate of their number."""
        return select_statement(self.table, [QueryString("1")], where=self.where(query))

    def where(self, query: ListQuery) -> QueryString | None:
        """The WHERE condition: base AND forced filters AND (client filters, combined) AND search."""
        parts = [] if self.base_where is None else [self.base_where]
        parts.extend(self.filter(item) for item in query.forced_filters)
        if query.filters:
            client = [self.filter(field_filter(item)) for item in query.filters]
            parts.append(_conjunction(client, "AND" if query.combine is Combine.AND else "OR"))
        if query.search is not None:
            parts.append(self.search(query.search))
        return _conjunction(parts, "AND") if parts else None

    # -- paths --------------------------------------------------------------------------------
    def relation(self, table: type[Table], name: str) -> Relation:
        """The relation ``name`` of ``table``."""
        return self.tables.info[table].relations[name]

    def column(self, table: type[Table], anchor: Anchor, name: str) -> Column:
        """The column of field ``name`` of ``table``, reached through ``anchor``'s joins."""
        return getattr(anchor, self.tables.info[table].fields[name]._meta.name)  # type: ignore[no-any-return]

    def predicate(
        self,
        path: FieldPath,
        leaf: Leaf,
        table: type[Table] | None = None,
        anchor: Anchor = None,
        *,
        semi: bool = False,
    ) -> Any:
        """``leaf`` applied to the column at ``path``; to-many steps become semi-joins.

        On a to-one path with an identity ``leaf`` this is the (joined) column itself. With
        ``semi`` (a ``leaf`` that never holds for NULL), to-one steps become semi-joins too,
        ``<key> IN (SELECT <target key> FROM <target> WHERE ...)``: the same rows (no related row,
        no match), the condition evaluated once per related row, and a count without joins.
        """
        table = self.table if table is None else table
        anchor = table if anchor is None else anchor
        for index, step in enumerate(path.relations):
            relation = self.relation(table, step)
            rest = FieldPath(path.segments[index + 1 :])
            if relation.to_many:
                return self._semi_join(anchor, relation, rest, leaf, semi=semi)
            if semi:
                key = getattr(anchor, relation.column._meta.name)
                target = relation.column._foreign_key_meta.resolved_target_column
                inner = self.predicate(rest, leaf, relation.target, relation.target, semi=True)
                subquery = select_statement(relation.target, [QueryString("{}", target)], where=inner)
                return QueryString("{} IN ({})", key, opaque(subquery))
            anchor = getattr(anchor, relation.column._meta.name)
            table = relation.target
        return leaf(self.column(table, anchor, path.field))

    def _semi_join(
        self, anchor: Anchor, relation: Relation, rest: FieldPath, leaf: Leaf, *, semi: bool = False
    ) -> QueryString:
        key = getattr(anchor, relation.key._meta.name)
        # Inside, the path goes on from the related table: through the joining table's second key
        # for a many-to-many relation, from the related table itself for a reverse key.
        inner_anchor = relation.secondary if relation.secondary is not None else relation.target
        inner = self.predicate(rest, leaf, relation.target, inner_anchor, semi=semi and relation.secondary is None)
        back = relation.column
        condition = QueryString("({} IS NOT NULL AND {})", back, inner)
        subquery = select_statement(relation.link_table, [QueryString("{}", back)], where=condition)
        return QueryString("{} IN ({})", key, opaque(subquery))

    # -- nodes --------------------------------------------------------------------------------
    def filter(self, item: Filter) -> QueryString:
        """One filter; the operator's ``op_<name>`` builds the comparison."""
        build = dispatch(self, "op", item.operator.name)
        # A filter that NULL satisfies must see the NULL of a missing related row: it keeps the join.
        return self.predicate(item.path, lambda column: build(column, item.value), semi=not item.matches_null)  # type: ignore[no-any-return]

    def search(self, search: Search) -> QueryString:
        """Case-insensitive substring search over every searchable path, combined with OR (spec §4.2)."""
        pattern = contains_pattern(search.text)
        parts = [self.predicate(path, lambda column: self._ilike(column, pattern), semi=True) for path in search.paths]
        return _conjunction(parts, "OR")

    def order_expression(self, term: OrderTerm) -> Any:
        """The value ``term`` orders by: a computed alias's expression or a (joined) column."""
        if len(term.path.segments) == 1 and term.path.field in self.computed:
            return self.computed[term.path.field]
        return self.predicate(term.path, lambda column: column)

    def nullable(self, term: OrderTerm, expression: Any) -> bool:
        """Whether ``term``'s value can be NULL: a relation path (a LEFT JOIN), a computed alias, a nullable column."""
        return not (len(term.path.segments) == 1 and isinstance(expression, Column) and not expression._meta.null)

    def order_term(self, term: OrderTerm, expression: Any) -> QueryString:
        """One ORDER BY term over ``expression``; NULLs last in both directions (DESIGN.md, "Order")."""
        direction = "DESC" if term.descending else "ASC"
        return QueryString(f"{{}} {direction}" + (" NULLS LAST" if self.nullable(term, expression) else ""), expression)

    def keyset(self, query: ListQuery, expressions: Sequence[Any]) -> QueryString:
        """Rows that sort after ``query.after`` in ``query.order`` (``core.cursor.follows`` in SQL).

        One disjunct per term: the earlier terms equal, this one after (NULLs last); plus a bound
        on the leading term alone, which lets the database start from an index position. When
        every term has one direction and cannot be NULL, a row-value comparison says the same.
        """
        assert query.after is not None  # noqa: S101 - only called for a continued query
        terms = list(zip(query.order, expressions, query.after, strict=True))
        directions = {term.descending for term in query.order}
        if len(directions) == 1 and not any(
            self.nullable(term, expression) or bound is None for term, expression, bound in terms
        ):
            marks = ", ".join("{}" for _ in terms)
            operator = "<" if query.order[0].descending else ">"
            values = [self.value(bound) for _, _, bound in terms]
            return QueryString(f"({marks}) {operator} ({marks})", *expressions, *values)
        disjuncts: list[QueryString] = []
        equal: list[QueryString] = []
        for term, expression, bound in terms:
            if bound is not None:
                beyond = QueryString("{} < {}" if term.descending else "{} > {}", expression, self.value(bound))
                if self.nullable(term, expression):
                    beyond = QueryString("({} OR {} IS NULL)", beyond, expression)
                disjuncts.append(_conjunction([*equal, beyond], "AND"))
            equal.append(
                QueryString("{} IS NULL", expression)
                if bound is None
                else QueryString("{} = {}", expression, self.value(bound))
            )
        lead_term, lead, lead_bound = terms[0]
        if lead_bound is None:
            leading = QueryString("{} IS NULL", lead)
        else:
            leading = QueryString("{} <= {}" if lead_term.descending else "{} >= {}", lead, self.value(lead_bound))
            if self.nullable(lead_term, lead):
                leading = QueryString("({} OR {} IS NULL)", leading, lead)
        after = _conjunction(disjuncts, "OR") if disjuncts else QueryString(_FALSE)
        return _conjunction([leading, after], "AND")

    # -- values and text ----------------------------------------------------------------------
    @staticmethod
    def value(value: Any) -> Any:
        """A coerced value as the driver takes it: enums by their value (spec §4.4.5)."""
        return value.value if isinstance(value, enum.Enum) else value

    def _like(self, column: Column, pattern: LikePattern) -> QueryString:
        if self.dialect == "sqlite":
            return QueryString("{} GLOB {}", column, pattern.to_glob())
        return QueryString(f"{{}} LIKE {{}} ESCAPE '{LIKE_ESCAPE}'", column, pattern.to_like())

    def _ilike(self, column: Column, pattern: LikePattern) -> QueryString:
        if self.dialect == "sqlite":
            # SQLite's LIKE on ASCII text (as many bytes as characters), the Python fold on the rest.
            like = f"LIKE {{}} ESCAPE '{LIKE_ESCAPE}'"
            template = f"(CASE WHEN {is_ascii_sql('{}')} THEN {{}} {like} ELSE {FOLD_FUNCTION}({{}}) {like} END)"
            folded = fold_case(pattern.to_like())
            return QueryString(template, column, column, column, folded, column, folded)
        return QueryString(f"lower({{}}) LIKE lower({{}}) ESCAPE '{LIKE_ESCAPE}'", column, pattern.to_like())

    def _compare(self, operator: str, column: Column, value: Any) -> QueryString:
        return QueryString(f"{{}} {operator} {{}}", column, self.value(value))

    # -- operators (one per entry of core.operators.OPERATORS) --------------------------------
    def op_eq(self, column: Column, value: Any) -> QueryString:  # noqa: D102
        return self._compare("=", column, value)

    def op_ne(self, column: Column, value: Any) -> QueryString:  # noqa: D102
        return QueryString("({} <> {} OR {} IS NULL)", column, self.value(value), column)

    def op_gt(self, column: Column, value: Any) -> QueryString:  # noqa: D102
        return self._compare(">", column, value)

    def op_gte(self, column: Column, value: Any) -> QueryString:  # noqa: D102
        return self._compare(">=", column, value)

    def op_lt(self, column: Column, value: Any) -> QueryString:  # noqa: D102
        return self._compare("<", column, value)

    def op_lte(self, column: Column, value: Any) -> QueryString:  # noqa: D102
        return self._compare("<=", column, value)

    def _values(self, values: tuple[Any, ...]) -> QueryString:
        return QueryString(", ".join("{}" for _ in values), *map(self.value, values))

    def op_in(self, column: Column, value: tuple[Any, ...]) -> QueryString:  # noqa: D102
        # Piccolo's own is_in([]) raises; an empty list matches nothing.
        return QueryString("{} IN ({})", column, self._values(value)) if value else QueryString(_FALSE)

    def op_nin(self, column: Column, value: tuple[Any, ...]) -> QueryString:  # noqa: D102
        if not value:
            return QueryString(_TRUE)
        return QueryString("({} NOT IN ({}) OR {} IS NULL)", column, self._values(value), column)

    def op_isnull(self, column: Column, value: bool) -> QueryString:  # noqa: D102, FBT001
        return QueryString("{} IS NULL" if value else "{} IS NOT NULL", column)

    def op_like(self, column: Column, value: LikePattern) -> QueryString:  # noqa: D102
        return self._like(column, value)

    def op_ilike(self, column: Column, value: str) -> QueryString:  # noqa: D102
        return self._ilike(column, contains_pattern(value))

    def op_startswith(self, column: Column, value: str) -> QueryString:  # noqa: D102
        return self._like(column, contains_pattern(value, leading=False))

    def op_istartswith(self, column: Column, value: str) -> QueryString:  # noqa: D102
        return self._ilike(column, contains_pattern(value, leading=False))

    def op_endswith(self, column: Column, value: str) -> QueryString:  # noqa: D102
        return self._like(column, contains_pattern(value, trailing=False))

    def op_iendswith(self, column: Column, value: str) -> QueryString:  # noqa: D102
        return self._ilike(column, contains_pattern(value, trailing=False))
