"""``PiccoloBackend``: lists one Piccolo table on a Piccolo engine.

What runs where (the route, totals, replicas) is the shared execution's (``relational.execution``);
this module holds what is Piccolo's own: the engine, computed values, the page's select list and
eager loading. The readers are in ``readers``, SQLite's connection and read pool in ``sqlite``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from piccolo.columns import Column
from piccolo.engine.base import Engine
from piccolo.querystring import QueryString

from litestar_listing.backends.base import (
    CompilerCache,
    Computed,
    IndexedSearch,
    ListContext,
    TrigramTable,
    driver_unavailable,
    read_models,
)
from litestar_listing.backends.piccolo.compiler import (
    QUERY_COMPILERS,
    Compiled,
    Dialect,
    QueryCompiler,
    engine_database,
    render_condition,
)
from litestar_listing.backends.piccolo.introspection import Tables, TableStorage, field_info
from litestar_listing.backends.piccolo.loading import Guard, Node, Selection, load_many, plan
from litestar_listing.backends.piccolo.policies import policy_condition, table_compiler
from litestar_listing.backends.piccolo.readers import (
    TRANSACTION_READERS,
    AsyncpgReader,
    PiccoloReader,
    SnapshotReader,
    Statements,
    replica_lag,
)
from litestar_listing.backends.piccolo.sqlite import prepare_engine, read_pool
from litestar_listing.backends.relational.compiler import SearchForm, trigram_lookup
from litestar_listing.backends.relational.databases import Database
from litestar_listing.backends.relational.execution import Held, Reader, RelationalBackend, Run
from litestar_listing.backends.relational.indexes import Catalog
from litestar_listing.backends.relational.replicas import Replica, ReplicaSet
from litestar_listing.backends.relational.shapes import OFFSET, Slot
from litestar_listing.core.errors import ConfigurationError, UnavailableError
from litestar_listing.core.query import ListQuery, Policy, load_tree
from litestar_listing.core.schema import FieldInfo

if TYPE_CHECKING:
    from piccolo.columns import ForeignKey
    from piccolo.table import Table

__all__ = ("PiccoloBackend",)

ResultT = TypeVar("ResultT")

_PageSelection = tuple[Node, list[QueryString], list[tuple[str, str]]]
"""The listed entity's plan, the page's select list, and ``(computed name, alias)`` pairs."""


class PiccoloBackend(RelationalBackend[Engine[Any], Engine[Any], QueryCompiler, Statements]):
    """Lists one Piccolo table (docs: backends, "SQLAlchemy"; design).

    Args:
        table: The listed ``Table`` subclass.
        engine: The engine every statement runs on. None means the table's own (``Table(db=...)``
            or ``piccolo_conf``), looked up when the application starts.
        where: The base list query's condition, e.g. ``Thing.deleted_at.is_null()`` to hide
            soft-deleted rows (docs: soft delete): a Piccolo condition or a ``QueryString``.
        computed: Computed aliases mapped to ``(SQL expression, column type)``; the expression may be a
            ``Computed``, built per list from the request's row policies of the tables it reads
            (``allowed(Table, alias=None)`` is ``policy_condition``'s over the rows the statement
            reads as ``alias``, the table's own name by default, or an always-true condition), e.g.
            ``{"part_count": (QueryString("(SELECT COUNT(*) FROM parts WHERE parts.thing_id = {})",
            Thing.id), Integer())}``; they are orderable and appear in each item (docs: computed).
            Rows of the listed table itself (a self-reference) are read under an alias:
            ``FROM things AS "child"`` and ``allowed(Thing, "child")``.
        reverse: Reverse relations (to-many) by name, each as the foreign key pointing back, e.g.
            ``{"parts": Part.thing}``; Piccolo declares no such side itself.
        replicas: Read replicas (PostgreSQL hot standbys) by their names in the engine's
            ``extra_nodes``, e.g. ``("replica",)`` for ``PostgresEngine(extra_nodes={"replica": ...})``.
            A list runs on one of them, in turn, unless it runs inside the caller's transaction
            (``engine.transaction()``) or ``ListContext.primary`` is set; a replica that is down or lags
            more than ``max_replica_lag`` seconds is skipped, and a list it fails (unreachable, or
            cancelled by a recovery conflict) runs again on the primary (docs: scaling, "Read replicas").
        max_replica_lag: Seconds of replay lag beyond which a replica is skipped.
        require_pool: A ``PostgresEngine``'s connection pool, and each named replica's, must be
            started by the time the application has started (a ``ConfigurationError`` then
            otherwise; docs: in your app, "Start-up checks"). False: a list on an engine without
            its pool opens a connection of its own, as Piccolo does for each statement.

    Raises:
        ConfigurationError: A ``Computed`` value passes ``allowed`` a table it does not name in
            ``reads``, an alias that is not an SQL identifier, or rows under the listed table's own
            name: in the value's subquery those columns are the listed row's, so the condition would
            restrict it, not the rows the value counts (docs: computed, "Counting rows of the listed model itself").

    A ``ForeignKey`` gives a relation under its attribute name and a field under its column name
    (``owner`` and ``owner_id``). Items are dicts of the public fields, the computed values and the
    eager-loaded relations; to-many relations list their rows in primary-key order.
    """

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
        require_pool: bool = True,
    ) -> None:
        super().__init__()
        self.table = table
        self.engine = engine
        self.require_pool = require_pool
        self.replica_names = tuple(replicas)
        self.max_replica_lag = max_replica_lag
        self._replicas: dict[int, ReplicaSet[Engine[Any]]] = {}
        self._tables = Tables(table, reverse)
        self._graph = self._tables.model_graph()
        self._where = None if where is None else render_condition(where)
        self._narrows = where is not None
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
        fields: dict[str, FieldInfo] = {}
        for name, (expression, column_type) in (computed or {}).items():
            column = column_type() if isinstance(column_type, type) else column_type
            reads = expression.read_names(_name) if isinstance(expression, Computed) else ()
            fields[name] = field_info(name, column, computed=True, reads=reads)
        self._computed_fields = fields
        self._compilers: CompilerCache[QueryCompiler] = CompilerCache(self._reads)

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

    def index_storage(self) -> TableStorage:
        """The tables and columns of the table and the tables it reaches (docs: indexes)."""
        return TableStorage(self._tables)

    def index_catalog(self, *, pooled: bool = True) -> Catalog | None:
        """The catalog of the table's engine, where the index advisor finds the indexes there are.

        ``pooled`` changes nothing: on SQLite, Piccolo opens a connection per statement and closes it.
        """
        engine = self.engine_for(ListContext())

        async def rows(sql: str) -> Sequence[Sequence[object]]:
            found = await engine.run_ddl(sql)
            return [tuple(row.values()) if isinstance(row, Mapping) else tuple(row) for row in found or ()]

        return Catalog(engine_database(engine.engine_type), _place(engine), rows)

    def prepare(self) -> None:
        """Check that an engine is known and ready it for listing (see ``prepare_engine``).

        Raises:
            ConfigurationError: No engine, or an engine type other than SQLite and PostgreSQL.
        """
        engine = self.engine_for(ListContext())
        engine_database(engine.engine_type)
        prepare_engine(engine)

    def check_started(self, app: Any, *, routed: bool) -> None:
        """Check that the engine's replicas exist and its pools are open (docs: in your app, "Start-up checks").

        A ``PostgresEngine`` whose pool was never started still answers, but opens a connection for
        every list: a connection set-up per request and, under load, more connections than the
        server accepts. So with ``require_pool`` its pool, and each named replica's, must be started
        by the time the application has started: by a start-up hook of the application's own or a
        lifespan context manager. A SQLite engine has no pool. A list given an engine of its own
        (``ListContext.session``) is not checked.

        Raises:
            ConfigurationError: A name of ``replicas`` is not among the engine's ``extra_nodes``, or
                a pool is not started; the message says how to start it.
        """
        engine = self.engine_for(ListContext())
        replicas = self.replica_set(engine)
        if not self.require_pool:
            return
        nodes = [("its engine", engine)]
        if replicas:
            nodes += [(f"its replica {replica.name!r}", replica.node) for replica in replicas.replicas]
        for what, node in nodes:
            # Only a PostgresEngine has a pool attribute: None until ``start_connection_pool``.
            if getattr(node, "pool", False) is None:
                msg = (
                    f"PiccoloBackend({self.table.__name__}): the connection pool of {what} was not started when "
                    "the application started, so each list would open a connection of its own. Start it with "
                    "the application, in a hook that takes no argument: async def open_pool() -> None: await "
                    "engine.start_connection_pool(), with Litestar(on_startup=[open_pool], on_shutdown=[close_pool]) "
                    "(close_pool awaiting engine.close_connection_pool()); or pass PiccoloBackend(..., "
                    "require_pool=False) to list without a pool"
                )
                raise ConfigurationError(msg)

    def compiler(
        self,
        database: Database,
        query: ListQuery | None = None,
        trigram_tables: frozenset[TrigramTable] = frozenset(),
        indexed_search: IndexedSearch | None = None,
    ) -> QueryCompiler:
        """The statement compiler for ``database``, ``query``'s policies that ``Computed`` values read, indexes.

        ``trigram_tables`` and ``indexed_search``: ``RelationalCompiler``'s. Kept per database and
        indexes, and per distinct set of such row policies (``CompilerCache``).
        """
        compiler = QUERY_COMPILERS[database.name]

        def build(policies: Mapping[str, Policy]) -> QueryCompiler:
            made = compiler(self._tables, self._expressions(policies, compiler.dialect), self._where)
            made.trigram_tables = trigram_lookup(trigram_tables)
            made.indexed_search = indexed_search
            return made

        return self._compilers.get((database.name, trigram_tables, indexed_search), query, build)

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
            return table_compiler(table, dialect).constant(value=True) if allowed is None else allowed

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

    # -- the shared execution's hooks (``RelationalBackend``) ---------------------------------

    def handle(self, context: ListContext) -> Engine[Any]:  # noqa: D102
        engine = self.engine_for(context)
        prepare_engine(engine)
        return engine

    def held(self, handle: Engine[Any]) -> Held:  # noqa: D102
        return Held.NOTHING if handle.current_transaction.get() is None else Held.TRANSACTION

    async def in_transaction(self, handle: Engine[Any], context: ListContext, run: Run[Statements, ResultT]) -> ResultT:
        """The list in a SAVEPOINT of the caller's transaction (``engine.transaction()``), rolled back to on error.

        On PostgreSQL a statement that fails (or is cancelled at the deadline) aborts the whole
        transaction; rolling back to the savepoint makes it usable again.
        """
        transaction: Any = handle.current_transaction.get()
        reader = TRANSACTION_READERS[engine_database(handle.engine_type).name](handle, transaction.connection, context)
        savepoint = await transaction.savepoint()
        try:
            answer = await run(reader)
        except BaseException:
            await savepoint.rollback_to()
            raise
        await savepoint.release()
        return answer

    async def own(
        self, handle: Engine[Any], held: Held, context: ListContext, run: Run[Statements, ResultT]
    ) -> ResultT:
        """The list on one connection of ``handle`` (PostgreSQL): pooled, or of the list's own without a pool.

        One pooled connection for the page, the total and the eager loads: under load, a request
        that queued for the pool once per statement would time out between its statements. Without
        a pool Piccolo opens a connection per statement and, when the statement is cancelled, never
        closes it; one connection of the list's own gets asyncpg's timeout.
        """
        pool = getattr(handle, "pool", None)
        if pool is None:
            connection = await handle.get_new_connection()  # type: ignore[attr-defined]
            try:
                return await run(AsyncpgReader(handle, connection, context))
            finally:
                await connection.close()
        async with pool.acquire() as connection:
            return await run(AsyncpgReader(handle, connection, context, pool))

    def replica_set(self, handle: Engine[Any]) -> ReplicaSet[Engine[Any]] | None:
        """The replicas of ``handle`` (its ``extra_nodes`` named by ``replicas``), made once per engine.

        Raises:
            ConfigurationError: A name is not among the engine's ``extra_nodes``.
        """
        if not self.replica_names:
            return None
        replicas = self._replicas.get(id(handle))
        if replicas is None:
            nodes: Mapping[str, Engine[Any]] = getattr(handle, "extra_nodes", None) or {}
            missing = [name for name in self.replica_names if name not in nodes]
            if missing:
                msg = (
                    f"{self.table.__name__}: replicas {missing} are not among the engine's extra_nodes {sorted(nodes)}"
                )
                raise ConfigurationError(msg)
            replicas = ReplicaSet(
                [Replica(nodes[name], name) for name in self.replica_names], max_lag=self.max_replica_lag
            )
            self._replicas[id(handle)] = replicas
        return replicas

    async def replica_lag(self, node: Engine[Any]) -> float | None:  # noqa: D102
        return await replica_lag(node)

    async def on_replica(self, node: Engine[Any], context: ListContext, run: Run[Statements, ResultT]) -> ResultT:  # noqa: D102
        return await self.own(node, Held.NOTHING, context, run)

    def local(
        self, handle: Engine[Any], context: ListContext
    ) -> contextlib.AbstractAsyncContextManager[Reader[Statements]] | None:
        """A read snapshot of a SQLite file (``sqlite.read_pool``).

        Piccolo opens a SQLite connection (and its thread) per statement outside a transaction; a
        pooled connection and one read transaction give the page, the total and the eager loads one
        snapshot, the page and its total in one thread hop.
        """
        if not engine_database(handle.engine_type).local_reads:
            return None

        @contextlib.asynccontextmanager
        async def snapshot() -> AsyncIterator[Reader[Statements]]:
            async with read_pool(handle).snapshot() as held:
                yield SnapshotReader(handle, held, context)

        return snapshot()

    def unavailable(self, error: BaseException) -> UnavailableError | None:  # noqa: D102
        return driver_unavailable(error)

    def build(
        self, compiler: QueryCompiler, query: ListQuery, context: ListContext, search_form: SearchForm = SearchForm.SCAN
    ) -> Statements:
        """The page, total and rows statements of the shape ``query``, and how the page's rows become items."""
        guard = compiler.load_guard(query) if context.load and query.policies else None
        node, columns, extras = self._page_selection(context.load, compiler.computed, guard)
        page, total = compiler.compile(
            query,
            columns,
            keys=context.keyset,
            offset=Slot(OFFSET, int),
            total=context.count_in_page,
            search_form=search_form,
        )
        dialect = compiler.dialect
        return Statements(
            Compiled.of(page, dialect),
            Compiled.of(total, dialect),
            compiler,
            node,
            extras,
            guard,
        )

    def executable(self, compiler: QueryCompiler, statement: QueryString) -> Compiled:
        """``statement`` rendered for the compiler's database, its values left as slots (``Compiled``)."""
        return Compiled.of(statement, compiler.dialect)

    async def items(  # noqa: D102
        self,
        reader: Reader[Statements],
        statements: Statements,
        rows: Sequence[Mapping[str, Any]],
        context: ListContext,
    ) -> list[dict[str, Any]]:
        assert isinstance(reader, PiccoloReader)  # noqa: S101 - the readers of this backend
        node, extras = statements.node, statements.extras
        pairs: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
        for row in rows:
            item = node.item(row)
            assert item is not None  # noqa: S101 - the listed entity is never optional
            item.update((name, row[alias]) for name, alias in extras)
            pairs.append((row, item))
        await load_many(self._tables, reader.run, node, pairs, statements.guard)
        return [item for _, item in pairs]


def _name(table: type[Table]) -> str:
    return table.__name__


def _place(engine: Engine[Any]) -> str:
    """Which file, or which server and database, ``engine`` reaches: no password shown."""
    path = getattr(engine, "path", None)
    if path:
        return str(path)
    config: Mapping[str, Any] = getattr(engine, "config", None) or {}
    dsn = config.get("dsn")
    if isinstance(dsn, str):
        parts = urlsplit(dsn)
        where = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.username + '@' if parts.username else ''}{where}{port}{parts.path}"
    return " ".join(f"{key}={config[key]}" for key in ("user", "host", "port", "database") if key in config)
