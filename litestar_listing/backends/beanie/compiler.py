"""``ListQuery`` -> MongoDB aggregation pipelines: one for the page, one for the total.

Filters compare the document's own keys (a reference at ``<field>.$id``); search and
order through links use ``$lookup`` stages into ``_listing_``-prefixed arrays, so no document is
repeated and totals stay exact. Nothing from the client reaches a pipeline as an operator: keys
come from the model or the resource's allowlist, search text becomes an escaped regex.

What MongoDB's documentation allows, and no more (docs: backends, "MongoDB versions and the test
store"): a link's ``$id`` is compared in query form (``$match``, ``find``), where the
query language reads it, and read in expressions only through ``$getField`` (``link_id``), since
the manual refuses a field path with a component beginning with ``$``. That and ``$lookup`` with
``localField``, ``foreignField`` and ``pipeline`` together make MongoDB 5.0 the minimum
(``MINIMUM_MONGODB``). Constants in expressions are wrapped in ``$literal``: a string beginning
with ``$`` is data there, not a field path.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from bson import Binary, Decimal128

from litestar_listing.backends.base import dispatch, where
from litestar_listing.backends.beanie.introspection import DocumentInfo, Documents
from litestar_listing.core.fields import JsonKey, ValueType
from litestar_listing.core.parts import Span
from litestar_listing.core.query import Combine, FieldPath, Filter, ListQuery, OrderTerm, Policy, RawFilter, Search
from litestar_listing.core.text import caseless_regex

__all__ = (
    "JSON_TYPES",
    "MINIMUM_MONGODB",
    "PART_EXPRESSIONS",
    "PREFIX",
    "CompiledList",
    "PipelineCompiler",
    "encode",
    "field_value",
    "first_value",
    "json_elements",
    "json_value",
    "link_id",
    "lookup_alias",
)

PREFIX = "_listing_"
"""Prefix of every key the compiled pipelines add to documents; none reaches an item."""

MINIMUM_MONGODB = (5, 0)
"""The oldest MongoDB server the pipelines run on: ``$getField`` (5.0) reads a link's ``$id`` in
expressions, and a ``$lookup`` with ``localField``/``foreignField`` and a ``pipeline`` (5.0) keeps only
the linked documents inside their class's row policy (docs: backends, "MongoDB versions and the test store")."""

_DBREF_ID = {"$literal": "$id"}
"""The name of a DBRef's identifier field, as ``$getField`` takes a name that begins with ``$``."""


def link_id(link: object) -> dict[str, Any]:
    """The identifier a stored link holds, as an aggregation expression (MongoDB 5.0).

    Beanie stores a ``Link`` as a DBRef, the sub-document ``{"$ref": <collection>, "$id": <id>}``.
    MongoDB's documentation refuses a field path with a component that begins with ``$``
    (``"$owner.$id"``, ``"$$this.owner.$id"``); such a field is read with ``$getField``, its name in
    ``$literal``. For pipelines of one's own (``BeanieBackend(pipeline=...)``, ``Computed`` values) too.

    Args:
        link: An expression of the stored link, e.g. ``"$owner"`` or ``"$$this.owner"``.

    Returns:
        ``{"$getField": {"field": {"$literal": "$id"}, "input": link}}``: the identifier, or null when
        the link is null or missing.
    """
    return {"$getField": {"field": _DBREF_ID, "input": link}}


Stage = dict[str, Any]
Test = Callable[[Any], Any]
"""A condition on one value, as an aggregation expression of the value's expression."""

JSON_TYPES: Mapping[ValueType, tuple[str, ...]] = MappingProxyType(
    {
        ValueType.TEXT: ("string",),
        ValueType.INTEGER: ("int", "long"),
        ValueType.FLOAT: ("int", "long", "double"),
        ValueType.BOOLEAN: ("bool",),
        ValueType.DATE: ("string",),
    }
)
"""The BSON types (``$type``'s names) a value of a JSON key's declared type has in a document.

A value of any other type reads as null, as ``JsonKey.values`` defines (docs: query language, "Keys of
JSON documents"): ``42.0`` is no ``int``, a ``bool`` no number. A ``date`` is text that also matches
``_DATE_TEXT``."""

_DATE_TEXT = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(?![\s\S])"
"""``YYYY-MM-DD`` and nothing after it, in PCRE (MongoDB) and Python alike (``$`` would let a final
newline through)."""

PART_EXPRESSIONS: Mapping[str, Test] = MappingProxyType(
    {
        "quarter": lambda day: {"$ceil": {"$divide": [{"$month": day}, 3]}},
        "month": lambda day: {"$month": day},
        "day": lambda day: {"$dayOfMonth": day},
        "week_day": lambda day: {"$isoDayOfWeek": day},
        "hour": lambda day: {"$hour": day},
    }
)
"""The date parts computed per document, as aggregation expressions of a BSON date (in UTC, which is how
MongoDB stores every date and how these operators read it without a ``timezone``). The ranged parts
(``date``, ``year``) are ranges of the stored value instead (``PartOf.spans``), which an index serves
(docs: query language, "Parts of dates")."""

_NOTHING: Stage = {"_id": {"$exists": False}}
"""A condition no document meets: every stored document has an ``_id``."""


class _Unrepresentable:
    """A value no stored value can equal (a decimal beyond Decimal128's 34 digits)."""


_UNREPRESENTABLE = _Unrepresentable()


def encode(value: object) -> object:
    """A coerced filter value as it is stored in BSON by Beanie.

    Enums by value, datetimes in naive UTC, dates at midnight (Beanie stores ``date`` as a
    datetime), decimals as ``Decimal128``, UUIDs as standard binary (subtype 4).
    """
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    if isinstance(value, decimal.Decimal):
        try:
            return Decimal128(value)
        except (decimal.InvalidOperation, ValueError):
            try:
                return Decimal128(value.normalize())
            except (decimal.InvalidOperation, ValueError):
                return _UNREPRESENTABLE
    if isinstance(value, uuid.UUID):
        return Binary.from_uuid(value)
    return value


@dataclass(frozen=True, slots=True)
class CompiledList:
    """The two pipelines of one list request.

    Attributes:
        count: Yields ``{"total": n}``, or nothing when no document matches.
        page: Yields the page's documents, ordered and cut, projected to the listed fields (no
            looked-up array, no private field).
    """

    count: list[Stage]
    page: list[Stage]


def _all_of(conditions: Sequence[Stage]) -> Stage:
    return conditions[0] if len(conditions) == 1 else {"$and": list(conditions)}


def _any_of(conditions: Sequence[Stage]) -> Stage:
    return conditions[0] if len(conditions) == 1 else {"$or": list(conditions)}


def lookup_alias(relations: Sequence[str]) -> str:
    """The key the documents a relation path reaches are looked up into: ``_listing_owner__role``."""
    return PREFIX + "__".join(relations)


class PipelineCompiler:
    """Compiles queries over one document class.

    Args:
        documents: The listed document class and those its links reach.
        pipeline: The resource's own stages (its base list query); the compiled stages are appended.
        computed: Computed alias -> aggregation expression, added with ``$addFields`` (docs: computed, "Beanie").
    """

    def __init__(
        self,
        documents: Documents,
        pipeline: Sequence[Mapping[str, Any]] = (),
        computed: Mapping[str, Any] | None = None,
    ) -> None:
        self.documents = documents
        self.root = documents.info(documents.root)
        self.pipeline = [dict(stage) for stage in pipeline]
        self.computed = dict(computed or {})

    def compile(self, query: ListQuery, load: Sequence[str] = ()) -> CompiledList:
        """Both pipelines of ``query``; the page pipeline is empty-safe past the last page.

        Row policies (``ListQuery.policies``): the listed class's is matched with the forced
        filters; every ``$lookup`` keeps only the linked documents inside their class's policy,
        so a linked document outside it reads as a missing one (docs: scoping, "Row policies").

        Args:
            query: The list query.
            load: The relations of the listed class the page's documents are loaded with
                (``ListContext.load``'s first steps): a list of links keeps its stored links in the
                page's projection, for ``loading.load`` to read.
        """
        policies = {policy.entity: policy for policy in query.policies}
        done: list[Sequence[str]] = []
        stages = [*self.pipeline, *self.matching(query, done)]
        count = [*stages, {"$count": "total"}]
        page = stages + self._order(query.order, done, policies)
        window = query.window
        if window.offset:
            page.append({"$skip": window.offset})
        page.append({"$limit": window.count})
        page.append({"$project": self._projection(load)})
        return CompiledList(count=count, page=page)

    def matching(self, query: ListQuery, done: list[Sequence[str]]) -> list[Stage]:
        """The stages that keep the documents ``query`` lists, after the resource's own pipeline.

        The listed class's row policy, the forced filters and the client's filters in one ``$match``
        (own keys, so before any lookup), then the search in a ``$match`` of its own after the
        lookups it needs; each lookup under its class's row policy (docs: scoping, "Row policies").
        ``query``'s order and window are not read.

        Args:
            query: The list query.
            done: The relation paths already looked up; those these stages look up are added.
        """
        policies = {policy.entity: policy for policy in query.policies}
        stages: list[Stage] = []
        lookups: list[Sequence[str]] = []
        condition = self._condition(query, lookups)
        own = self.policy_match(self.root, policies.get(self.root.entity.name))
        if own is not None:
            condition = own if condition is None else _all_of([own, condition])
        if condition is not None:
            # Own keys only (always, for client filters): the match runs before any lookup.
            stages += self.lookups(lookups, done, policies)
            stages.append({"$match": condition})
        if query.search is not None:
            lookups = []
            search = self.search(query.search, lookups)
            stages += self.lookups(lookups, done, policies)
            stages.append({"$match": search})
        return stages

    def narrowing(self, query: ListQuery, done: list[Sequence[str]]) -> list[Stage]:
        """The stages that keep the documents ``query``'s client filters match, combined by ``query.combine``.

        Its forced filters, search and row policies are left to ``matching``; a lookup a filter
        needs comes first, under the policies of ``query``. No stage when it has no filter.

        Args:
            query: The filters (``ListQuery.filters`` and ``combine``) and the policies of the lookups.
            done: As for ``matching``.
        """
        if not query.filters:
            return []
        lookups: list[Sequence[str]] = []
        client = [self.filter(item, lookups) for item in query.filters]
        condition = _all_of(client) if query.combine is Combine.AND else _any_of(client)
        policies = {policy.entity: policy for policy in query.policies}
        return [*self.lookups(lookups, done, policies), {"$match": condition}]

    # ------------------------------------------------------------------ paths and lookups
    def info_at(self, relations: Sequence[str]) -> DocumentInfo:
        """The document class ``relations`` (a relation path from the listed class) reach."""
        info = self.root
        for step in relations:
            info = self.documents.info(info.references[step].target)
        return info

    def key(self, path: FieldPath, lookups: list[Sequence[str]]) -> str:
        """The key ``path`` is stored or looked up under; its lookups are added to ``lookups``."""
        info = self.info_at(path.relations)
        stored = info.keys[path.field]
        if not path.relations:
            return stored
        for depth in range(1, len(path.relations) + 1):
            prefix = path.relations[:depth]
            if prefix not in lookups:
                lookups.append(prefix)
        return f"{lookup_alias(path.relations)}.{stored}"

    def lookups(
        self, needed: Sequence[Sequence[str]], done: list[Sequence[str]], policies: Mapping[str, Policy]
    ) -> list[Stage]:
        """The ``$lookup`` stages of ``needed`` relation paths not in ``done`` (added to it), parents first.

        A link is looked up by the identifiers it holds, read with ``link_id`` into a key of their own
        (``localField`` may not end in ``$id``); a back link by a sub-pipeline comparing each linking
        document's ``link_id`` with the local ``_id``. The linked class's row policy is a ``$match``
        in query form inside the lookup, where ``<link>.$id`` may be compared.
        """
        stages: list[Stage] = []
        for relations in sorted(needed, key=len):
            if relations in done:
                continue
            done.append(relations)
            source = self.info_at(relations[:-1])
            reference = source.references[relations[-1]]
            target = self.documents.info(reference.target)
            parent = lookup_alias(relations[:-1]) if len(relations) > 1 else None
            alias = lookup_alias(relations)
            allowed = self.policy_match(target, policies.get(target.entity.name))
            lookup: Stage = {"from": reference.target.get_collection_name()}
            if reference.kind == "back":
                linked = link_id(f"${target.references[reference.back_field].key}")
                match: Stage = {"$expr": {"$in": [linked, "$$keys"]}}
                lookup["let"] = {"keys": f"${parent}._id" if parent else ["$_id"]}
                lookup["pipeline"] = [{"$match": match if allowed is None else {"$and": [match, allowed]}}]
            else:
                key = f"{PREFIX}id-{'__'.join(relations)}"  # '-': no relation's alias has it
                stages.append({"$addFields": {key: _linked_ids(reference.key, parent, many=reference.kind == "links")}})
                lookup.update(localField=key, foreignField="_id")
                if allowed is not None:
                    lookup["pipeline"] = [{"$match": allowed}]
            lookup["as"] = alias
            stages.append({"$lookup": lookup})
        return stages

    # ------------------------------------------------------------------ row policies
    def policy_match(self, info: DocumentInfo, policy: Policy | None) -> Stage | None:
        """``policy`` on documents of ``info`` as a query (``$match``, ``find``), or None for none."""
        if policy is None:
            return None
        if not policy.visible:
            return _NOTHING
        parts: list[Stage] = []
        for item in policy.filters:
            key = info.keys[item.path.field]
            if item.operator.name == "isnull":
                parts.append({key: None} if item.value else {key: {"$ne": None}})
            elif item.operator.name == "in":
                parts.append(self.op_in(key, item.value))  # type: ignore[arg-type]
            else:
                parts.append(self.op_eq(key, item.value))
        return _all_of(parts) if parts else None

    def policy_expression(self, info: DocumentInfo, policy: Policy | None, variable: str = "this") -> Any:
        """``policy`` on ``$$<variable>``, a document of ``info``, as an aggregation expression.

        Args:
            info: The document class.
            policy: Its policy, or None for none.
            variable: The variable the document is bound to: ``this`` in a ``$filter`` or ``$map``
                without ``as``, else its ``as``.

        Returns:
            The expression, ``False`` when the policy lets no document through, or None when it
            restricts nothing.
        """
        if policy is None:
            return None
        if not policy.visible:
            return False
        parts: list[Any] = []
        for item in policy.filters:
            present = {"$ifNull": [field_value(info, item.path.field, f"$${variable}."), None]}
            if item.operator.name == "isnull":
                parts.append({"$eq" if item.value else "$ne": [present, None]})
            elif item.operator.name == "in":
                encoded = [one for one in map(encode, item.value) if one is not _UNREPRESENTABLE]  # type: ignore[call-overload]
                parts.append({"$in": [present, {"$literal": encoded}]})
            else:
                encoded_value = encode(item.value)
                if encoded_value is _UNREPRESENTABLE:
                    parts.append(False)
                else:
                    parts.append({"$eq": [present, {"$literal": encoded_value}]})
        return {"$and": parts} if parts else None

    # ------------------------------------------------------------------ filters and search
    def _condition(self, query: ListQuery, lookups: list[Sequence[str]]) -> Stage | None:
        # The search is matched in a stage of its own, after the lookups it needs.
        return where(query, lambda item: self.filter(item, lookups), None, _all_of, _any_of)

    def filter(self, item: Filter | RawFilter, lookups: list[Sequence[str]]) -> Stage:
        """One filter as a match condition (docs: query language, "Document-store resources").

        A field's own value in query form, where an index serves it; a range part of a date too
        (``PartOf.spans``). A part computed per document and a key of a JSON field are aggregation
        expressions (``$expr``) that test the value's BSON type first (docs: query language, "Parts of
        dates"; query language, "Keys of JSON documents").
        """
        if isinstance(item, RawFilter):
            values = list(item.values)
            return {item.key: values[0] if len(values) == 1 else {"$in": values}}
        name = item.operator.name
        part = item.part
        if item.path.key is None and (part is None or part.ranged):
            key = self.key(item.path, lookups)
            if part is not None:
                return _within(key, part.spans(name, item.value))
            compile_operator = dispatch(self, "op", name, key=item.key or item.path.name)
            return compile_operator(key, item.value)  # type: ignore[no-any-return]
        compare = dispatch(self, "expr", name, key=item.key or item.path.name)

        def test(value: Any) -> Any:
            if part is None:
                return compare(value, item.value)
            if part.ranged:  # the year of a JSON key's date text
                return _within_expression(value, part.spans(name, item.value))
            computed = PART_EXPRESSIONS[part.name](value)
            return {"$cond": [{"$eq": [{"$type": value}, "date"]}, compare(computed, item.value), False]}

        info = self.info_at(item.path.relations)
        value = field_value(info, item.path.field, "$")
        return {"$expr": test(value) if item.path.key is None else json_test(value, item.path.key, test)}

    def op_eq(self, key: str, value: object) -> Stage:
        """Equality; ``{key: value}`` never matches a missing or null value here (value is never None)."""
        encoded = encode(value)
        return _NOTHING if encoded is _UNREPRESENTABLE else {key: encoded}

    def op_in(self, key: str, values: Sequence[object]) -> Stage:
        """Membership (a repeated parameter; docs: query language, "Repeated parameters")."""
        encoded = [value for value in map(encode, values) if value is not _UNREPRESENTABLE]
        return {key: {"$in": encoded}}

    def expr_eq(self, value: Any, expected: object) -> Any:
        """Equality as an aggregation expression of ``value``; false for null, as ``expected`` is never None."""
        encoded = encode(expected)
        return False if encoded is _UNREPRESENTABLE else {"$eq": [value, {"$literal": encoded}]}

    def expr_in(self, value: Any, expected: Sequence[object]) -> Any:
        """Membership as an aggregation expression of ``value``."""
        encoded = [one for one in map(encode, expected) if one is not _UNREPRESENTABLE]
        return {"$in": [value, {"$literal": encoded}]}

    def search(self, search: Search, lookups: list[Sequence[str]]) -> Stage:
        """Case-insensitive substring search over the searchable keys, with OR (docs: query language, "Search").

        A key of a JSON field is searched where it holds text (or, for a list, in its text elements),
        through a link in any linked document.
        """
        pattern = caseless_regex(search.text)

        def found(text: Any) -> Any:
            return {"$regexMatch": {"input": text, "regex": pattern}}

        conditions: list[Stage] = []
        for path in search.paths:
            key = self.key(path, lookups)
            if path.key is None:
                conditions.append({key: {"$regex": pattern}})
                continue
            json_key = path.key
            if not path.relations:
                conditions.append({"$expr": json_test(f"${key}", json_key, found)})
                continue
            stored = self.info_at(path.relations).keys[path.field]
            each = json_test(f"$$linked.{stored}", json_key, found)
            linked = {"$filter": {"input": f"${lookup_alias(path.relations)}", "as": "linked", "cond": each}}
            conditions.append({"$expr": {"$gt": [{"$size": linked}, 0]}})
        return {"$or": conditions}

    # ------------------------------------------------------------------ order and projection
    def _order(
        self, order: Sequence[OrderTerm], done: list[Sequence[str]], policies: Mapping[str, Policy]
    ) -> list[Stage]:
        lookups: list[Sequence[str]] = []
        values: dict[str, Any] = {}
        flags: dict[str, Any] = {}
        sort: dict[str, int] = {}
        added = dict(self.computed)
        for position, term in enumerate(order):
            direction = -1 if term.descending else 1
            name = term.path.name
            if not term.path.relations and name in self.computed:
                key, nullable = name, True
            else:
                info = self.info_at(term.path.relations)
                key = self.key(term.path, lookups)
                json_key = term.path.key
                nullable = info.entity.fields[term.path.field].nullable or bool(term.path.relations or json_key)
                value: Any = None
                if term.path.relations:
                    # The first looked-up document's value (none: missing, sorted as null).
                    value = first_value(info, term.path.field, lookup_alias(term.path.relations))
                elif "." in key or "$" in key or json_key is not None:
                    value = field_value(info, term.path.field, "$")
                if value is not None:
                    key = f"{PREFIX}k{position}"
                    values[key] = value if json_key is None else json_value(value, json_key)
            if nullable:
                # NULLs last in both directions (docs: query language, "Ordering"); MongoDB puts them
                # first ascending.
                flag = f"{PREFIX}n{position}"
                flags[flag] = {"$cond": [{"$eq": [{"$ifNull": [f"${key}", None]}, None]}, 1, 0]}
                sort[flag] = 1
            sort[key] = direction
        stages = self.lookups(lookups, done, policies)
        added.update(values)
        if added:
            stages.append({"$addFields": added})
        if flags:
            stages.append({"$addFields": flags})
        stages.append({"$sort": sort})
        return stages

    def _projection(self, load: Sequence[str]) -> dict[str, int]:
        # The listed fields only: private ones (a password hash) never leave the store; a list of
        # links only when the page is loaded with it (a link's identifier is a listed field).
        fields = self.root.entity.fields
        projection = {key.split(".", 1)[0]: 1 for name, key in self.root.keys.items() if not fields[name].private}
        references = self.root.references
        projection.update(
            (references[name].key, 1) for name in load if name in references and references[name].kind == "links"
        )
        projection.update(dict.fromkeys(self.computed, 1))
        return projection


def field_value(info: DocumentInfo, field: str, prefix: str) -> Any:
    """``field`` of a document of ``info`` as an aggregation expression; ``prefix``: ``"$"`` or ``"$$<variable>."``.

    A link's identifier (``owner_id``, stored at ``owner.$id``) is read with ``link_id``.
    """
    key = info.keys[field]
    link = info.link_key(field)
    return prefix + key if link is None else link_id(prefix + link)


def first_value(info: DocumentInfo, field: str, alias: str) -> Any:
    """``field`` of the first document looked up into ``alias``, an array; missing when it is empty."""
    link = info.link_key(field)
    if link is None:
        return {"$arrayElemAt": [f"${alias}.{info.keys[field]}", 0]}
    return link_id({"$arrayElemAt": [f"${alias}.{link}", 0]})


def _linked_ids(key: str, parent: str | None, *, many: bool) -> Any:
    """The identifiers the links stored at ``key`` hold, as an aggregation expression.

    Args:
        key: Where the link (or, ``many``, the list of links) is stored.
        many: A list of links: an array of identifiers (a missing list: none).
        parent: The array of looked-up documents the links are read on, or None for the listed one.

    Returns:
        An identifier or an array of them; ``$lookup`` matches a foreign ``_id`` equal to any.
    """

    def held(stored: str) -> Any:
        if not many:
            return link_id(stored)
        return {"$map": {"input": {"$ifNull": [stored, []]}, "as": "link", "in": link_id("$$link")}}

    if parent is None:
        return held(f"${key}")
    if not many:
        return {"$map": {"input": f"${parent}", "as": "linking", "in": held(f"$$linking.{key}")}}
    # Each parent document's list, concatenated.
    each = {"$concatArrays": ["$$value", held(f"$$this.{key}")]}
    return {"$reduce": {"input": f"${parent}", "initialValue": [], "in": each}}


def _within(key: str, spans: Sequence[Span]) -> Stage:
    """The value stored at ``key`` inside one of ``spans`` (half-open), in query form: a date part as a range.

    Comparisons of the stored value itself, which an index on ``key`` serves (docs: query language,
    "Parts of dates"); a span open on both sides is any value but null, no span no document.
    """
    conditions: list[Stage] = []
    for low, high in spans:
        bounds: Stage = {} if low is None else {"$gte": encode(low)}
        bounds.update({} if high is None else {"$lt": encode(high)})
        conditions.append({key: bounds or {"$ne": None}})
    return _any_of(conditions) if conditions else _NOTHING


def _within_expression(value: Any, spans: Sequence[Span]) -> Any:
    """``value``, an expression that is null or of the spans' type, inside one of ``spans``, as an expression.

    Null is below every other value in MongoDB's order, so a span without a low end excludes it itself.
    """
    conditions: list[Any] = []
    for low, high in spans:
        ends: list[Any] = [{"$ne": [value, None]}] if low is None else [{"$gte": [value, {"$literal": encode(low)}]}]
        ends += [] if high is None else [{"$lt": [value, {"$literal": encode(high)}]}]
        conditions.append({"$and": ends})
    return {"$or": conditions} if conditions else False


def _json_found(document: Any, keys: Sequence[str]) -> Any:
    """What ``document`` (an expression) holds at ``keys``, as an expression; null where it holds nothing.

    Each step reads a field of an object only (``$getField``, MongoDB 5.0): a path through anything else
    (an array of objects, which a dotted field path would traverse) holds nothing, as ``JsonKey.values``
    defines.
    """
    found: Any = {"$ifNull": [document, None]}
    for key in keys:
        read = {"$getField": {"field": {"$literal": key}, "input": "$$document"}}
        is_object = {"$eq": [{"$type": "$$document"}, "object"]}
        found = {"$let": {"vars": {"document": found}, "in": {"$cond": [is_object, {"$ifNull": [read, None]}, None]}}}
    return found


def _has_type(value: Any, value_type: ValueType) -> Any:
    """Whether ``value`` (a variable) has the JSON key's type (``JSON_TYPES``), as an expression."""
    has_type: Any = {"$in": [{"$type": value}, list(JSON_TYPES[value_type])]}
    if value_type is ValueType.DATE:
        return {"$cond": [has_type, {"$regexMatch": {"input": value, "regex": _DATE_TEXT}}, False]}
    return has_type


def _typed(value: Any, value_type: ValueType, test: Test) -> Any:
    """``test(value)`` where ``value`` (a variable) has the JSON key's type, else false."""
    return {"$cond": [_has_type(value, value_type), test(value), False]}


def json_test(document: Any, key: JsonKey, test: Test) -> Any:
    """Whether the value at ``key`` in ``document`` meets ``test``, as an aggregation expression.

    Only a value of the key's declared type is tested (a missing key, null or a value of another type
    meets no test); for a list key, some element of that type must (docs: query language, "Keys of
    JSON documents").

    Args:
        document: The JSON field's value, an expression (``"$attributes"``).
        key: The declared key.
        test: The condition on one value, given the value's variable.
    """
    found = _json_found(document, key.keys)
    if not key.many:
        return {"$let": {"vars": {"value": found}, "in": _typed("$$value", key.type, test)}}
    matching = {"$filter": {"input": "$$value", "as": "element", "cond": _typed("$$element", key.type, test)}}
    some = {"$gt": [{"$size": matching}, 0]}
    return {"$let": {"vars": {"value": found}, "in": {"$cond": [{"$isArray": "$$value"}, some, False]}}}


def json_value(document: Any, key: JsonKey) -> Any:
    """The value at ``key`` (not a list) in ``document``, null where it is missing or not of the key's type."""
    typed = {"$cond": [_has_type("$$value", key.type), "$$value", None]}
    return {"$let": {"vars": {"value": _json_found(document, key.keys)}, "in": typed}}


def json_elements(document: Any, key: JsonKey) -> Any:
    """The elements of the declared type of the list at ``key`` (a list key) in ``document``, as an expression.

    An empty array where the key is missing or holds no list; elements of another type are left out, as
    ``JsonKey.values`` defines (docs: query language, "Keys of JSON documents").
    """
    typed = {"$filter": {"input": "$$value", "as": "element", "cond": _has_type("$$element", key.type)}}
    return {
        "$let": {
            "vars": {"value": _json_found(document, key.keys)},
            "in": {"$cond": [{"$isArray": "$$value"}, typed, []]},
        }
    }
