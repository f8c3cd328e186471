"""Test-only adapter: Beanie 2.2 on mongomock-motor, with MongoDB's semantics where our listing backend relies on them.

Why it exists: Beanie 2.x is written against pymongo's native async API (``pymongo.AsyncMongoClient``), while
mongomock-motor imitates Motor on top of mongomock, and mongomock keeps Python objects instead of BSON:

* ``aggregate()`` is not awaitable in mongomock-motor (Motor returns a cursor; pymongo's async ``aggregate`` is a
  coroutine, and Beanie awaits it);
* ``Database.list_collection_names`` rejects the pymongo 4 keywords that Beanie 2.2's ``init_beanie`` passes
  (``authorizedCollections=True, nameOnly=True``);
* mongomock stores a ``bson.DBRef`` (Beanie's ``Link``) and a ``bson.Decimal128`` (Beanie's ``decimal.Decimal``)
  as the Python objects themselves. MongoDB stores a DBRef as the sub-document ``{"$ref": ..., "$id": ...}``, so
  filters such as ``{"owner.$id": 5}`` and ``$lookup`` on ``owner.$id`` match there and not on mongomock; and
  mongomock can neither compare nor sort ``Decimal128``, whereas MongoDB compares decimals numerically with ints and
  doubles;
* mongomock's ``$lookup`` reads ``localField`` with ``helpers.get_value_by_dot``, which does not traverse arrays
  (``tags.$id`` over a list of links, ``_joined.owner.$id`` over a previous ``$lookup``'s result);
* mongomock sorts by an array's first element; MongoDB sorts ascending by the smallest element, descending by the
  largest;
* mongomock's ``$count`` on no documents outputs ``{"<name>": 0}``; MongoDB outputs no document.

What it does: ``mongomock_client()`` wraps mongomock-motor's ``AsyncMongoMockClient`` in thin client, database,
collection and cursor classes shaped like pymongo's async API (only the calls Beanie and the listing backend
make). Values go in in the form MongoDB would store them (a DBRef becomes its sub-document, a Decimal128 becomes
``decimal.Decimal``, which mongomock compares numerically with int and float, as MongoDB does; a ``str`` subclass
becomes ``str``, a tuple a list), in documents, updates, filters and pipelines alike, and results come out the way
pymongo decodes BSON (a sub-document with ``$ref`` and ``$id`` is a ``DBRef``, a decimal is a ``Decimal128``).

How mongomock is patched: its module-level hooks -- the ``$lookup`` and ``$count`` entries of
``mongomock.aggregate._PIPELINE_HANDLERS``, ``mongomock.filtering.resolve_sort_key`` and
``mongomock.collection.BSON`` -- are replaced only while the adapter itself calls into mongomock
(``_mongomock_semantics()``), never at import. mongomock-motor's coroutines run mongomock synchronously and never
suspend, so no other task can run while a replacement is in place, and any other use of mongomock in the process
sees mongomock unchanged.

Known gaps (not used by the listing backend): ``bulk_write`` (refused), sessions, ``$lookup`` with
``let``/``pipeline``, ``$type: "decimal"``/``"number"`` on stored decimals, arithmetic mixing decimals and doubles
in pipelines, positional path components (``tags.0``) in sort keys and ``$lookup`` fields.

It is test-only and pinned: the workarounds depend on the internals of the versions in ``ADAPTED_VERSIONS``, so
``mongomock_client()`` calls ``check_versions()`` and refuses to run on any other version.
"""

# ruff: noqa: A002  -- the parameters mirror pymongo's, which name the query ``filter``.

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from importlib import metadata
from typing import Any, Final
from unittest import mock

import bson
from bson.errors import InvalidDocument
from mongomock import aggregate as mongomock_aggregate
from mongomock import collection as mongomock_collection
from mongomock import filtering as mongomock_filtering
from mongomock_motor import AsyncMongoMockClient
from typing_extensions import Self

ADAPTED_VERSIONS: dict[str, str] = {"beanie": "2.2.0", "mongomock": "4.3.0", "mongomock-motor": "0.0.36"}


def check_versions() -> None:
    """Raise RuntimeError unless the installed packages are exactly the versions this adapter was written for."""
    installed = {name: _installed_version(name) for name in ADAPTED_VERSIONS}
    mismatched = {name: version for name, version in installed.items() if version != ADAPTED_VERSIONS[name]}
    if mismatched:
        found = ", ".join(f"{name}=={version or '(not installed)'}" for name, version in mismatched.items())
        wanted = ", ".join(f"{name}=={version}" for name, version in ADAPTED_VERSIONS.items())
        message = (
            f"tests/document_store/mongomock_adapter.py emulates MongoDB on {wanted}, but found {found}. "
            "Re-check the workarounds listed in its docstring against these versions, then update ADAPTED_VERSIONS."
        )
        raise RuntimeError(message)


def _installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def mongomock_client() -> Any:
    """A fresh in-memory client; ``client[name]`` is a database that ``beanie.init_beanie`` accepts."""
    check_versions()
    return _Client(AsyncMongoMockClient())


# --- Values: the stored form (what MongoDB keeps after BSON encoding) and back ---------------------------------


def _to_storage(value: Any) -> Any:
    """``value`` as MongoDB would store it, in the shape mongomock can filter, compare and sort."""
    if isinstance(value, bson.DBRef):
        # pymongo encodes a DBRef as the sub-document {"$ref", "$id"[, "$db"], extra fields...}: as_doc() is that.
        return _to_storage(value.as_doc())
    if isinstance(value, bson.Decimal128):
        # decimal.Decimal compares numerically with int and float in mongomock, as decimals do on MongoDB.
        return value.to_decimal()
    if isinstance(value, decimal.Decimal):
        # pymongo cannot encode a bare Decimal (Beanie sends Decimal128); accepting it would hide a bug.
        message = f"cannot encode object: {value!r}, of type: {type(value)!r}"
        raise InvalidDocument(message)
    if isinstance(value, str):
        # BSON keeps only the string; a str subclass (Beanie's ExpressionField, a StrEnum) would otherwise reach
        # mongomock with its own __eq__ and __hash__.
        return str.__str__(value)
    if isinstance(value, Mapping):
        return {_to_storage(key): _to_storage(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_storage(item) for item in value]
    return value


def _from_storage(value: Any) -> Any:
    """A stored value as pymongo decodes it from BSON."""
    if isinstance(value, decimal.Decimal):
        return bson.Decimal128(value)
    if isinstance(value, list):
        return [_from_storage(item) for item in value]
    if isinstance(value, dict):
        fields = {key: _from_storage(item) for key, item in value.items()}
        return _as_dbref(fields) if _is_dbref_document(fields) else fields
    return value


def _document_from_storage(document: Mapping[str, Any]) -> dict[str, Any]:
    # pymongo decodes sub-documents as DBRefs, never the top-level document itself.
    return {key: _from_storage(value) for key, value in document.items()}


def _is_dbref_document(value: Any) -> bool:
    # bson's decoder rule (bson._get_object): a string $ref, an $id, and a $db that is a string or absent.
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("$ref"), str)
        and "$id" in value
        and isinstance(value.get("$db"), (str, type(None)))
    )


def _as_dbref(fields: Mapping[str, Any]) -> bson.DBRef:
    extra = {key: item for key, item in fields.items() if key not in {"$ref", "$id", "$db"}}
    return bson.DBRef(fields["$ref"], fields["$id"], fields.get("$db"), **extra)


def _decimals_to_decimal128(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return bson.Decimal128(value)
    if isinstance(value, Mapping):
        return {key: _decimals_to_decimal128(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_decimals_to_decimal128(item) for item in value]
    return value


# --- Queries, pipelines and sort specifications ----------------------------------------------------------------

_QUERY_LISTS: Final = frozenset({"$and", "$or", "$nor"})


def _query_to_storage(query: Mapping[str, Any] | None) -> dict[str, Any]:
    """A filter document with its values in stored form."""
    converted: dict[str, Any] = {}
    for key, value in (query or {}).items():
        name = str(key)
        if name in _QUERY_LISTS:
            converted[name] = [_query_to_storage(branch) for branch in value]
        elif name.startswith("$"):
            converted[name] = _to_storage(value)  # $expr, $text, $comment...: not field conditions
        else:
            converted[name] = _condition_to_storage(value)
    return converted


def _condition_to_storage(condition: Any) -> Any:
    """What a field is compared with: a value, or an operator document such as ``{"$in": [...]}``."""
    stored = _to_storage(condition)
    if _is_dbref_document(stored):
        # MongoDB reads {"$ref", "$id"} in this position as a DBRef value to compare with; mongomock would read
        # "$ref" as an unknown operator.
        return {"$eq": stored}
    if isinstance(condition, Mapping) and "$elemMatch" in condition and _is_query(condition["$elemMatch"]):
        stored["$elemMatch"] = _query_to_storage(condition["$elemMatch"])
    return stored


def _is_query(value: Any) -> bool:
    # {"$elemMatch": {"owner": ...}} holds a query on the elements; {"$elemMatch": {"$gt": 1}} holds operators.
    return isinstance(value, Mapping) and not all(str(key).startswith("$") for key in value)


def _pipeline_to_storage(pipeline: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{str(name): _stage_to_storage(str(name), options) for name, options in stage.items()} for stage in pipeline]


def _stage_to_storage(name: str, options: Any) -> Any:
    if name == "$match":
        return _query_to_storage(options)
    if name == "$sort":
        return dict(_directed_sort(options))
    if name == "$facet":
        return {output: _pipeline_to_storage(pipeline) for output, pipeline in options.items()}
    return _to_storage(options)


class _SortPath(str):
    """A sort key that remembers its direction.

    mongomock calls ``filtering.resolve_sort_key(key, document)`` without the direction, but MongoDB's key for an
    array depends on it (smallest element ascending, largest descending). The default keeps deep copies working.
    """

    descending: bool

    def __new__(cls, path: str, descending: bool = False) -> Self:
        sort_path = super().__new__(cls, path)
        sort_path.descending = descending
        return sort_path


def _sort_to_storage(sort: Any) -> list[tuple[str, Any]] | None:
    """A pymongo sort specification (a key, (key, direction) pairs, or a mapping), or None, with directed keys."""
    return None if sort is None else _directed_sort([(sort, 1)] if isinstance(sort, str) else sort)


def _directed_sort(pairs: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return [(_SortPath(str(key), isinstance(direction, int) and direction < 0), direction) for key, direction in items]


# --- MongoDB's reading of a dotted path, for $lookup and sorting ------------------------------------------------

# Marks an empty array at the end of a path: it contributes no value to a $lookup, and sorts before null.
_EMPTY_ARRAY: Final = object()


def _path_values(value: Any, parts: Sequence[str]) -> Iterator[Any]:
    """The values MongoDB reaches along a dotted path.

    Arrays on the way are traversed element by element, and an array at the end yields its elements (arrays
    directly inside arrays are not flattened further). Numeric components are field names, not positions.
    """
    if not parts:
        if isinstance(value, list):
            yield from value if value else [_EMPTY_ARRAY]
        else:
            yield value
        return
    if isinstance(value, dict):
        if parts[0] in value:
            yield from _path_values(value[parts[0]], parts[1:])
    elif isinstance(value, list):
        for element in value:
            if isinstance(element, dict):
                yield from _path_values(element, parts)


# mongomock is untyped: its two callables used here get their types at this boundary.
_ORIGINAL_LOOKUP: Final[Callable[[list[dict[str, Any]], Any, Mapping[str, Any]], Any]] = (
    mongomock_aggregate._handle_lookup_stage
)
_ORIGINAL_COUNT: Final[Callable[[list[dict[str, Any]], Any, str], list[dict[str, int]]]] = (
    mongomock_aggregate._handle_count_stage
)
_BsonComparable: Final[Callable[[Any], Any]] = mongomock_filtering.BsonComparable  # mongomock's BSON ordering


def _lookup_stage(
    in_collection: list[dict[str, Any]], database: Any, options: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``$lookup`` with MongoDB's equality match, replacing mongomock's while the adapter runs.

    The local value is every value reached through arrays; a foreign document matches when its foreignField equals
    any of them (mongomock's own query, so foreign arrays and ``thing.$id`` paths are traversed too). No local value
    (missing, null, or an empty array) matches a foreignField that is null or missing.
    """
    _ORIGINAL_LOOKUP([], database, options)  # mongomock's validation of the options, on no documents
    foreign = database.get_collection(options["from"])
    for document in in_collection:
        reached = _path_values(document, options["localField"].split("."))
        local = [value for value in reached if value is not _EMPTY_ARRAY]
        matches = foreign.find({options["foreignField"]: {"$in": local or [None]}})
        document[options["as"]] = list(matches)
    return in_collection


def _count_stage(in_collection: list[dict[str, Any]], database: Any, options: str) -> list[dict[str, int]]:
    """``$count``, replacing mongomock's while the adapter runs: MongoDB outputs no document for no input."""
    counted = _ORIGINAL_COUNT(in_collection, database, options)  # mongomock's validation of the field name
    return counted if in_collection else []


_UNDEFINED_SORT_KEY: Final = (0, _BsonComparable(None))
_NULL_SORT_KEY: Final = (1, _BsonComparable(None))


def _resolve_sort_key(key: str, document: Mapping[str, Any]) -> tuple[int, Any]:
    """MongoDB's sort key, replacing mongomock's ``filtering.resolve_sort_key`` while the adapter runs.

    An array sorts by its smallest element ascending and its largest descending; an empty array at the end of the
    path sorts before null; a missing value sorts as null. Other values keep mongomock's key (its BSON ordering).
    """
    keys = [
        _UNDEFINED_SORT_KEY if value is _EMPTY_ARRAY else (1, _BsonComparable(value))
        for value in _path_values(document, key.split("."))
    ]
    if not keys:
        return _NULL_SORT_KEY
    return max(keys) if isinstance(key, _SortPath) and key.descending else min(keys)


class _StorageAwareBSON:
    """Stands in for ``bson.BSON`` in ``mongomock.collection``, which validates every write by encoding it.

    The stored form holds ``decimal.Decimal``, which BSON cannot encode: encode the Decimal128 it stands for.
    """

    @staticmethod
    def encode(document: Mapping[str, Any], check_keys: bool = False) -> bytes:
        return bson.encode(_decimals_to_decimal128(document), check_keys=check_keys)


@contextmanager
def _mongomock_semantics() -> Iterator[None]:
    """Replace mongomock's hooks for the duration of one synchronous call into mongomock (see module docstring)."""
    with (
        mock.patch.object(mongomock_collection, "BSON", _StorageAwareBSON),
        mock.patch.object(mongomock_filtering, "resolve_sort_key", _resolve_sort_key),
        mock.patch.dict(mongomock_aggregate._PIPELINE_HANDLERS, {"$lookup": _lookup_stage, "$count": _count_stage}),
    ):
        yield


# --- pymongo-shaped wrappers -----------------------------------------------------------------------------------


class _Client:
    """The subset of ``pymongo.AsyncMongoClient`` that Beanie and the tests use."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getitem__(self, name: str) -> _Database:
        return self.get_database(name)

    def get_database(self, name: str, **kwargs: Any) -> _Database:
        return _Database(self, self._inner.get_database(name, **kwargs))

    def append_metadata(self, driver_info: Any) -> None:
        """Beanie announces itself to pymongo >= 4.14 clients; there is no server to tell."""

    async def list_database_names(self, **kwargs: Any) -> list[str]:
        names: list[str] = await self._inner.list_database_names(**kwargs)
        return names

    async def drop_database(self, name: str, **kwargs: Any) -> None:
        await self._inner.drop_database(name, **kwargs)

    async def close(self) -> None:
        """Nothing to release: the data lives in this object."""


class _Database:
    """The subset of ``pymongo.asynchronous.database.AsyncDatabase`` that Beanie's ``init_beanie`` uses."""

    def __init__(self, client: _Client, inner: Any) -> None:
        self.client = client
        self._inner = inner

    @property
    def name(self) -> str:
        name: str = self._inner.name
        return name

    def __getitem__(self, name: str) -> _Collection:
        return self.get_collection(name)

    def get_collection(self, name: str, **kwargs: Any) -> _Collection:
        return _Collection(self, self._inner.get_collection(name, **kwargs))

    async def command(self, command: Any, *args: Any, **kwargs: Any) -> Any:
        return await self._inner.command(command, *args, **kwargs)

    async def list_collection_names(
        self, session: Any = None, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[str]:
        # pymongo 4 forwards extra keywords to listCollections (Beanie passes authorizedCollections=True and
        # nameOnly=True); mongomock's signature has no **kwargs and rejects them. Names only is all we return.
        del kwargs
        names: list[str] = await self._inner.list_collection_names(filter=filter, session=session)
        return names

    async def create_collection(self, name: str, **kwargs: Any) -> _Collection:
        # mongomock-motor returns mongomock's synchronous collection here; hand out the wrapped one instead.
        await self._inner.create_collection(name, **kwargs)
        return self[name]

    async def drop_collection(self, name: str, **kwargs: Any) -> None:
        await self._inner.drop_collection(name, **kwargs)


class _Collection:
    """The subset of ``pymongo.asynchronous.collection.AsyncCollection`` that Beanie and the listing backend use.

    Every call converts documents, updates, filters and pipelines to the stored form on the way in, converts
    results as pymongo decodes them on the way out, and runs mongomock under ``_mongomock_semantics()``.
    """

    def __init__(self, database: _Database, inner: Any) -> None:
        self.database = database
        self._inner = inner

    @property
    def name(self) -> str:
        name: str = self._inner.name
        return name

    @property
    def full_name(self) -> str:
        return f"{self.database.name}.{self.name}"

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        with _mongomock_semantics():
            return await getattr(self._inner, method)(*args, **kwargs)

    # Reads

    def find(self, filter: Mapping[str, Any] | None = None, *args: Any, sort: Any = None, **kwargs: Any) -> _FindCursor:
        cursor = self._inner.find(_query_to_storage(filter), *args, sort=_sort_to_storage(sort), **kwargs)
        return _FindCursor(cursor)

    async def find_one(
        self, filter: Mapping[str, Any] | None = None, *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call("find_one", _query_to_storage(filter), *args, sort=_sort_to_storage(sort), **kwargs)
        return None if document is None else _document_from_storage(document)

    async def count_documents(self, filter: Mapping[str, Any], *args: Any, **kwargs: Any) -> int:
        count: int = await self._call("count_documents", _query_to_storage(filter), *args, **kwargs)
        return count

    async def distinct(self, key: str, filter: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any) -> list[Any]:
        values = await self._call("distinct", str(key), _query_to_storage(filter), *args, **kwargs)
        return [_from_storage(value) for value in values]

    async def aggregate(self, pipeline: Iterable[Mapping[str, Any]], *args: Any, **kwargs: Any) -> _Cursor:
        # A coroutine, as in pymongo's async API (Beanie awaits it); mongomock runs the whole pipeline in this call.
        with _mongomock_semantics():
            cursor = self._inner.aggregate(_pipeline_to_storage(pipeline), *args, **kwargs)
        return _Cursor(cursor)

    # Writes

    async def insert_one(self, document: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        result = await self._call("insert_one", _to_storage(document), *args, **kwargs)
        _add_generated_id(document, result.inserted_id)
        return result

    async def insert_many(self, documents: Iterable[Mapping[str, Any]], *args: Any, **kwargs: Any) -> Any:
        originals = list(documents)
        result = await self._call("insert_many", [_to_storage(document) for document in originals], *args, **kwargs)
        for document, inserted_id in zip(originals, result.inserted_ids, strict=True):
            _add_generated_id(document, inserted_id)
        return result

    async def replace_one(
        self, filter: Mapping[str, Any], replacement: Mapping[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        return await self._call("replace_one", _query_to_storage(filter), _to_storage(replacement), *args, **kwargs)

    async def update_one(self, filter: Mapping[str, Any], update: Any, *args: Any, **kwargs: Any) -> Any:
        return await self._call("update_one", _query_to_storage(filter), _to_storage(update), *args, **kwargs)

    async def update_many(self, filter: Mapping[str, Any], update: Any, *args: Any, **kwargs: Any) -> Any:
        return await self._call("update_many", _query_to_storage(filter), _to_storage(update), *args, **kwargs)

    async def find_one_and_update(
        self, filter: Mapping[str, Any], update: Any, *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call(
            "find_one_and_update",
            _query_to_storage(filter),
            _to_storage(update),
            *args,
            sort=_sort_to_storage(sort),
            **kwargs,
        )
        return None if document is None else _document_from_storage(document)

    async def find_one_and_replace(
        self, filter: Mapping[str, Any], replacement: Mapping[str, Any], *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call(
            "find_one_and_replace",
            _query_to_storage(filter),
            _to_storage(replacement),
            *args,
            sort=_sort_to_storage(sort),
            **kwargs,
        )
        return None if document is None else _document_from_storage(document)

    async def find_one_and_delete(
        self, filter: Mapping[str, Any], *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call(
            "find_one_and_delete", _query_to_storage(filter), *args, sort=_sort_to_storage(sort), **kwargs
        )
        return None if document is None else _document_from_storage(document)

    async def delete_one(self, filter: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        return await self._call("delete_one", _query_to_storage(filter), *args, **kwargs)

    async def delete_many(self, filter: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        return await self._call("delete_many", _query_to_storage(filter), *args, **kwargs)

    async def bulk_write(self, requests: Any, *args: Any, **kwargs: Any) -> Any:
        # pymongo's operation objects keep their documents in private attributes; passing them through would
        # store DBRef and Decimal128 unconverted, so refuse loudly instead.
        message = "mongomock_adapter does not convert bulk_write operations; use the single-document methods"
        raise NotImplementedError(message)

    # No documents involved

    async def drop(self, *args: Any, **kwargs: Any) -> None:
        await self._call("drop", *args, **kwargs)

    async def estimated_document_count(self, *args: Any, **kwargs: Any) -> int:
        count: int = await self._call("estimated_document_count", *args, **kwargs)
        return count

    async def index_information(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        information: dict[str, Any] = await self._call("index_information", *args, **kwargs)
        return information

    async def create_index(self, *args: Any, **kwargs: Any) -> str:
        name: str = await self._call("create_index", *args, **kwargs)
        return name

    async def create_indexes(self, *args: Any, **kwargs: Any) -> list[str]:
        names: list[str] = await self._call("create_indexes", *args, **kwargs)
        return names

    async def drop_index(self, *args: Any, **kwargs: Any) -> None:
        await self._call("drop_index", *args, **kwargs)

    async def drop_indexes(self, *args: Any, **kwargs: Any) -> None:
        await self._call("drop_indexes", *args, **kwargs)


def _add_generated_id(document: Mapping[str, Any], inserted_id: Any) -> None:
    # pymongo adds the generated _id to the caller's document; the adapter inserted a converted copy.
    if isinstance(document, MutableMapping) and "_id" not in document:
        document["_id"] = inserted_id


class _Cursor:
    """A result cursor shaped like pymongo's async cursors: ``async for`` and ``await to_list(length)``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> dict[str, Any]:
        # A find cursor computes its results on the first step, so its sort runs here: under the adapter's hooks.
        with _mongomock_semantics():
            document = await self._inner.__anext__()
        return _document_from_storage(document)

    async def next(self) -> dict[str, Any]:
        return await self.__anext__()

    async def to_list(self, length: int | None = None) -> list[dict[str, Any]]:
        if length is not None and length < 1:
            message = "to_list() length must be greater than 0"  # pymongo's check
            raise ValueError(message)
        documents: list[dict[str, Any]] = []
        async for document in self:
            documents.append(document)
            if len(documents) == length:
                break
        return documents

    async def close(self) -> None:
        await self._inner.close()


class _FindCursor(_Cursor):
    """``find()``'s cursor: also chains ``sort``, ``skip`` and ``limit`` before the first result."""

    def sort(self, key_or_list: Any, direction: Any = None) -> Self:
        spec = [(key_or_list, 1 if direction is None else direction)] if isinstance(key_or_list, str) else key_or_list
        self._inner.sort(_sort_to_storage(spec))
        return self

    def skip(self, skip: int) -> Self:
        self._inner.skip(skip)
        return self

    def limit(self, limit: int) -> Self:
        self._inner.limit(limit)
        return self
