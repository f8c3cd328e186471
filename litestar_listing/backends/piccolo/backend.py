"""``PiccoloBackend``: runs compiled list statements on a Piccolo engine."""

from __future__ import annotations

import functools
import re
import sqlite3
from collections import OrderedDict
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from piccolo.columns import Column
from piccolo.engine.base import Engine
from piccolo.engine.sqlite import dict_factory
from piccolo.querystring import QueryString

from litestar_listing.backends._sqlite import (
    DEFAULT_STATEMENT_TIMEOUT,
    FOLD_FUNCTION,
    ReadPool,
    ReadSnapshot,
    StatementGuard,
    fold_value,
)
from litestar_listing.backends.base import (
    TOTAL_MODES,
    Capabilities,
    Computed,
    ListContext,
    Page,
    PerPolicies,
    driver_unavailable,
    read_models,
)
from litestar_listing.backends.piccolo.compiler import Compiled, Dialect, QueryCompiler, TableAlias, render_condition
from litestar_listing.backends.piccolo.introspection import Tables, field_info
from litestar_listing.backends.piccolo.loading import Guard, Node, Selection, load_many, plan
from litestar_listing.backends.relational.compiler import KEY_LABEL, with_followed
from litestar_listing.backends.relational.replicas import LAG_QUERY, Replica, ReplicaSet
from litestar_listing.backends.relational.shapes import OFFSET, Shapes, Slot, shape_of
from litestar_listing.backends.relational.totals import count_beside, may_count_apart, planner_rows, total_of
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.query import ListQuery, Policy, load_tree
from litestar_listing.core.schema import FieldInfo, ModelGraph

if TYPE_CHECKING:
    from piccolo.columns import ForeignKey
    from piccolo.table import Table

__all__ = ("FoldingConnection", "PiccoloBackend", "policy_condition", "prepare_engine")

_DIALECTS: Mapping[str, Dialect] = {"sqlite": "sqlite", "postgres": "postgres"}

_ALIAS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A table alias ``policy_condition`` renders (quoted): an SQL identifier, never one of Piccolo's join aliases."""

_PageSelection = tuple[Node, list[QueryString], list[tuple[str, str]]]
"""The listed entity's plan, the page's select list, and ``(computed name, alias)`` pairs."""


@dataclass(frozen=True, slots=True)
class _Statements:
    """What one query shape compiles to: its page and total statements, and how rows become items."""

    page: Compiled
    total: Compiled
    node: Node
    extras: list[tuple[str, str]]
    guard: Guard | None


class FoldingConnection(sqlite3.Connection):
    """A SQLite connection with the case-folding function and a statement time limit.

    SQLite's own ``lower()`` and ``LIKE`` fold ASCII only, and Piccolo's ``ilike`` is a plain ``LIKE``
    on SQLite; ``listing_fold`` gives the per-character Unicode lowercase of the other databases.
    A ``StatementGuard`` aborts any statement running longer than ``statement_timeout`` seconds
    (SQLite has no statement timeout, and a cancelled request cannot stop its thread).
    """

    statement_timeout: float | None = DEFAULT_STATEMENT_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.create_function(FOLD_FUNCTION, 1, fold_value, deterministic=True)
        StatementGuard(self.statement_timeout).install(self)


def prepare_engine(engine: Engine[Any], *, statement_timeout: float | None = DEFAULT_STATEMENT_TIMEOUT) -> None:
    """Make ``engine`` ready for listing: on SQLite, the case-folding function and a statement limit.

    Piccolo's ``SQLiteEngine`` opens a connection per statement or transaction; this sets the
    connection ``factory`` it passes to ``sqlite3.connect`` (a ``FoldingConnection`` whose
    statements stop after ``statement_timeout`` seconds; None: no limit). Idempotent: the first
    call's limit stays.

    Raises:
        ConfigurationError: The engine already has another connection factory.
    """
    if engine.engine_type != "sqlite":
        return
    kwargs: dict[str, Any] = engine.connection_kwargs  # type: ignore[attr-defined]
    if "factory" not in kwargs:
        limit = statement_timeout
        kwargs["factory"] = (
            FoldingConnection
            if limit == FoldingConnection.statement_timeout
            else type("FoldingConnection", (FoldingConnection,), {"statement_timeout": limit})
        )
    factory = kwargs["factory"]
    if not (isinstance(factory, type) and issubclass(factory, FoldingConnection)):
        msg = f"the SQLite engine's connection factory {factory!r} must subclass {FoldingConnection.__qualname__}"
        raise ConfigurationError(msg)


class PiccoloBackend:
    """Lists one Piccolo table (spec §4; DESIGN.md decisions).

    Args:
        table: The listed ``Table`` subclass.
        engine: The engine every statement runs on. None means the table's own (``Table(db=...)``
            or ``piccolo_conf``), looked up when the application starts.
        where: The base list query's condition, e.g. ``Thing.deleted_at.is_null()`` to hide
            soft-deleted rows (spec §4.4.11): a Piccolo condition or a ``QueryString``.
        computed: Computed aliases mapped to ``(SQL expression, column type)``; the expression may be a
            ``Computed``, built per list from the request's row policies of the tables it reads
            (``allowed(Table, alias=None)`` is ``policy_condition``'s over the rows the statement
            reads as ``alias``, the table's own name by default, or an always-true condition), e.g.
            ``{"part_count": (QueryString("(SELECT COUNT(*) FROM parts WHERE parts.thing_id = {})",
            Thing.id), Integer())}``; they are orderable and appear in each item (spec §4.3.2).
            Rows of the listed table itself (a self-reference) are read under an alias:
            ``FROM things AS "child"`` and ``allowed(Thing, "child")``.
        reverse: Reverse relations (to-many) by name, each as the foreign key pointing back, e.g.
            ``{"parts": Part.thing}``; Piccolo declares no such side itself.
        replicas: Read replicas (PostgreSQL hot standbys) by their names in the engine's
            ``extra_nodes``, e.g. ``("replica",)`` for ``PostgresEngine(extra_nodes={"replica": ...})``.
            A list runs on one of them, in turn, unless it runs inside the caller's transaction
            (``engine.transaction()``) or ``ListContext.primary`` is set; a replica that is down or lags
            more than ``max_replica_lag`` seconds is skipped, and a list it fails (unreachable, or
            cancelled by a recovery conflict) runs again on the primary (docs: "Scaling out").
        max_replica_lag: Seconds of replay lag beyond which a replica is skipped.

    Raises:
        ConfigurationError: A ``Computed`` value passes ``allowed`` a table it does not name in
            ``reads``, an alias that is not an SQL identifier, or rows under the listed table's own
            name: in the value's subquery those columns are the listed row's, so the condition would
            restrict it, not the rows the value counts (docs: "Computed values", docs/guide/computed.md).

    A ``ForeignKey`` gives a relation under its attribute name and a field under its column name
    (``owner`` and ``owner_id``). Items are dicts of the public fields, the computed values and the
    eager-loaded relations; to-many relations list their rows in primary-key order.
    """

    capabilities = Capabilities(
        keyset=True, total_modes=frozenset(TOTAL_MODES), row_policies=True, inherited_policies=True
    )
    visitor = QueryCompiler
    """The class whose ``op_<name>`` methods compile the declared operators (``check_contract``)."""

    def __init__(
        self,
        table: type[Table],
        *,
        engine: Engine[Any] | None = None,
        where: Any = None,
        computed: Mapping[str, tuple[QueryString | Computed[type[Table], QueryString], Column | type[Column]]]
        | None = None,
        reverse: Mapping[str, ForeignKey[Any]] | None = None,
        replicas: Sequence[str] = (),
        max_replica_lag: float = 5.0,
    ) -> None:
        self.table = table
        self.engine = engine
        self.replica_names = tuple(replicas)
        self.max_replica_lag = max_replica_lag
        self._replicas: dict[int, ReplicaSet[Engine[Any]]] = {}
        self._tables = Tables(table, reverse)
        self._graph = self._tables.model_graph()
        self._where = None if where is None else render_condition(where)
        self._computed = {name: expression for name, (expression, _) in (computed or {}).items()}
        self._reads = read_models(self._computed.values(), _name)
        if self._reads:
            self._graph = self._graph.including(
                Tables(read).model_graph()
                for value in self._computed.values()
                if isinstance(value, Computed)
                for read in value.reads
            )
        # Built once without policies, so that a Computed value asking for rows it cannot police is
        # refused here, before any request.
        self._expressions({}, "postgres")
        self._computed_fields: dict[str, FieldInfo] = {}
        for name, (expression, column_type) in (computed or {}).items():
            column = column_type() if isinstance(column_type, type) else column_type
            reads = expression.read_names(_name) if isinstance(expression, Computed) else ()
            self._computed_fields[name] = field_info(name, column, computed=True, reads=reads)
        self._compilers: PerPolicies[QueryCompiler] = PerPolicies(self._reads)
        self._shapes: Shapes[_Statements] = Shapes()

    @property
    def narrows_rows(self) -> bool:
        """Whether a base list query may leave rows of the model out (e.g. soft-deleted ones, spec §4.4.11).

        The plugin's start-up check treats such a model as scoped: a relation path reaching it
        from another resource needs a row policy (DESIGN.md, "Row policies").
        """
        return self._where is not None

    def model_graph(self) -> ModelGraph:
        """The table and its relations, introspected once."""
        return self._graph

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        """The computed aliases and their types."""
        return self._computed_fields

    def engine_for(self, context: ListContext) -> Engine[Any]:
        """The engine of a call: ``context.session`` if it is one, else ``engine``, else the table's.

        Raises:
            ConfigurationError: No engine is configured for the table.
        """
        if isinstance(context.session, Engine):
            return context.session
        if self.engine is not None:
            return self.engine
        try:
            return self.table._meta.db
        except Exception as error:  # Piccolo raises a bare Exception without piccolo_conf
            msg = f"{self.table.__name__} has no Piccolo engine: pass PiccoloBackend(engine=...) or set up piccolo_conf"
            raise ConfigurationError(msg) from error

    def prepare(self) -> None:
        """Check that an engine is known and ready it for listing (see ``prepare_engine``).

        Raises:
            ConfigurationError: No engine, or an engine type other than SQLite and PostgreSQL.
        """
        engine = self.engine_for(ListContext())
        self.compiler(engine)
        prepare_engine(engine)

    def compiler(self, engine: Engine[Any], query: ListQuery | None = None) -> QueryCompiler:
        """The statement compiler for ``engine``'s dialect and the policies of ``query`` that ``Computed`` values read.

        Kept per dialect, and per distinct set of such policies (``PerPolicies``).

        Raises:
            ConfigurationError: The engine is neither SQLite nor PostgreSQL.
        """
        dialect = _DIALECTS.get(engine.engine_type)
        if dialect is None:
            msg = f"PiccoloBackend runs on SQLite and PostgreSQL, not {engine.engine_type!r}"
            raise ConfigurationError(msg)

        def build(policies: Mapping[str, Policy]) -> QueryCompiler:
            return QueryCompiler(self._tables, self._expressions(policies, dialect), self._where, dialect)

        return self._compilers.get(engine.engine_type, query, build)

    def _expressions(self, policies: Mapping[str, Policy], dialect: Dialect) -> dict[str, QueryString]:
        """The computed expressions of a list with ``policies`` on ``dialect`` (``Computed`` values built for them).

        Raises:
            ConfigurationError: A ``Computed`` value asks for rows under the listed table's own name,
                or under an alias that is not an SQL identifier.
        """
        listed = self.table._meta.tablename

        def condition(table: type[Table], alias: object, policy: Policy | None) -> QueryString:
            if alias is not None and not isinstance(alias, str):
                msg = f"allowed({table.__name__}, {alias!r}): the alias is the name the statement reads the rows as"
                raise ConfigurationError(msg)
            if (alias or table._meta.tablename) == listed:
                shown = table.__name__ if alias is None else f"{table.__name__}, {alias!r}"
                msg = (
                    f'allowed({shown}) is over "{listed}", the name the listed rows are read under: in the '
                    f"value's subquery those columns are the listed row's, so the condition would be about "
                    f"that row (which its own policy restricts already), not about the rows the value "
                    f'counts. Read them under an alias and pass it: FROM {table._meta.tablename} AS "child" '
                    f'and allowed({table.__name__}, "child")'
                )
                raise ConfigurationError(msg)
            allowed = policy_condition(table, policy, dialect, alias=alias, policies=policies)
            return _table_compiler(table, dialect).constant(value=True) if allowed is None else allowed

        return {
            name: value.built(name, _name, condition, policies) if isinstance(value, Computed) else value
            for name, value in self._computed.items()
        }

    def _page_selection(
        self, load: tuple[str, ...], computed: Mapping[str, QueryString], guard: Guard | None = None
    ) -> _PageSelection:
        """What the page statement selects for ``load`` and the ``computed`` values of the list's compiler.

        Built once per query shape, and kept with its statements (``_statements``).

        Raises:
            ConfigurationError: ``load`` names no relation.
        """
        selection = Selection()
        node = plan(self._tables, self.table, self.table, load_tree(load), selection, optional=False, guard=guard)
        extras = [(name, selection.add(expression)) for name, expression in computed.items()]
        return node, selection.columns, extras

    def _statements(
        self, compiler: QueryCompiler, query: ListQuery, context: ListContext
    ) -> tuple[_Statements, dict[str, object]]:
        """The statements of ``query``'s shape (compiled once per shape, ``Shapes``), and its values to bind.

        Kept per compiler (dialect, and the policies ``Computed`` values read), shape
        (``shapes.shape_of``: the query without its field values and page offset, its row policies
        whole), keyset and eager loads.
        """
        shape, values = shape_of(query)

        def build() -> _Statements:
            guard = compiler.load_guard(shape) if context.load and shape.policies else None
            node, columns, extras = self._page_selection(context.load, compiler.computed, guard)
            page, total = compiler.compile(shape, columns, keys=context.keyset, offset=Slot(OFFSET, int))
            return _Statements(
                Compiled.of(page, compiler.dialect), Compiled.of(total, compiler.dialect), node, extras, guard
            )

        return self._shapes.get((compiler, shape, context.keyset, context.load), build), values

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        """Run the page statement, the total when the page does not tell it, and the eager loads.

        Inside the caller's transaction (``engine.transaction()``) the list runs in a SAVEPOINT, so
        its timeout or a store error leaves that transaction usable.

        Raises:
            ConfigurationError: No engine, or ``context.load`` names no relation.
            UnavailableError: The database failed to answer (``driver_unavailable``).
        """
        try:
            return await self._fetch(query, context)
        except Exception as error:
            mapped = driver_unavailable(error)
            if mapped is None:
                raise
            raise mapped from error

    async def _fetch(self, query: ListQuery, context: ListContext) -> Page:
        engine = self.engine_for(context)
        prepare_engine(engine)
        transaction = engine.current_transaction.get()
        if transaction is not None:
            return await self._in_savepoint(query, context, engine, transaction)
        replicas = self._replica_set(engine) if self.replica_names and not context.primary else None
        if replicas:
            page = await replicas.serve(_replica_lag, lambda node: self._pooled(query, context, node))
            if page is not None:
                return page
        if engine.engine_type == "sqlite":
            # Piccolo opens a SQLite connection (and its thread) per statement outside a transaction;
            # a pooled connection and one read transaction give the page, the total and the eager
            # loads one snapshot, the page and its total in one thread hop (``ReadPool``).
            async with read_pool(engine).snapshot() as snapshot:
                return await self._list(query, context, engine, snapshot)
        return await self._pooled(query, context, engine)

    async def _pooled(self, query: ListQuery, context: ListContext, engine: Engine[Any]) -> Page:
        """List on one connection of ``engine`` (PostgreSQL): pooled, or of the list's own without a pool."""
        pool = getattr(engine, "pool", None)
        if pool is None:
            # Without a pool Piccolo opens a connection per statement and, when the statement is
            # cancelled, never closes it; one connection of the list's own gets asyncpg's timeout.
            connection = await engine.get_new_connection()  # type: ignore[attr-defined]
            try:
                return await self._list(query, context, engine, connection)
            finally:
                await connection.close()
        # One pooled connection for the page, the total and the eager loads: under load, a request
        # that queued for the pool once per statement would time out between its statements.
        async with pool.acquire() as connection:
            return await self._list(query, context, engine, connection, pool)

    def _replica_set(self, engine: Engine[Any]) -> ReplicaSet[Engine[Any]]:
        """The replicas of ``engine`` (its ``extra_nodes`` named by ``replicas``), made once per engine.

        Raises:
            ConfigurationError: A name is not among the engine's ``extra_nodes``.
        """
        replicas = self._replicas.get(id(engine))
        if replicas is None:
            nodes: Mapping[str, Engine[Any]] = getattr(engine, "extra_nodes", None) or {}
            missing = [name for name in self.replica_names if name not in nodes]
            if missing:
                msg = (
                    f"{self.table.__name__}: replicas {missing} are not among the engine's extra_nodes {sorted(nodes)}"
                )
                raise ConfigurationError(msg)
            replicas = ReplicaSet(
                [Replica(nodes[name], name) for name in self.replica_names], max_lag=self.max_replica_lag
            )
            self._replicas[id(engine)] = replicas
        return replicas

    async def _in_savepoint(
        self, query: ListQuery, context: ListContext, engine: Engine[Any], transaction: Any
    ) -> Page:
        """List inside the caller's transaction, in a SAVEPOINT that a timeout or a store error rolls back to.

        On PostgreSQL a statement that fails (or is cancelled at the deadline) aborts the whole
        transaction; rolling back to the savepoint makes it usable again. The statements run on the
        transaction's connection: on PostgreSQL with asyncpg's per-statement ``timeout``, which sets
        nothing on the session, so no limit outlives the list; on SQLite under the connection's own
        ``StatementGuard`` (``FoldingConnection``).
        """
        savepoint = await transaction.savepoint()
        try:
            page = await self._list(query, context, engine, transaction.connection)
        except BaseException:
            await savepoint.rollback_to()
            raise
        await savepoint.release()
        return page

    async def _list(
        self, query: ListQuery, context: ListContext, engine: Engine[Any], connection: Any, pool: Any = None
    ) -> Page:
        """List on ``connection``: an asyncpg connection, a ``ReadSnapshot``, or a transaction's aiosqlite connection.

        With the asyncpg ``pool`` the connection came from, the count may run on a second
        connection beside the page (``_count_apart``).
        """
        compiler = self.compiler(engine, query)
        dialect = compiler.dialect
        statements, values = self._statements(compiler, query, context)

        async def run(statement: QueryString) -> list[dict[str, Any]]:
            return await fetch(statement.compile_string(engine_type=engine.engine_type))

        async def fetch(compiled: tuple[str, list[Any]]) -> list[dict[str, Any]]:
            sql, arguments = compiled
            if isinstance(connection, ReadSnapshot):
                return await connection.fetch(sql, arguments)
            if dialect == "sqlite":
                # The caller's transaction's aiosqlite connection, its rows as Piccolo makes them.
                connection.row_factory = dict_factory
                async with connection.execute(sql, arguments) as cursor:
                    return list(await cursor.fetchall())
            # asyncpg's timeout asks PostgreSQL to cancel the statement and keeps the connection;
            # the time left is measured now, after the wait for the pooled connection.
            rows = await connection.fetch(sql, *arguments, timeout=context.remaining())
            return engine.transform_response_to_dicts(rows)

        page_statement, total_statement = statements.page.bound(values), statements.total.bound(values)
        beside = None
        if pool is not None and context.total_mode == "exact":
            beside = await _count_apart(pool, total_statement, context)
        async with count_beside(beside) as counting:
            counted: list[dict[str, Any]] | None = None
            held: object = connection  # tested apart: ``connection`` keeps its type for ``estimate``
            snapshot = held if isinstance(held, ReadSnapshot) else None
            if snapshot is not None:
                # The page, then its total when the page does not tell it, in one thread hop.
                rows, counted = await snapshot.fetch_page(
                    page_statement, total_statement, lambda size: query.total_from_page(size) is None
                )
            else:
                rows = await fetch(page_statement)

            async def count() -> int:
                if counting is not None:
                    return await counting
                return int((counted or await fetch(total_statement))[0]["total"])

            async def estimate() -> int | None:
                sql, arguments = compiler.rows_statement(query).compile_string(engine_type=dialect)

                async def explain(statement: str) -> object:
                    return await connection.fetchval(statement, *arguments, timeout=context.remaining())

                return await planner_rows(explain, sql)

            total, estimated = await total_of(
                query, len(rows), context, count=count, estimate=estimate if dialect == "postgres" else None
            )
        node, extras = statements.node, statements.extras
        pairs: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
        for row in rows:
            item = node.item(row)
            assert item is not None  # noqa: S101 - the listed entity is never optional
            item.update((name, row[alias]) for name, alias in extras)
            pairs.append((row, item))
        await load_many(self._tables, run, node, pairs, statements.guard)
        last_key = None
        if context.keyset and rows:
            last_key = tuple(rows[-1][f"{KEY_LABEL}{index}"] for index in range(len(query.order)))
        return Page(
            items=[item for _, item in pairs],
            total=total,
            total_mode="estimated" if estimated else "exact",
            last_key=last_key,
        )


def _name(table: type[Table]) -> str:
    return table.__name__


async def _count_apart(
    pool: Any, total: tuple[str, list[Any]], context: ListContext
) -> Coroutine[Any, Any, int] | None:
    """The count on a second connection of the asyncpg ``pool``, to run beside the page (``count_beside``).

    Only for a list outside the caller's transaction: at READ COMMITTED each statement sees a
    snapshot of its own, so the count sees what it would have seen on the page's connection. Only
    while the pool is mostly idle (``may_count_apart``: with both connections taken, at most half
    of its ``max_size`` in use), so the pool hands it over at once and a list never waits for a
    second connection while it holds one; under load, lists count after the page on their own
    connection. The count has the list's time left, as asyncpg's statement timeout. None: count on
    the page's connection.
    """
    in_use = pool.get_size() - pool.get_idle_size()  # the page's connection among them
    if not may_count_apart(in_use - 1, pool.get_max_size()):
        return None
    # A free place is in the pool's queue: it is taken without waiting, before another task can.
    other = await pool.acquire()
    sql, arguments = total

    async def count() -> int:
        try:
            # fetch, not fetchval: asyncpg's fetchval (a one-row limit) keeps PostgreSQL's parallel workers out.
            return int((await other.fetch(sql, *arguments, timeout=context.remaining()))[0][0])
        finally:
            await pool.release(other)

    return count()


_READ_POOLS: OrderedDict[int, tuple[Engine[Any], ReadPool]] = OrderedDict()
_MOST_READ_POOLS = 32


def read_pool(engine: Engine[Any]) -> ReadPool:
    """The pool of read connections of a SQLite ``engine``, made on first use (``ReadPool``).

    Its connections are opened with the engine's own ``connection_kwargs`` (so with Piccolo's
    type converters and the ``FoldingConnection`` factory of ``prepare_engine``) and Piccolo's rows
    as dicts. The pools of the 32 engines used last are kept; an older one closes its connections.
    """
    key = id(engine)
    held = _READ_POOLS.get(key)
    if held is not None and held[0] is engine:
        _READ_POOLS.move_to_end(key)
        return held[1]
    kwargs: dict[str, Any] = {**engine.connection_kwargs, "check_same_thread": False}  # type: ignore[attr-defined]

    def connect() -> sqlite3.Connection:
        connection: sqlite3.Connection = sqlite3.connect(**kwargs)
        connection.row_factory = dict_factory
        return connection

    database = str(kwargs.get("database", ""))
    file = None if kwargs.get("uri") or database in {"", ":memory:"} else database
    pool = ReadPool(connect, file)
    if held is not None:
        held[1].close()
    _READ_POOLS[key] = (engine, pool)
    while len(_READ_POOLS) > _MOST_READ_POOLS:
        _READ_POOLS.popitem(last=False)[1][1].close()
    return pool


@functools.lru_cache(maxsize=64)
def _table_compiler(table: type[Table], dialect: Dialect) -> QueryCompiler:
    return QueryCompiler(Tables(table), {}, None, dialect)


def policy_condition(
    table: type[Table],
    policy: Policy | None,
    engine_type: str = "postgres",
    *,
    alias: str | None = None,
    policies: Mapping[str, Policy] | None = None,
) -> QueryString | None:
    """The condition ``policy`` puts on rows of ``table``, for statements of one's own (docs: scoping, "Row policies").

    For enrichment and computed values that count rows of a table with a policy; ``policies`` come
    from ``request_policies(context)``.

    Args:
        table: The table the statement reads.
        policy: Its policy for the request, or None for none.
        engine_type: The engine's ``engine_type`` (``"sqlite"`` or ``"postgres"``).
        alias: The name the statement reads the rows as, ``FROM <table> AS "<alias>"``: the columns
            are ``"<alias>"."<column>"``. None: those of ``table`` itself, ``"<table>"."<column>"``
            (``FROM <table>`` without an alias).
        policies: Every policy of the request by model name, which a policy that follows a relation
            (``RowPolicy(through=...)``) reads for the related table.

    Returns:
        The condition (compiled by the shared compiler, as for listed rows), or None when ``policy``
        restricts nothing.

    Raises:
        ConfigurationError: ``engine_type`` is neither SQLite nor PostgreSQL, ``alias`` is not an SQL
            identifier (letters, digits and underscores, not starting with a digit), or ``policy``
            follows a relation and ``policies`` was not given.
    """
    if alias is not None and not _ALIAS.fullmatch(alias):
        msg = f"the alias {alias!r} of {table.__name__} is not an SQL identifier (letters, digits, underscores)"
        raise ConfigurationError(msg)
    if policy is None:
        return None
    dialect = _DIALECTS.get(engine_type)
    if dialect is None:
        msg = f"PiccoloBackend runs on SQLite and PostgreSQL, not {engine_type!r}"
        raise ConfigurationError(msg)
    compiler = _table_compiler(table, dialect)
    anchor = table if alias is None else TableAlias(table, alias)
    condition: QueryString | None = compiler.policy_condition(
        (table, anchor), policy.entity, with_followed(policy, policies)
    )
    return condition


async def _replica_lag(engine: Engine[Any]) -> float | None:
    """The replay lag of the replica ``engine`` in seconds (``LAG_QUERY``)."""
    pool = getattr(engine, "pool", None)
    if pool is not None:
        async with pool.acquire() as connection:
            lag = await connection.fetchval(LAG_QUERY)
    else:
        connection = await engine.get_new_connection()  # type: ignore[attr-defined]
        try:
            lag = await connection.fetchval(LAG_QUERY)
        finally:
            await connection.close()
    return None if lag is None else float(lag)
