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
* mongomock's ``$count`` on no documents outputs ``{"<name>": 0}``; MongoDB outputs no document;
* mongomock has no ``$getField`` (MongoDB 5.0), ``$reduce``, ``$isoDayOfWeek`` nor ``$type`` as an expression
  (3.4), runs no ``$lookup`` with a ``pipeline``
  (3.6; with ``localField``/``foreignField`` too, 5.0), and has no ``$setWindowFields`` stage (5.0), all of which
  the listing backend sends;
* and mongomock runs what MongoDB refuses: a field path such as ``"$$this.company.$id"``, operators of any version,
  variables bound nowhere.

What it does: ``mongomock_client()`` wraps mongomock-motor's ``AsyncMongoMockClient`` in thin client, database,
collection and cursor classes shaped like pymongo's async API (only the calls Beanie and the listing backend
make). Values go in in the form MongoDB would store them (a DBRef becomes its sub-document, a Decimal128 becomes
``decimal.Decimal``, which mongomock compares numerically with int and float, as MongoDB does; a ``str`` subclass
becomes ``str``, a tuple a list), in documents, updates, filters and pipelines alike, and results come out the way
pymongo decodes BSON (a sub-document with ``$ref`` and ``$id`` is a ``DBRef``, a decimal is a ``Decimal128``).

Every pipeline, query and sort is first checked against MongoDB's documented rules for the oldest server the
backend supports (``mongodb_rules.py``): a construct such a server refuses raises ``OperationFailure`` as the
server would, and ``TALLY`` counts what was checked (``LISTING_MONGODB_RULES=record`` counts without refusing).
``mongomock_client(rules=False)`` skips the check, for tests of the adapter itself.

How mongomock is patched: its module-level hooks -- the ``$lookup`` and ``$count`` entries of
``mongomock.aggregate._PIPELINE_HANDLERS`` and a ``$setWindowFields`` entry (one partition, ``$count`` and
``$sum`` over all of it: the form facet counts send), ``mongomock.aggregate._Parser.parse`` (``$getField``, ``$reduce``,
``$type``, ``$isoDayOfWeek`` and the variables of a ``$lookup``'s ``let``), ``mongomock.filtering.resolve_sort_key`` and
``mongomock.collection.BSON`` -- are replaced only while the adapter itself calls into mongomock
(``_mongomock_semantics()``), never at import. mongomock-motor's coroutines run mongomock synchronously and never
suspend, so no other task can run while a replacement is in place, and any other use of mongomock in the process
sees mongomock unchanged.

Known gaps (not used by the listing backend): ``bulk_write`` (refused), sessions, ``$type: "decimal"``/``"number"``
on stored decimals, arithmetic mixing decimals and doubles in pipelines, positional path components (``tags.0``)
in sort keys and ``$lookup`` fields, ``$setField``/``$unsetField``, ``$getField`` with a computed field name
(7.2), and ``$setWindowFields`` partitioned, sorted, over a bounded window or with other operators. The
documented differences between the two stores, and what the tests do about each, are in docs/guide/backends.md
("MongoDB versions and the test store").

It is test-only and pinned: the workarounds depend on the internals of the versions in ``ADAPTED_VERSIONS``, so
``mongomock_client()`` calls ``check_versions()`` and refuses to run on any other version.
"""

# ruff: noqa: A002  -- the parameters mirror pymongo's, which name the query ``filter``.

from __future__ import annotations

import datetime
import decimal
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Final
from unittest import mock

import bson
from bson.errors import InvalidDocument
from mongomock import aggregate as mongomock_aggregate
from mongomock import collection as mongomock_collection
from mongomock import filtering as mongomock_filtering
from mongomock_motor import AsyncMongoMockClient
from pymongo.errors import OperationFailure
from typing_extensions import Self

from tests.document_store import mongodb_rules

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


def mongomock_client(*, rules: bool = True) -> Any:
    """A fresh in-memory client; ``client[name]`` is a database that ``beanie.init_beanie`` accepts.

    Args:
        rules: Check every pipeline, query and sort sent through the client against MongoDB's documented
            rules (``tests/document_store/mongodb_rules.py``) before mongomock runs it, counted in ``TALLY``;
            False only for the adapter's own tests of paths a server reads but the manual does not state.
    """
    check_versions()
    return _Client(AsyncMongoMockClient(), rules=rules)


# --- MongoDB's documented rules: checked before mongomock runs anything ------------------------------------------

RULES_VARIABLE = "LISTING_MONGODB_RULES"
"""``refuse`` (the default): a construct a server of ``mongodb_rules.MINIMUM_VERSION`` refuses raises
``OperationFailure``, as the server would; ``record``: it is only counted (to measure code that breaks them)."""


@dataclass
class RulesTally:
    """What the clients of this process sent, and what of it MongoDB's documentation refuses.

    Attributes:
        pipelines: ``aggregate`` pipelines checked.
        queries: Filters checked (``find``, ``count_documents``, ``delete_many``...).
        sorts: ``find`` sorts checked.
        refused: Each refused construct's rule and text -> how many times it was sent.
        first: The first refused construct, for the summary.
        last: The last refused construct (for a test that sees refusals it did not send on purpose).
    """

    pipelines: int = 0
    queries: int = 0
    sorts: int = 0
    refused: Counter[tuple[str, str]] = field(default_factory=Counter)
    first: mongodb_rules.Construct | None = None
    last: mongodb_rules.Construct | None = None

    @property
    def constructs(self) -> int:
        """How many refused constructs were sent in all."""
        return sum(self.refused.values())

    def summary(self) -> str:
        """What was checked, against which version, and what was found (each construct, when recording)."""
        version = mongodb_rules.version_text(mongodb_rules.MINIMUM_VERSION)
        text = (
            f"MongoDB {version} rules: {self.pipelines:,} pipelines, {self.queries:,} queries and {self.sorts:,} sorts "
            f"checked; {self.constructs:,} refused constructs ({len(self.refused):,} distinct)"
        )
        by_rule = Counter[str]()
        for (rule, _), seen in self.refused.items():
            by_rule[rule] += seen
        if by_rule:
            text += ": " + ", ".join(f"{seen:,} {rule}" for rule, seen in by_rule.most_common())
            text += f"; the first: {self.first}"
        if os.environ.get(RULES_VARIABLE) == "record":
            text += "".join(
                f"\n  {seen:>7,}  {rule}  {construct}" for (rule, construct), seen in self.refused.most_common()
            )
        return text

    def check(self, found: list[mongodb_rules.Construct], what: str) -> None:
        """Count ``found``; unless recording, raise as the server would.

        Raises:
            OperationFailure: ``found`` is not empty and ``LISTING_MONGODB_RULES`` is not ``record``.
        """
        if not found:
            return
        for construct in found:
            self.refused[construct.rule, construct.text] += 1
        if self.first is None:
            self.first = found[0]
        self.last = found[-1]
        if os.environ.get(RULES_VARIABLE, "refuse") != "record":
            version = mongodb_rules.version_text(mongodb_rules.MINIMUM_VERSION)
            listed = "; ".join(map(str, found))
            message = f"MongoDB {version} refuses this {what} (tests/document_store/mongodb_rules.py): {listed}"
            raise OperationFailure(message)


TALLY = RulesTally()
"""Every check of this process (``tests/conftest.py`` prints its summary at the end of a run)."""


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
_PROCESS_PIPELINE: Final[Callable[[list[dict[str, Any]], Any, Any, Any], Iterable[dict[str, Any]]]] = (
    mongomock_aggregate.process_pipeline
)
_PARSER: Final[Callable[..., Any]] = mongomock_aggregate._Parser  # its instances evaluate expressions (``parse``)


def _lookup_stage(
    in_collection: list[dict[str, Any]], database: Any, options: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``$lookup`` with MongoDB's equality match and sub-pipelines, replacing mongomock's while the adapter runs.

    Equality (``localField``/``foreignField``): the local value is every value reached through arrays; a foreign
    document matches when its foreignField equals any of them (mongomock's own query, so foreign arrays and
    ``thing.$id`` paths are traversed too). No local value (missing, null, or an empty array) matches a foreignField
    that is null or missing. A ``pipeline`` (MongoDB 3.6; with localField/foreignField, 5.0) then runs on the
    matching foreign documents (all of them without localField), with ``let``'s variables, evaluated on the local
    document, bound in every expression of it (``_LOOKUP_VARIABLES``).
    """
    equality = {key: value for key, value in options.items() if key not in {"let", "pipeline"}}
    if "localField" in options or "foreignField" in options:
        _ORIGINAL_LOOKUP([], database, equality)  # mongomock's validation of the options, on no documents
    elif not isinstance(options.get("from"), str) or not isinstance(options.get("as"), str):
        message = "Must specify 'from' and 'as' for a $lookup, and 'pipeline' without localField"
        raise OperationFailure(message)
    pipeline = options.get("pipeline")
    variables: Mapping[str, Any] = options.get("let", {})
    foreign = database.get_collection(options["from"])
    for document in in_collection:
        if "localField" in options:
            reached = _path_values(document, options["localField"].split("."))
            local = [value for value in reached if value is not _EMPTY_ARRAY]
            matches = list(foreign.find({options["foreignField"]: {"$in": local or [None]}}))
        else:
            matches = list(foreign.find())
        if pipeline is not None:
            bound = {name: _evaluated(expression, document) for name, expression in variables.items()}
            _LOOKUP_VARIABLES.append({**(_LOOKUP_VARIABLES[-1] if _LOOKUP_VARIABLES else {}), **bound})
            try:
                matches = list(_PROCESS_PIPELINE(matches, database, pipeline, None))
            finally:
                _LOOKUP_VARIABLES.pop()
        document[options["as"]] = matches
    return in_collection


_LOOKUP_VARIABLES: list[dict[str, Any]] = []
"""The ``let`` variables of the ``$lookup`` sub-pipelines running now, innermost last (each with the enclosing
ones'); every expression evaluated meanwhile sees them, as in MongoDB, unless it binds the same name itself."""


def _evaluated(expression: Any, document: Mapping[str, Any]) -> Any:
    """``expression`` on ``document``, missing as null (a ``let`` variable is never missing)."""
    try:
        return _PARSER(document, ignore_missing_keys=True).parse(expression)
    except KeyError:
        return None


_ORIGINAL_PARSE: Final[Callable[[Any, Any], Any]] = mongomock_aggregate._Parser.parse


def _parse(parser: Any, expression: Any) -> Any:
    """mongomock's expression parser with the ``$lookup`` variables bound, arrays, ``$getField`` and ``$reduce``.

    Replaces ``mongomock.aggregate._Parser.parse`` while the adapter runs; mongomock's parser calls it for every
    sub-expression, so what it adds holds at any depth. A missing value is mongomock's ``KeyError``. An array is
    an array expression, each element evaluated (a missing one as null), as MongoDB evaluates ``["$_id"]`` in a
    ``$lookup``'s ``let``; mongomock returns it as written.
    """
    if _LOOKUP_VARIABLES and not getattr(parser, "_listing_bound", False):
        parser._user_vars = {**_LOOKUP_VARIABLES[-1], **parser._user_vars}
        parser._listing_bound = True
    if isinstance(expression, list):
        return [_element(parser, item) for item in expression]
    if isinstance(expression, Mapping) and len(expression) == 1:
        operator, argument = next(iter(expression.items()))
        if operator == "$getField":
            return _get_field(parser, argument)
        if operator == "$reduce":
            return _reduce(parser, argument)
        if operator == "$type":
            return _bson_type(parser, argument)
        if operator == "$isoDayOfWeek":
            return _iso_day_of_week(parser, argument)
    return _ORIGINAL_PARSE(parser, expression)


def _element(parser: Any, expression: Any) -> Any:
    """One element of an array expression: its value, null where it is missing."""
    try:
        return parser.parse(expression)
    except KeyError:
        return None


_BSON_TYPES: Final[tuple[tuple[type, str], ...]] = (
    (bool, "bool"),  # before int: a bool is an int in Python
    (bson.Int64, "long"),
    (int, "int"),
    (float, "double"),
    (str, "string"),
    (Mapping, "object"),
    (list, "array"),
    (datetime.datetime, "date"),
    (bson.ObjectId, "objectId"),
    (decimal.Decimal, "decimal"),
    (bson.Decimal128, "decimal"),
    (bytes, "binData"),
)


def _bson_type(parser: Any, argument: Any) -> str:
    """``$type`` (MongoDB 3.4) as an expression: the BSON type's name, ``"missing"`` for a missing value.

    An ``int`` is ``"int"`` within 32 bits and ``"long"`` beyond, as pymongo stores it.
    """
    if isinstance(argument, list):
        if len(argument) != 1:
            message = f"Expression $type takes exactly 1 arguments. {len(argument)} were passed in."
            raise OperationFailure(message)
        argument = argument[0]
    try:
        value = parser.parse(argument)
    except KeyError:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, int) and not isinstance(value, (bool, bson.Int64)) and not -(2**31) <= value < 2**31:
        return "long"
    for kind, name in _BSON_TYPES:
        if isinstance(value, kind):
            return name
    message = f"the adapter has no BSON type for {type(value).__name__}"
    raise NotImplementedError(message)


def _iso_day_of_week(parser: Any, argument: Any) -> int | None:
    """``$isoDayOfWeek`` (MongoDB 3.4) of a date in UTC: 1 (Monday) to 7; null for a null or missing date."""
    if isinstance(argument, Mapping) and "date" in argument:
        if "timezone" in argument:
            message = "the adapter reads $isoDayOfWeek in UTC only"
            raise NotImplementedError(message)
        argument = argument["date"]
    try:
        value = parser.parse(argument)
    except KeyError:
        return None
    if value is None:
        return None
    if not isinstance(value, datetime.datetime):
        message = f"can't convert from BSON type {type(value).__name__} to Date"
        raise OperationFailure(message)
    return value.isoweekday()


def _get_field(parser: Any, argument: Any) -> Any:
    """MongoDB 5.0's ``$getField``: a field of an object by its exact name, ``$`` or ``.`` in it or not.

    Before 7.2 ``field`` is a constant string, a name beginning with ``$`` given through ``$literal``; ``input``
    (default ``$$CURRENT``) missing or null gives null, an input that is no object is an error, and a field the
    object lacks is missing. Nothing is traversed: ``a.b`` is the field named ``a.b``.
    """
    field_name, source = (argument, "$$CURRENT") if isinstance(argument, str) else (argument.get("field"), None)
    if isinstance(argument, Mapping):
        source = argument.get("input", "$$CURRENT")
    if isinstance(field_name, Mapping) and list(field_name) == ["$literal"]:
        field_name = field_name["$literal"]
    elif not isinstance(field_name, str) or field_name.startswith("$"):
        message = "$getField requires 'field' to evaluate to a constant string ($literal around a '$' name)"
        raise OperationFailure(message)
    try:
        value = parser.parse(source)
    except KeyError:
        return None
    if value is None:
        return None
    if not isinstance(value, Mapping):
        message = f"$getField requires 'input' to evaluate to type Object, not {type(value).__name__}"
        raise OperationFailure(message)
    return value[field_name]


def _reduce(parser: Any, argument: Mapping[str, Any]) -> Any:
    """``$reduce`` (MongoDB 3.4): ``in`` applied to each element with ``$$this`` and ``$$value``; null input, null."""
    try:
        items = parser.parse(argument["input"])
    except KeyError:
        return None
    if items is None:
        return None
    if not isinstance(items, list):
        message = f"$reduce requires 'input' to be an array, not {type(items).__name__}"
        raise OperationFailure(message)
    value = parser.parse(argument["initialValue"])
    for item in items:
        variables = {**parser._user_vars, "this": item, "value": value}
        value = _PARSER(parser._doc_dict, variables, ignore_missing_keys=parser._ignore_missing_keys).parse(
            argument["in"]
        )
    return value


_WINDOW_OPTIONS: Final = frozenset({"partitionBy", "sortBy", "output"})
_UNBOUNDED: Final = {"documents": ["unbounded", "unbounded"]}


def _set_window_fields_stage(
    in_collection: list[dict[str, Any]], database: Any, options: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``$setWindowFields`` (MongoDB 5.0), which mongomock lacks, in the form the listing sends: one partition.

    Each ``output`` field is ``{"$count": {}}`` or ``{"$sum": <expression>}`` over the whole partition (no
    ``window``, or the unbounded one), set on every document; ``$sum`` adds the numbers among the values, as
    MongoDB ignores the others. Without ``partitionBy`` the partition is every input document, and without
    ``sortBy`` their order is kept. Any other form (a partition, a sort, a bounded window, another window
    operator) raises ``NotImplementedError``: nothing here would check its meaning.
    """
    unknown = sorted(set(options) - _WINDOW_OPTIONS)
    if unknown:
        message = f"$setWindowFields has no option {unknown[0]!r}"
        raise OperationFailure(message)
    if "partitionBy" in options or "sortBy" in options:
        message = "the adapter runs $setWindowFields over one partition, without sortBy"
        raise NotImplementedError(message)
    output = options.get("output")
    if not isinstance(output, Mapping) or not output:
        message = "$setWindowFields requires a non-empty 'output' document"
        raise OperationFailure(message)
    computed: dict[str, Any] = {}
    for name, spec in output.items():
        operators = [key for key in spec if key != "window"] if isinstance(spec, Mapping) else []
        if len(operators) != 1 or spec.get("window", _UNBOUNDED) != _UNBOUNDED:
            message = f"the adapter runs $setWindowFields' {name!r} as one operator over the whole partition"
            raise NotImplementedError(message)
        operator = operators[0]
        if operator == "$count" and spec[operator] == {}:
            computed[name] = len(in_collection)
        elif operator == "$sum":
            values = (_evaluated(spec[operator], document) for document in in_collection)
            computed[name] = sum(
                value for value in values if isinstance(value, (int, float)) and not isinstance(value, bool)
            )
        else:
            message = f"the adapter has no window operator {operator!r} (only $count and $sum)"
            raise NotImplementedError(message)
    return [{**document, **computed} for document in in_collection]


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
        mock.patch.dict(
            mongomock_aggregate._PIPELINE_HANDLERS,
            {"$lookup": _lookup_stage, "$count": _count_stage, "$setWindowFields": _set_window_fields_stage},
        ),
        mock.patch.object(mongomock_aggregate._Parser, "parse", _parse),
    ):
        yield


# --- pymongo-shaped wrappers -----------------------------------------------------------------------------------


class _Client:
    """The subset of ``pymongo.AsyncMongoClient`` that Beanie and the tests use."""

    def __init__(self, inner: Any, *, rules: bool = True) -> None:
        self._inner = inner
        self.rules = rules

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

    # MongoDB's documented rules, before mongomock sees anything (mongodb_rules.py)

    def _query(self, filter: Mapping[str, Any] | None) -> dict[str, Any]:
        """``filter`` checked, then in stored form."""
        if self.database.client.rules:
            TALLY.queries += 1
            TALLY.check(mongodb_rules.query_constructs(filter), "query")
        return _query_to_storage(filter)

    def _sort(self, sort: Any) -> list[tuple[str, Any]] | None:
        """A ``find`` sort checked, then with directed keys."""
        if sort is not None and self.database.client.rules:
            TALLY.sorts += 1
            TALLY.check(mongodb_rules.sort_constructs(sort), "sort")
        return _sort_to_storage(sort)

    # Reads

    def find(self, filter: Mapping[str, Any] | None = None, *args: Any, sort: Any = None, **kwargs: Any) -> _FindCursor:
        cursor = self._inner.find(self._query(filter), *args, sort=self._sort(sort), **kwargs)
        return _FindCursor(cursor, self)

    async def find_one(
        self, filter: Mapping[str, Any] | None = None, *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call("find_one", self._query(filter), *args, sort=self._sort(sort), **kwargs)
        return None if document is None else _document_from_storage(document)

    async def count_documents(self, filter: Mapping[str, Any], *args: Any, **kwargs: Any) -> int:
        count: int = await self._call("count_documents", self._query(filter), *args, **kwargs)
        return count

    async def distinct(self, key: str, filter: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any) -> list[Any]:
        values = await self._call("distinct", str(key), self._query(filter), *args, **kwargs)
        return [_from_storage(value) for value in values]

    async def aggregate(self, pipeline: Iterable[Mapping[str, Any]], *args: Any, **kwargs: Any) -> _Cursor:
        # A coroutine, as in pymongo's async API (Beanie awaits it); mongomock runs the whole pipeline in this call.
        stages = list(pipeline)
        if self.database.client.rules:
            TALLY.pipelines += 1
            TALLY.check(mongodb_rules.pipeline_constructs(stages), "pipeline")
        with _mongomock_semantics():
            cursor = self._inner.aggregate(_pipeline_to_storage(stages), *args, **kwargs)
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
        return await self._call("replace_one", self._query(filter), _to_storage(replacement), *args, **kwargs)

    async def update_one(self, filter: Mapping[str, Any], update: Any, *args: Any, **kwargs: Any) -> Any:
        return await self._call("update_one", self._query(filter), _to_storage(update), *args, **kwargs)

    async def update_many(self, filter: Mapping[str, Any], update: Any, *args: Any, **kwargs: Any) -> Any:
        return await self._call("update_many", self._query(filter), _to_storage(update), *args, **kwargs)

    async def find_one_and_update(
        self, filter: Mapping[str, Any], update: Any, *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call(
            "find_one_and_update",
            self._query(filter),
            _to_storage(update),
            *args,
            sort=self._sort(sort),
            **kwargs,
        )
        return None if document is None else _document_from_storage(document)

    async def find_one_and_replace(
        self, filter: Mapping[str, Any], replacement: Mapping[str, Any], *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call(
            "find_one_and_replace",
            self._query(filter),
            _to_storage(replacement),
            *args,
            sort=self._sort(sort),
            **kwargs,
        )
        return None if document is None else _document_from_storage(document)

    async def find_one_and_delete(
        self, filter: Mapping[str, Any], *args: Any, sort: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        document = await self._call("find_one_and_delete", self._query(filter), *args, sort=self._sort(sort), **kwargs)
        return None if document is None else _document_from_storage(document)

    async def delete_one(self, filter: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        return await self._call("delete_one", self._query(filter), *args, **kwargs)

    async def delete_many(self, filter: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        return await self._call("delete_many", self._query(filter), *args, **kwargs)

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

    def __init__(self, inner: Any, collection: _Collection) -> None:
        super().__init__(inner)
        self._collection = collection

    def sort(self, key_or_list: Any, direction: Any = None) -> Self:
        spec = [(key_or_list, 1 if direction is None else direction)] if isinstance(key_or_list, str) else key_or_list
        self._inner.sort(self._collection._sort(spec))
        return self

    def skip(self, skip: int) -> Self:
        self._inner.skip(skip)
        return self

    def limit(self, limit: int) -> Self:
        self._inner.limit(limit)
        return self
