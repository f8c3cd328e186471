"""``BeanieBackend``: runs compiled list pipelines on a Beanie document's MongoDB collection."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from beanie.exceptions import CollectionWasNotInitialized
from bson import ObjectId
from pymongo.errors import ConnectionFailure, ExecutionTimeout, PyMongoError

from litestar_listing.backends.base import Capabilities, CompilerCache, Computed, ListContext, Page
from litestar_listing.backends.beanie.compiler import PART_EXPRESSIONS, PipelineCompiler
from litestar_listing.backends.beanie.facets import compile_facets
from litestar_listing.backends.beanie.introspection import DocumentInfo, Documents, field_info
from litestar_listing.backends.beanie.loading import decode, load
from litestar_listing.core.errors import ConfigurationError, UnavailableError
from litestar_listing.core.parts import PARTS
from litestar_listing.core.query import FilterSyntax, ListQuery, Policy, load_tree
from litestar_listing.core.schema import FieldInfo, ModelGraph

if TYPE_CHECKING:
    from beanie import Document
    from pymongo.asynchronous.collection import AsyncCollection

    from litestar_listing.core.facets import FacetPage, FacetQuery

__all__ = ("BeanieBackend", "policy_filter")

_VARIABLE = re.compile(r"[a-z][A-Za-z0-9_]*")
"""A user variable of an aggregation expression: MongoDB's system variables (``$$ROOT``, ``$$CURRENT``) are
upper case, and ``$$ROOT`` is the listed document, not a counted one."""

_KEEPING_STAGES = frozenset({"$lookup", "$graphLookup", "$addFields", "$set", "$project", "$unset", "$sort"})
"""Pipeline stages that never leave a document out; any other stage of a base pipeline may."""


async def _aggregate(
    collection: AsyncCollection[Any], pipeline: list[dict[str, Any]], context: ListContext
) -> list[Any]:
    options: dict[str, Any] = {"allowDiskUse": True}
    remaining = context.remaining()
    if remaining is not None:
        options["maxTimeMS"] = max(1, int(remaining * 1000))  # MongoDB stops the work itself
    try:
        cursor = await collection.aggregate(pipeline, session=context.session, **options)
        return await cursor.to_list(None)
    except PyMongoError as error:
        mapped = mongodb_unavailable(error)
        if mapped is None:
            raise
        raise mapped from error


def mongodb_unavailable(error: BaseException) -> UnavailableError | None:
    """The ``UnavailableError`` a pymongo exception amounts to, or None for other errors.

    ``ExecutionTimeout`` (the server stopped the work at ``maxTimeMS``) is ``reason="timeout"``;
    ``ConnectionFailure`` and its subclasses (``AutoReconnect``, ``ServerSelectionTimeoutError``)
    mean MongoDB is unreachable.
    """
    if isinstance(error, ExecutionTimeout):
        return UnavailableError("MongoDB stopped the aggregation at its time limit", reason="timeout")
    if isinstance(error, ConnectionFailure):
        return UnavailableError(f"MongoDB is unreachable ({type(error).__name__})")
    return None


class BeanieBackend:
    """Lists one Beanie document class by the document-store rules (extra ``beanie``).

    Filters follow the document-store rules (docs: query language, "Document-store resources"): a field by equality, a
    repeated parameter by ``$in``, a link by its name or ``<name>_id`` matched at ``<name>.$id``,
    allowlisted raw keys, no operator suffixes; the declared keys of its JSON (``dict``) fields and the
    parts of its dates by equality too (docs: query language, "Keys of JSON documents"; query language,
    "Parts of dates"). Search is a case-insensitive escaped regex, through ``$lookup`` for link
    paths; order takes own fields, JSON keys, to-one link paths and mapped computed fields, NULLs last and
    ``_id`` last. The total is exact: a ``$count`` over the same match. Pages are offsets
    (``$skip``/``$limit``): no keyset continuation (``Capabilities.keyset``), no deferred join.
    ``load=`` loads links, lists of links and back links, one ``find`` per relation and depth.
    Facet counts are one aggregation: the list's stages, then ``$facet`` with a sub-pipeline per facet
    (``facet_counts``; docs: facets).

    Needs MongoDB 5.0 or later (``MINIMUM_MONGODB``), set by two operators: ``$getField`` (5.0),
    which reads a link's ``$id`` in expressions (a row policy that compares a link, in a ``Computed``
    value or on a looked-up document; an order by ``<link>_id``; the identifiers a ``$lookup`` of a
    link matches), since MongoDB's documentation refuses a field path with a ``$`` component; and
    ``$lookup`` with ``localField``/``foreignField`` and a ``pipeline`` together (5.0), which keeps
    the linked documents inside their class's row policy. The rest is older: ``$lookup`` with
    ``let`` and ``pipeline`` and ``$expr`` (3.6) for back links, ``$addFields``, ``$count``,
    ``$in`` and ``$reduce`` (3.4); for JSON keys and date parts, ``$getField`` (5.0) again,
    ``$regexMatch`` (4.2), ``$type``, ``$isoDayOfWeek`` (3.4); facet counts add ``$setWindowFields``
    (5.0, outside a transaction), ``$facet``, ``$group``, ``$unwind``, ``$setUnion`` (3.4) and, for a
    part, ``$dateFromParts`` (3.6), ``$split`` (3.4) and ``$toInt`` (4.0). Which lists need which: (docs:
    backends, "MongoDB versions and the test store").

    Args:
        document: The listed ``beanie.Document`` class. ``init_beanie`` must have bound it to a
            database before the first request.
        pipeline: The resource's own aggregation stages (its base list query), where the store's
            operators may be used, e.g. ``[{"$match": {"deleted_at": None}}, {"$lookup": ...}]``. Forced and
            client filters, search, order and the page window are appended after them, so they
            apply to the documents the pipeline yields.
        computed: Computed alias -> ``(aggregation expression, Python type)``, e.g.
            ``{"part_count": ({"$size": "$parts"}, int)}``: added with ``$addFields``, listed in
            items and orderable (docs: computed, "Beanie"). A field the pipeline adds is listed and orderable
            only when mapped here (``("$field", type)``). The expression may be a ``Computed``, built
            per list from the request's row policies of the classes it reads: ``allowed(Document)``
            is an expression over ``$$this``, a document of that class, for ``$filter`` (``True``
            when it has no policy); ``allowed(Document, "child")`` is over ``$$child``, for a
            ``$filter`` or ``$map`` with ``"as": "child"``, for two documents of one class in one
            expression (docs: computed, "Counting rows of the listed model itself").

    Raises:
        ConfigurationError: On ``model_graph``/``prepare``: an unresolvable link, a computed
            type the listing cannot order, or a pipeline stage that is not a one-operator mapping;
            a ``Computed`` value that passes ``allowed`` a class it does not name in ``reads`` or a
            variable that is not a user variable's name (lower-case initial; ``ROOT`` would be the
            listed document).
    """

    capabilities = Capabilities(
        operators=frozenset({"eq", "in"}),
        filter_syntax=FilterSyntax.DOCUMENT,
        raw_filters=True,
        row_policies=True,
        parts=frozenset(name for name, part in PARTS.items() if part.ranged or name in PART_EXPRESSIONS),
        facets=True,
    )
    visitor = PipelineCompiler
    """The class whose ``op_<name>`` methods compile the declared operators (``check_contract``)."""
    type_encoders: Mapping[Any, Callable[[Any], Any]] = MappingProxyType({ObjectId: str})
    """Encoders ``ListingPlugin`` adds to the application: items keep ``ObjectId`` values, written as hex text."""

    def __init__(
        self,
        document: type[Document],
        *,
        pipeline: Sequence[Mapping[str, Any]] = (),
        computed: Mapping[str, tuple[Any | Computed[type[Document], Any], Any]] | None = None,
    ) -> None:
        self.document = document
        self._pipeline = [dict(stage) for stage in pipeline]
        self._computed = dict(computed or {})
        self._reads = {
            read.__name__: read
            for expression, _ in self._computed.values()
            if isinstance(expression, Computed)
            for read in expression.reads
        }
        self._documents: Documents | None = None
        self._read_documents: dict[str, Documents] = {}
        self._compiler: PipelineCompiler | None = None
        self._compilers: CompilerCache[PipelineCompiler] = CompilerCache(tuple(self._reads))
        self._computed_fields: dict[str, FieldInfo] | None = None
        # Each Computed value built once with every condition true, so that one asking for documents
        # it cannot police is refused here, before any request; the classes it reads are introspected
        # later, when the application starts (``prepare``).
        for name, (expression, _) in self._computed.items():
            if isinstance(expression, Computed):
                expression.built(name, _name, _checked, {})

    @property
    def narrows_rows(self) -> bool:
        """Whether the base list query may leave rows of the model out (e.g. soft-deleted ones).

        The plugin's start-up check treats such a model as scoped: a relation path reaching it
        from another resource needs a row policy (docs: soft delete; scoping, "The start-up check").
        """
        return any(next(iter(stage), "") not in _KEEPING_STAGES for stage in self._pipeline)

    def documents(self) -> Documents:
        """The listed document class and every class its links reach (built once)."""
        if self._documents is None:
            self._documents = Documents(self.document)
        return self._documents

    def model_graph(self) -> ModelGraph:
        """The graph of the listed document class, with the classes its ``Computed`` values read."""
        return self.documents().graph().including(self._read(name).graph() for name in self._reads)

    def _read(self, name: str) -> Documents:
        documents = self._read_documents.get(name)
        if documents is None:
            documents = self._read_documents[name] = Documents(self._reads[name])
        return documents

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        """The computed aliases and their types."""
        if self._computed_fields is None:
            self._computed_fields = {
                name: field_info(name, annotation, computed=True, reads=_reads(expression))
                for name, (expression, annotation) in self._computed.items()
            }
        return self._computed_fields

    def prepare(self) -> None:
        """Check the pipeline's shape and build the compiler; idempotent."""
        if self._compiler is not None:
            return
        for position, stage in enumerate(self._pipeline):
            if len(stage) != 1 or not next(iter(stage)).startswith("$"):
                msg = f"{self.document.__name__}: pipeline stage {position} must be one {{'$stage': ...}} mapping"
                raise ConfigurationError(msg)
        self.computed_fields()
        self._compiler = PipelineCompiler(self.documents(), self._pipeline, self._expressions({}))

    def unavailable(self, error: BaseException) -> UnavailableError | None:
        """What a pymongo exception amounts to (``mongodb_unavailable``), e.g. one of an enrichment's queries."""
        return mongodb_unavailable(error)

    def check_started(self, app: Any, *, routed: bool) -> None:
        """Check that ``init_beanie`` has bound the document class (docs: in your app, "Start-up checks").

        ``init_beanie`` runs when the application starts (a start-up hook or a lifespan context
        manager); by the time the application has started, the listed class must be bound.

        Raises:
            ConfigurationError: It is not.
        """
        self._collection()

    def _collection(self) -> Any:
        """The listed class's pymongo collection.

        Raises:
            ConfigurationError: ``init_beanie`` has not bound the class.
        """
        try:
            return self.document.get_pymongo_collection()
        except CollectionWasNotInitialized:
            name = self.document.__name__
            msg = (
                f"{name} is not initialised: await init_beanie(database=..., document_models=[{name}, ...]) when "
                "the application starts, in a start-up hook or a lifespan context manager"
            )
            raise ConfigurationError(msg) from None

    def _expressions(self, policies: Mapping[str, Policy]) -> dict[str, Any]:
        """The computed expressions of a list with ``policies`` (``Computed`` values built for them).

        Raises:
            ConfigurationError: A ``Computed`` value names a variable that is not a user variable's.
        """

        def condition(document: type[Document], alias: object, policy: Policy | None) -> Any:
            variable = _variable(document, alias)
            documents = self._read(document.__name__)
            allowed = PipelineCompiler(documents).policy_expression(documents.info(document), policy, variable)
            return True if allowed is None else allowed

        return {
            name: expression.built(name, _name, condition, policies) if isinstance(expression, Computed) else expression
            for name, (expression, _) in self._computed.items()
        }

    def compiler(self, query: ListQuery) -> PipelineCompiler:
        """The compiler of ``query``: one for every list, or one per set of policies ``Computed`` values read.

        Kept per distinct set of such policies (``CompilerCache``).
        """
        self.prepare()
        assert self._compiler is not None  # noqa: S101 - set by prepare()
        if not self._reads:
            return self._compiler
        return self._compilers.get(
            "mongodb",
            query,
            lambda policies: PipelineCompiler(self.documents(), self._pipeline, self._expressions(policies)),
        )

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        """Count, then fetch the page unless it lies past the last document; then eager-load.

        ``context.session`` may be a pymongo ``AsyncClientSession``; ``context.load`` names the
        links to load (docs: eager loading, "What each backend does").

        Raises:
            ConfigurationError: ``init_beanie`` has not initialised the document class.
            UnavailableError: MongoDB is unreachable, or stopped the aggregation at
                ``context.deadline`` (``maxTimeMS``).
        """
        compiler = self.compiler(query)
        tree = load_tree(context.load)
        compiled = compiler.compile(query, tuple(tree))
        collection = self._collection()
        counted = await _aggregate(collection, compiled.count, context)
        total = int(counted[0]["total"]) if counted else 0
        if query.window.offset >= total:
            return Page(items=[], total=total)
        documents = await _aggregate(collection, compiled.page, context)
        root = self.documents().info(self.document)
        computed = self.computed_fields()
        items = [decode(root, document, computed) for document in documents]
        if context.load:
            policies = {policy.entity: policy for policy in query.policies}

            def allowed(info: DocumentInfo) -> dict[str, Any] | None:
                return compiler.policy_match(info, policies.get(info.entity.name))

            try:
                await load(self.documents(), root, items, documents, tree, context.session, allowed)
            except PyMongoError as error:
                mapped = mongodb_unavailable(error)
                if mapped is None:
                    raise
                raise mapped from error
        return Page(items=items, total=total)

    async def facet_counts(self, query: FacetQuery, context: ListContext) -> FacetPage:
        """Count ``query``'s facets and its list's total in one aggregation (docs: facets).

        The list's own stages for what every facet's query shares, then ``$facet``: one sub-pipeline per
        facet, one for the total (``facets.compile_facets``). ``context.session`` may be a pymongo
        ``AsyncClientSession``; in a transaction or a snapshot session, where MongoDB refuses
        ``$setWindowFields``, each facet's distinct values are counted by a sub-pipeline of their own.

        Raises:
            ConfigurationError: ``init_beanie`` has not initialised the document class.
            UnavailableError: MongoDB is unreachable, or stopped the aggregation at
                ``context.deadline`` (``maxTimeMS``).
        """
        compiled = compile_facets(
            self.compiler(query.query), query, distinct_apart=_refuses_window_fields(context.session)
        )
        documents = await _aggregate(self._collection(), compiled.pipeline, context)
        return compiled.answer(documents[0] if documents else None)


def _refuses_window_fields(session: object) -> bool:
    """Whether MongoDB refuses ``$setWindowFields`` on ``session``: in a transaction, or a snapshot session.

    Documented for 5.0.4 and later (docs: backends, "MongoDB versions and the test store").
    """
    if session is None:
        return False
    options = getattr(session, "options", None)
    return bool(getattr(session, "in_transaction", False) or getattr(options, "snapshot", False))


def _name(document: type[Document]) -> str:
    return document.__name__


def _variable(document: type[Document], alias: object) -> str:
    """The variable ``allowed(document, alias)`` is over: ``this`` by default, else ``alias``.

    Raises:
        ConfigurationError: ``alias`` is not a user variable's name.
    """
    variable = "this" if alias is None else alias
    if not isinstance(variable, str) or not _VARIABLE.fullmatch(variable):
        msg = (
            f"allowed({document.__name__}, {alias!r}): the alias is the variable the documents are bound "
            f"to (the 'as' of a $filter or $map), a name with a lower-case initial"
        )
        raise ConfigurationError(msg)
    return variable


def _checked(document: type[Document], alias: object, _policy: Policy | None) -> bool:
    """The condition of a build that only checks what ``allowed`` is asked for (``_variable``)."""
    _variable(document, alias)
    return True


def _reads(expression: object) -> tuple[str, ...]:
    return expression.read_names(_name) if isinstance(expression, Computed) else ()


def policy_filter(document: type[Document], policy: Policy | None) -> dict[str, Any] | None:
    """The query ``policy`` puts on documents of ``document``, for pipelines of one's own.

    For enrichment that reads a collection with a policy (docs: scoping, "Enrichment and computed
    values"), e.g. ``{"$match": policy_filter(Flight, policies.get("Flight"))}`` with ``policies``
    from ``request_policies(context)``.

    Returns:
        The query (the same rule as the listed documents'), or None when ``policy`` restricts nothing.
    """
    if policy is None:
        return None
    documents = Documents(document)
    return PipelineCompiler(documents).policy_match(documents.info(document), policy)
