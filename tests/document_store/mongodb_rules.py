"""What a MongoDB server of the stated minimum version accepts, by its documentation: a validator of what tests send.

mongomock runs what MongoDB would refuse (and the adapter makes it run more of MongoDB's semantics), so
every aggregation pipeline, query and sort that ``tests/document_store/mongomock_adapter.py`` passes to
mongomock is checked here first (docs: backends, "MongoDB versions and the test store"). The
rules, each from MongoDB's manual:

* **Field paths** (``"$a.b"`` in an expression, ``localField``/``foreignField``, ``$sort`` keys, the
  names ``$addFields``/``$set``/``$project``/``$unset``/``$count``/``as`` write): every component is
  non-empty and none begins with ``$``. A field whose name begins with ``$``, such as a DBRef's
  ``$id``, is read with ``$getField`` (and its name given through ``$literal``). Servers since 4.4
  also take a DBRef's ``$id``, ``$ref`` and ``$db`` in paths, which the manual does not state; the
  tests hold the backend to what the manual says.
* **Query form** (``$match``, ``find``, ``count_documents``...): a path may end in a DBRef's
  ``$id``, ``$ref`` or ``$db`` (the query language compares them); any other ``$`` component is refused,
  as are operators the query language does not have.
* **Variables**: ``$$name`` names a system variable (``ROOT``, ``CURRENT``...) or a user variable
  bound where it is read: ``$let``'s ``vars``, ``$filter``/``$map``'s ``as`` (default ``this``),
  ``$reduce``'s ``this`` and ``value``, ``$lookup``'s ``let`` (inside its ``pipeline``). User
  variable names begin with a lower-case letter.
* **Operators and stages** are known, and new enough: each has the version that introduced it
  (``STAGES``, ``EXPRESSIONS``, ``QUERY_OPERATORS``), and one newer than ``MINIMUM_VERSION`` is
  refused; so are forms that need a later version (``$lookup`` with ``localField``/``foreignField``
  and a ``pipeline``: 5.0; ``$getField``'s ``field`` as an expression: 7.2).
* **Expression objects**: an object with a ``$`` key has exactly one key (the operator); field names
  of an object literal are non-empty and hold no ``.``.
* **``$facet``** takes a non-empty document of sub-pipelines, each named as a field (non-empty, no ``.``,
  no leading ``$``) and holding none of ``$collStats``, ``$facet``, ``$geoNear``, ``$indexStats``,
  ``$out``, ``$merge`` and ``$planCacheStats`` (``FACET_REFUSED``, the manual's list; with the stages
  that only begin a pipeline). Its result is one document, 16 MB at most, which no check here sees.
* **``$setWindowFields``** takes ``partitionBy``, ``sortBy`` and ``output``; each output is one window
  operator of its version (``WINDOW_OPERATORS``) with an optional ``window``; ``sortBy`` is required by
  a bounded window and by the rank and order operators; ``$count`` takes ``{}``.

The operators and stages the listing and these tests never send are checked for their name and
version only, not for the shape of their arguments.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = (
    "EXPRESSIONS",
    "FACET_REFUSED",
    "MINIMUM_VERSION",
    "QUERY_OPERATORS",
    "STAGES",
    "WINDOW_OPERATORS",
    "Construct",
    "pipeline_constructs",
    "query_constructs",
    "sort_constructs",
    "version_text",
)

Version = tuple[int, int]

MINIMUM_VERSION: Version = (5, 0)
"""The oldest MongoDB the Beanie backend supports: ``$getField`` and ``$lookup`` with ``localField``,
``foreignField`` and ``pipeline`` together are both 5.0 (docs: backends, "MongoDB versions and the test store")."""

_BASE: Version = (2, 2)

STAGES: Mapping[str, Version] = {
    "$match": _BASE, "$project": _BASE, "$group": _BASE, "$sort": _BASE, "$limit": _BASE, "$skip": _BASE,
    "$unwind": _BASE, "$geoNear": (2, 4), "$out": (2, 6), "$redact": (2, 6), "$sample": (3, 2),
    "$lookup": (3, 2), "$indexStats": (3, 2), "$addFields": (3, 4), "$bucket": (3, 4), "$bucketAuto": (3, 4),
    "$count": (3, 4), "$facet": (3, 4), "$graphLookup": (3, 4), "$replaceRoot": (3, 4), "$sortByCount": (3, 4),
    "$collStats": (3, 4), "$currentOp": (3, 6), "$listLocalSessions": (3, 6), "$listSessions": (3, 6),
    "$changeStream": (3, 6), "$merge": (4, 2), "$planCacheStats": (4, 2), "$replaceWith": (4, 2),
    "$set": (4, 2), "$unset": (4, 2), "$unionWith": (4, 4), "$setWindowFields": (5, 0), "$densify": (5, 1),
    "$documents": (5, 1), "$fill": (5, 3), "$shardedDataDistribution": (6, 0), "$changeStreamSplitLargeEvent": (7, 0),
}  # fmt: skip
"""Aggregation stages and the MongoDB version that introduced each."""

EXPRESSIONS: Mapping[str, Version] = {
    **dict.fromkeys(
        (
            "$add", "$subtract", "$multiply", "$divide", "$mod", "$and", "$or", "$not", "$cmp", "$eq", "$gt",
            "$gte", "$lt", "$lte", "$ne", "$cond", "$ifNull", "$strcasecmp", "$substr", "$toLower", "$toUpper",
            "$dayOfMonth", "$dayOfWeek", "$dayOfYear", "$hour", "$minute", "$month", "$second", "$week", "$year",
        ),
        _BASE,
    ),
    **dict.fromkeys(("$concat", "$millisecond"), (2, 4)),
    **dict.fromkeys(
        (
            "$let", "$literal", "$map", "$size", "$setEquals", "$setIntersection", "$setUnion", "$setDifference",
            "$setIsSubset", "$anyElementTrue", "$allElementsTrue", "$meta",
        ),
        (2, 6),
    ),
    "$dateToString": (3, 0),
    **dict.fromkeys(
        (
            "$abs", "$ceil", "$exp", "$floor", "$ln", "$log", "$log10", "$pow", "$sqrt", "$trunc", "$arrayElemAt",
            "$concatArrays", "$filter", "$isArray", "$slice", "$avg", "$max", "$min", "$sum", "$stdDevPop",
            "$stdDevSamp",
        ),
        (3, 2),
    ),
    **dict.fromkeys(
        (
            "$in", "$indexOfArray", "$range", "$reverseArray", "$reduce", "$zip", "$indexOfBytes", "$indexOfCP",
            "$split", "$strLenBytes", "$strLenCP", "$substrBytes", "$substrCP", "$switch", "$type", "$isoDayOfWeek",
            "$isoWeek", "$isoWeekYear", "$objectToArray", "$arrayToObject",
        ),
        (3, 4),
    ),
    **dict.fromkeys(("$dateFromParts", "$dateFromString", "$dateToParts", "$mergeObjects"), (3, 6)),
    **dict.fromkeys(
        (
            "$convert", "$toBool", "$toDate", "$toDecimal", "$toDouble", "$toInt", "$toLong", "$toObjectId",
            "$toString", "$ltrim", "$rtrim", "$trim",
        ),
        (4, 0),
    ),
    **dict.fromkeys(
        (
            "$regexFind", "$regexFindAll", "$regexMatch", "$round", "$sin", "$cos", "$tan", "$asin", "$acos",
            "$atan", "$atan2", "$asinh", "$acosh", "$atanh", "$sinh", "$cosh", "$tanh", "$degreesToRadians",
            "$radiansToDegrees",
        ),
        (4, 2),
    ),
    **dict.fromkeys(
        (
            "$accumulator", "$binarySize", "$bsonSize", "$first", "$last", "$function", "$isNumber", "$replaceOne",
            "$replaceAll", "$rand",
        ),
        (4, 4),
    ),
    **dict.fromkeys(
        ("$dateAdd", "$dateDiff", "$dateSubtract", "$dateTrunc", "$getField", "$setField", "$unsetField"), (5, 0)
    ),
    **dict.fromkeys(("$tsIncrement", "$tsSecond"), (5, 1)),
    **dict.fromkeys(
        ("$sortArray", "$firstN", "$lastN", "$maxN", "$minN", "$top", "$topN", "$bottom", "$bottomN"), (5, 2)
    ),
    **dict.fromkeys(("$bitAnd", "$bitOr", "$bitXor", "$bitNot"), (6, 3)),
    **dict.fromkeys(("$median", "$percentile"), (7, 0)),
}  # fmt: skip
"""Aggregation expression operators and the MongoDB version that introduced each (as an expression)."""

QUERY_OPERATORS: Mapping[str, Version] = {
    **dict.fromkeys(
        (
            "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or", "$nor", "$not", "$exists", "$type",
            "$mod", "$regex", "$options", "$where", "$all", "$elemMatch", "$size", "$near", "$nearSphere",
            "$geoWithin", "$geoIntersects", "$box", "$center", "$centerSphere", "$geometry", "$maxDistance",
            "$minDistance", "$polygon", "$comment",
        ),
        _BASE,
    ),
    "$text": (2, 6),
    "$eq": (3, 0),
    **dict.fromkeys(("$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear"), (3, 2)),
    **dict.fromkeys(("$expr", "$jsonSchema"), (3, 6)),
    "$sampleRate": (4, 4),
}  # fmt: skip
"""Query operators (``$match``, ``find``) and the MongoDB version that introduced each."""

FACET_REFUSED = frozenset(
    {
        "$collStats", "$facet", "$geoNear", "$indexStats", "$out", "$merge", "$planCacheStats",
        # Stages a pipeline may only begin with, which a sub-pipeline of $facet cannot.
        "$changeStream", "$currentOp", "$listLocalSessions", "$listSessions", "$documents",
    }
)  # fmt: skip
"""The stages a ``$facet`` sub-pipeline may not hold (the manual's ``$facet`` page, "Behavior")."""

WINDOW_OPERATORS: Mapping[str, Version] = {
    **dict.fromkeys(
        (
            "$addToSet", "$avg", "$count", "$covariancePop", "$covarianceSamp", "$derivative", "$expMovingAvg",
            "$integral", "$max", "$min", "$push", "$stdDevSamp", "$stdDevPop", "$sum", "$first", "$last", "$shift",
            "$denseRank", "$documentNumber", "$rank",
        ),
        (5, 0),
    ),
    **dict.fromkeys(("$locf", "$bottom", "$bottomN", "$firstN", "$lastN", "$maxN", "$minN", "$top", "$topN"), (5, 2)),
    "$linearFill": (5, 3),
    **dict.fromkeys(("$median", "$percentile"), (7, 0)),
}  # fmt: skip
"""``$setWindowFields``' window operators and the MongoDB version that introduced each there."""

_SORTED_WINDOW_OPERATORS = frozenset({"$first", "$last", "$shift", "$denseRank", "$documentNumber", "$rank"})
"""The order and rank operators, which need ``sortBy`` (the manual's ``$setWindowFields`` page, "Restrictions")."""
_WINDOW_STAGE_OPTIONS = frozenset({"partitionBy", "sortBy", "output"})
_UNBOUNDED = ["unbounded", "unbounded"]

SYSTEM_VARIABLES: Mapping[str, Version] = {
    "ROOT": _BASE, "CURRENT": _BASE, "DESCEND": (2, 6), "PRUNE": (2, 6), "KEEP": (2, 6), "REMOVE": (3, 6),
    "NOW": (4, 2), "CLUSTER_TIME": (4, 2), "SEARCH_META": (4, 4), "USER_ROLES": (7, 0),
}  # fmt: skip
"""System variables (``$$ROOT``...) and the MongoDB version that introduced each."""

DBREF_FIELDS = frozenset({"$id", "$ref", "$db"})
"""A DBRef's fields: the query language compares ``<link>.$id``; expressions read them with ``$getField``."""

_USER_VARIABLE = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_TOP_LEVEL_QUERY = frozenset({"$and", "$or", "$nor", "$expr", "$comment", "$text", "$where", "$jsonSchema"})
_QUERY_LISTS = frozenset({"$and", "$or", "$nor"})
_LOOKUP_OPTIONS = frozenset({"from", "localField", "foreignField", "as", "let", "pipeline"})
_NAMED_ARGUMENTS = frozenset({"$filter", "$map", "$reduce", "$let", "$getField", "$setField", "$unsetField"})


def version_text(version: Version) -> str:
    """``(5, 0)`` -> ``"5.0"``."""
    return ".".join(map(str, version))


@dataclass(frozen=True)
class Construct:
    """One thing MongoDB's documentation says a server of the version checked refuses.

    Attributes:
        rule: The kind of rule broken: ``field path``, ``query path``, ``variable``, ``operator``,
            ``stage``, ``option`` or ``shape``.
        where: Where it is, e.g. ``[3].$addFields.part_count.$size.$filter.cond.$and[0].$eq[0]``.
        text: The construct as sent, e.g. ``$$this.company.$id``.
        why: What the documentation says.
    """

    rule: str
    where: str
    text: str
    why: str

    def __str__(self) -> str:
        return f"{self.rule} {self.text!r} at {self.where or '(top)'}: {self.why}"


class _Walker:
    """Walks pipelines, expressions and queries; yields every construct a server of ``version`` refuses."""

    def __init__(self, version: Version) -> None:
        self.version = version

    # ------------------------------------------------------------------ names and paths
    def _too_new(self, name: str, since: Version) -> str | None:
        if since > self.version:
            return f"{name} is new in MongoDB {version_text(since)}, after {version_text(self.version)}"
        return None

    def path(self, path: object, where: str, *, rule: str = "field path", shown: str = "") -> Iterator[Construct]:
        """A dotted path a stage reads or writes (``shown``: how it was written, when it had a ``$`` prefix)."""
        if not isinstance(path, str) or not path:
            yield Construct(rule, where, shown or repr(path), "a field path is a non-empty string")
            return
        for component in path.split("."):
            if not component:
                yield Construct(rule, where, shown or path, "a field path has no empty component")
            elif component.startswith("$") and not (rule == "query path" and component in DBREF_FIELDS):
                why = (
                    "a field whose name begins with '$' is read with $getField, its name in $literal"
                    if rule == "field path"
                    else "the query language reads no '$' component but a DBRef's $id, $ref and $db"
                )
                yield Construct(rule, where, shown or path, why)

    def reference(self, text: str, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """A string that an expression reads: ``$path`` or ``$$variable[.path]``."""
        if text.startswith("$$"):
            name, _, rest = text[2:].partition(".")
            if name in SYSTEM_VARIABLES:
                too_new = self._too_new(f"$${name}", SYSTEM_VARIABLES[name])
                if too_new:
                    yield Construct("variable", where, text, too_new)
            elif name not in scope:
                why = (
                    "no $let, $filter, $map, $reduce or $lookup binds this variable here"
                    if _USER_VARIABLE.match(name)
                    else "a user variable's name begins with a lower-case letter"
                )
                yield Construct("variable", where, text, why)
            if rest:
                yield from self.path(rest, where, shown=text)
        elif text == "$":
            yield Construct("field path", where, text, "'$' alone is no field path")
        else:
            yield from self.path(text[1:], where, shown=text)

    # ------------------------------------------------------------------ expressions
    def expression(self, value: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """An aggregation expression evaluated with the user variables ``scope`` bound."""
        if isinstance(value, str):
            if value.startswith("$"):
                yield from self.reference(value, where, scope)
        elif isinstance(value, Mapping):
            keys = [str(key) for key in value]
            operators = [key for key in keys if key.startswith("$")]
            if not operators:
                for key, item in value.items():
                    name = str(key)
                    if not name or "." in name:
                        yield Construct("shape", where, name, "a field name of an expression object holds no '.'")
                    yield from self.expression(item, f"{where}.{name}", scope)
                return
            if len(keys) != 1:
                yield Construct("shape", where, ", ".join(keys), "an operator expression has exactly one field")
                return
            yield from self.operator(keys[0], value[keys[0]], f"{where}.{keys[0]}", scope)
        elif isinstance(value, (list, tuple)):
            for position, item in enumerate(value):
                yield from self.expression(item, f"{where}[{position}]", scope)

    def operator(self, name: str, argument: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        since = EXPRESSIONS.get(name)
        if since is None:
            yield Construct("operator", where, name, "no aggregation expression operator has this name")
            return
        too_new = self._too_new(name, since)
        if too_new:
            yield Construct("operator", where, name, too_new)
        if name == "$literal":
            return
        if name in _NAMED_ARGUMENTS and isinstance(argument, Mapping):
            yield from self.named(name, argument, where, scope)
        elif isinstance(argument, Mapping) and not any(str(key).startswith("$") for key in argument):
            # Named arguments ($cond's if/then/else, $dateToString's format/date...): each an expression.
            for key, item in argument.items():
                yield from self.expression(item, f"{where}.{key}", scope)
        else:
            yield from self.expression(argument, where, scope)

    def named(self, name: str, argument: Mapping[str, Any], where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """The operators that bind variables or take a field name."""
        if name in {"$filter", "$map"}:
            bound = argument.get("as", "this")
            yield from self.binding(bound, f"{where}.as")
            yield from self.expression(argument.get("input"), f"{where}.input", scope)
            inner = scope | {str(bound)}
            body = "cond" if name == "$filter" else "in"
            yield from self.expression(argument.get(body), f"{where}.{body}", inner)
            if "limit" in argument:
                too_new = self._too_new("$filter's limit", (5, 2))
                if too_new:
                    yield Construct("option", f"{where}.limit", "limit", too_new)
                yield from self.expression(argument["limit"], f"{where}.limit", scope)
        elif name == "$reduce":
            yield from self.expression(argument.get("input"), f"{where}.input", scope)
            yield from self.expression(argument.get("initialValue"), f"{where}.initialValue", scope)
            yield from self.expression(argument.get("in"), f"{where}.in", scope | {"this", "value"})
        elif name == "$let":
            variables = argument.get("vars", {})
            names = [str(key) for key in variables] if isinstance(variables, Mapping) else []
            for variable in names:
                yield from self.binding(variable, f"{where}.vars")
                yield from self.expression(variables[variable], f"{where}.vars.{variable}", scope)
            yield from self.expression(argument.get("in"), f"{where}.in", scope | frozenset(names))
        else:  # $getField, $setField, $unsetField
            yield from self.field_name(argument.get("field"), f"{where}.field", scope)
            if "input" in argument:
                yield from self.expression(argument["input"], f"{where}.input", scope)
            if "value" in argument:
                yield from self.expression(argument["value"], f"{where}.value", scope)

    def binding(self, name: object, where: str) -> Iterator[Construct]:
        if not isinstance(name, str) or not _USER_VARIABLE.match(name):
            yield Construct("variable", where, repr(name), "a user variable's name begins with a lower-case letter")

    def field_name(self, field: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """``$getField``'s ``field``: a constant string before 7.2, ``$literal`` around a ``$`` name."""
        if isinstance(field, str) and not field.startswith("$"):
            return
        if isinstance(field, Mapping) and list(field) == ["$literal"] and isinstance(field["$literal"], str):
            return
        too_new = self._too_new("a field name computed by an expression", (7, 2))
        if too_new:
            yield Construct("shape", where, repr(field), f"{too_new}; give a string, or $literal of one")
        else:
            yield from self.expression(field, where, scope)

    # ------------------------------------------------------------------ queries
    def query(self, query: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """A query document (``$match``, ``find``); ``$expr`` inside sees ``scope``."""
        if not isinstance(query, Mapping):
            yield Construct("shape", where, repr(query), "a query is a document")
            return
        for key, condition in query.items():
            name = str(key)
            inside = f"{where}.{name}" if where else name
            if name.startswith("$"):
                if name not in _TOP_LEVEL_QUERY:
                    yield Construct("operator", inside, name, "no top-level query operator has this name")
                    continue
                too_new = self._too_new(name, QUERY_OPERATORS[name])
                if too_new:
                    yield Construct("operator", inside, name, too_new)
                if name in _QUERY_LISTS:
                    if not isinstance(condition, (list, tuple)) or not condition:
                        yield Construct("shape", inside, name, f"{name} takes a non-empty array of queries")
                        continue
                    for position, branch in enumerate(condition):
                        yield from self.query(branch, f"{inside}[{position}]", scope)
                elif name == "$expr":
                    yield from self.expression(condition, inside, scope)
                continue
            yield from self.path(name, inside, rule="query path")
            yield from self.condition(condition, inside, scope)

    def condition(self, condition: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """What a field is compared with: a value, or a document of query operators."""
        if not isinstance(condition, Mapping):
            return
        keys = [str(key) for key in condition]
        operators = [key for key in keys if key.startswith("$")]
        if not operators or frozenset(keys) <= DBREF_FIELDS:
            return  # an embedded document, or a DBRef, compared as a value
        if len(operators) != len(keys):
            yield Construct("shape", where, ", ".join(keys), "operators and field names do not mix in a condition")
            return
        for name in operators:
            since = QUERY_OPERATORS.get(name)
            inside = f"{where}.{name}"
            if since is None or name in _TOP_LEVEL_QUERY - {"$comment"}:
                yield Construct("operator", inside, name, "no query operator of a field has this name")
                continue
            too_new = self._too_new(name, since)
            if too_new:
                yield Construct("operator", inside, name, too_new)
            argument = condition[name]
            if name in {"$in", "$nin", "$all"} and not isinstance(argument, (list, tuple)):
                yield Construct("shape", inside, name, f"{name} takes an array")
            elif name == "$elemMatch":
                if isinstance(argument, Mapping) and any(not str(key).startswith("$") for key in argument):
                    yield from self.query(argument, inside, scope)
                else:
                    yield from self.condition(argument, inside, scope)
            elif name == "$not":
                yield from self.condition(argument, inside, scope)
            elif name == "$exists" and not isinstance(argument, (bool, int)):
                yield Construct("shape", inside, name, "$exists takes a boolean")

    # ------------------------------------------------------------------ pipelines
    def pipeline(self, pipeline: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        if not isinstance(pipeline, (list, tuple)):
            yield Construct("shape", where, repr(pipeline), "a pipeline is an array of stages")
            return
        for position, stage in enumerate(pipeline):
            yield from self.stage(stage, f"{where}[{position}]", scope)

    def stage(self, stage: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        if not isinstance(stage, Mapping) or len(stage) != 1:
            yield Construct("shape", where, repr(stage), "a stage is a document with exactly one field")
            return
        name, options = next(iter(stage.items()))
        name = str(name)
        inside = f"{where}.{name}"
        since = STAGES.get(name)
        if since is None:
            yield Construct("stage", inside, name, "no aggregation stage has this name")
            return
        too_new = self._too_new(name, since)
        if too_new:
            yield Construct("stage", inside, name, too_new)
        yield from self.stage_options(name, options, inside, scope)

    def stage_options(self, name: str, options: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        if name == "$match":
            yield from self.query(options, where, scope)
        elif name in {"$addFields", "$set"}:
            yield from self.outputs(options, where, scope, projection=False)
        elif name == "$project":
            yield from self.outputs(options, where, scope, projection=True)
        elif name == "$unset":
            paths = [options] if isinstance(options, str) else options
            if not isinstance(paths, (list, tuple)) or not paths:
                yield Construct("shape", where, repr(options), "$unset takes a field path or an array of them")
                return
            for position, path in enumerate(paths):
                yield from self.path(path, f"{where}[{position}]")
        elif name == "$sort":
            yield from self.sort(options, where)
        elif name in {"$skip", "$limit"}:
            smallest = 0 if name == "$skip" else 1
            if isinstance(options, bool) or not isinstance(options, int) or options < smallest:
                yield Construct("shape", where, repr(options), f"{name} takes an integer of at least {smallest}")
        elif name == "$count":
            if not isinstance(options, str) or not options or options.startswith("$") or "." in options:
                yield Construct("shape", where, repr(options), "$count names a field without '$' or '.'")
        elif name == "$lookup":
            yield from self.lookup(options, where, scope)
        elif name == "$unwind":
            path = options.get("path") if isinstance(options, Mapping) else options
            if not isinstance(path, str) or not path.startswith("$") or path.startswith("$$"):
                yield Construct("shape", where, repr(path), "$unwind's path is a field path with a '$' prefix")
            else:
                yield from self.path(path[1:], where, shown=path)
        elif name == "$group":
            if isinstance(options, Mapping):
                for key, value in options.items():
                    yield from self.expression(value, f"{where}.{key}", scope)
        elif name == "$facet":
            yield from self.facet(options, where, scope)
        elif name == "$setWindowFields":
            yield from self.window_fields(options, where, scope)
        elif name in {"$replaceRoot", "$replaceWith"}:
            root = options.get("newRoot") if name == "$replaceRoot" and isinstance(options, Mapping) else options
            yield from self.expression(root, where, scope)

    def facet(self, options: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """``$facet``: named sub-pipelines, none holding a stage of ``FACET_REFUSED``."""
        if not isinstance(options, Mapping) or not options:
            yield Construct("shape", where, repr(options), "$facet takes a non-empty document of sub-pipelines")
            return
        for output, pipeline in options.items():
            name = str(output)
            inside = f"{where}.{name}"
            if not name or name.startswith("$") or "." in name:
                why = "a $facet sub-pipeline is named as a field: non-empty, no '.', no leading '$'"
                yield Construct("shape", inside, name, why)
            if not isinstance(pipeline, (list, tuple)):
                yield Construct("shape", inside, repr(pipeline), "a $facet sub-pipeline is an array of stages")
                continue
            for position, stage in enumerate(pipeline):
                stage_name = next(iter(stage), None) if isinstance(stage, Mapping) else None
                if stage_name in FACET_REFUSED:
                    why = "a $facet sub-pipeline may not hold this stage"
                    yield Construct("stage", f"{inside}[{position}].{stage_name}", str(stage_name), why)
            yield from self.pipeline(pipeline, inside, scope)

    def window_fields(self, options: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        """``$setWindowFields``: its options, each output's window operator (by version) and window."""
        if not isinstance(options, Mapping):
            yield Construct("shape", where, repr(options), "$setWindowFields takes a document")
            return
        unknown = sorted(set(map(str, options)) - _WINDOW_STAGE_OPTIONS)
        if unknown:
            yield Construct("option", where, ", ".join(unknown), "$setWindowFields has no such option")
        if "partitionBy" in options:
            yield from self.expression(options["partitionBy"], f"{where}.partitionBy", scope)
        sorted_by = "sortBy" in options
        if sorted_by:
            yield from self.sort(options["sortBy"], f"{where}.sortBy")
        output = options.get("output")
        if not isinstance(output, Mapping) or not output:
            yield Construct("shape", f"{where}.output", repr(output), "$setWindowFields needs a non-empty output")
            return
        for key, spec in output.items():
            inside = f"{where}.output.{key}"
            yield from self.path(str(key), inside)
            operators = [str(name) for name in spec if str(name) != "window"] if isinstance(spec, Mapping) else []
            if not isinstance(spec, Mapping) or len(operators) != 1:
                yield Construct("shape", inside, repr(spec), "an output is one window operator and its window")
                continue
            operator = operators[0]
            since = WINDOW_OPERATORS.get(operator)
            if since is None:
                yield Construct("operator", f"{inside}.{operator}", operator, "no window operator has this name")
                continue
            too_new = self._too_new(f"{operator} as a window operator", since)
            if too_new:
                yield Construct("operator", f"{inside}.{operator}", operator, too_new)
            window = spec.get("window")
            bounded = window is not None and (not isinstance(window, Mapping) or window.get("documents") != _UNBOUNDED)
            if not sorted_by and (bounded or operator in _SORTED_WINDOW_OPERATORS):
                why = "sortBy is required by a bounded window and by the rank and order operators"
                yield Construct("option", inside, operator, why)
            if operator == "$count":
                if spec[operator] != {}:
                    yield Construct("shape", f"{inside}.$count", repr(spec[operator]), "$count takes {}")
            else:
                yield from self.expression(spec[operator], f"{inside}.{operator}", scope)

    def outputs(self, options: object, where: str, scope: frozenset[str], *, projection: bool) -> Iterator[Construct]:
        if not isinstance(options, Mapping) or not options:
            yield Construct("shape", where, repr(options), "the stage takes a non-empty document of fields")
            return
        for key, value in options.items():
            inside = f"{where}.{key}"
            yield from self.path(str(key), inside)
            if projection and (isinstance(value, bool) or value in (0, 1)):
                continue
            yield from self.expression(value, inside, scope)

    def sort(self, options: object, where: str) -> Iterator[Construct]:
        if isinstance(options, Mapping):
            pairs: list[tuple[object, object]] = list(options.items())
        elif isinstance(options, (list, tuple)) and all(isinstance(pair, (list, tuple)) for pair in options):
            pairs = [(pair[0], pair[1] if len(pair) > 1 else None) for pair in options]
        else:
            yield Construct("shape", where, repr(options), "a sort is a document of keys and directions")
            return
        if not pairs:
            yield Construct("shape", where, repr(options), "a sort has at least one key")
        for key, direction in pairs:
            inside = f"{where}.{key}"
            yield from self.path(str(key), inside)
            if not (direction in (1, -1) or (isinstance(direction, Mapping) and list(direction) == ["$meta"])):
                yield Construct("shape", inside, repr(direction), "a sort direction is 1, -1 or {$meta: ...}")

    def lookup(self, options: object, where: str, scope: frozenset[str]) -> Iterator[Construct]:
        if not isinstance(options, Mapping):
            yield Construct("shape", where, repr(options), "$lookup takes a document")
            return
        unknown = sorted(set(map(str, options)) - _LOOKUP_OPTIONS)
        if unknown:
            yield Construct("option", where, ", ".join(unknown), "$lookup has no such option")
        if not isinstance(options.get("from"), str):
            yield Construct("shape", f"{where}.from", repr(options.get("from")), "$lookup names a collection")
        yield from self.path(options.get("as"), f"{where}.as")
        equality = "localField" in options or "foreignField" in options
        if equality:
            for side in ("localField", "foreignField"):
                yield from self.path(options.get(side), f"{where}.{side}")
        if "let" in options and "pipeline" not in options:
            yield Construct("option", f"{where}.let", "let", "$lookup's let goes with a pipeline")
        if "pipeline" not in options:
            if not equality:
                yield Construct("option", where, "$lookup", "$lookup takes localField and foreignField, or a pipeline")
            return
        if equality:
            too_new = self._too_new("$lookup with localField, foreignField and pipeline", (5, 0))
            if too_new:
                yield Construct("option", f"{where}.pipeline", "pipeline", too_new)
        else:
            too_new = self._too_new("$lookup's pipeline", (3, 6))
            if too_new:
                yield Construct("option", f"{where}.pipeline", "pipeline", too_new)
        variables = options.get("let", {})
        names = [str(key) for key in variables] if isinstance(variables, Mapping) else []
        for variable in names:
            yield from self.binding(variable, f"{where}.let")
            yield from self.expression(variables[variable], f"{where}.let.{variable}", scope)
        # The sub-pipeline runs on the foreign documents: only let's variables are bound there.
        yield from self.pipeline(options["pipeline"], f"{where}.pipeline", frozenset(names))


def pipeline_constructs(pipeline: Sequence[Mapping[str, Any]], version: Version = MINIMUM_VERSION) -> list[Construct]:
    """Every construct of ``pipeline`` (an ``aggregate``'s stages) a server of ``version`` refuses."""
    return list(_Walker(version).pipeline(pipeline, "", frozenset()))


def query_constructs(query: Mapping[str, Any] | None, version: Version = MINIMUM_VERSION) -> list[Construct]:
    """Every construct of ``query`` (a ``find``, ``count_documents``... filter) a server of ``version`` refuses."""
    return list(_Walker(version).query(query or {}, "", frozenset()))


def sort_constructs(sort: object, version: Version = MINIMUM_VERSION) -> list[Construct]:
    """Every construct of a ``find`` sort (``[(key, direction), ...]``) a server of ``version`` refuses."""
    if sort is None:
        return []
    pairs = [(sort, 1)] if isinstance(sort, str) else sort
    return list(_Walker(version).sort(pairs, "sort"))
