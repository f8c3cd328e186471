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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bson import Binary, Decimal128

from litestar_listing.backends.base import dispatch, where
from litestar_listing.backends.beanie.introspection import DocumentInfo, Documents
from litestar_listing.core.query import FieldPath, Filter, ListQuery, OrderTerm, Policy, RawFilter, Search
from litestar_listing.core.text import caseless_regex

__all__ = ("MINIMUM_MONGODB", "PREFIX", "CompiledList", "PipelineCompiler", "encode", "link_id")

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


def _alias(relations: Sequence[str]) -> str:
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
        stages = list(self.pipeline)
        done: list[Sequence[str]] = []
        lookups: list[Sequence[str]] = []
        condition = self._condition(query, lookups)
        own = self.policy_match(self.root, policies.get(self.root.entity.name))
        if own is not None:
            condition = own if condition is None else _all_of([own, condition])
        if condition is not None:
            # Own keys only (always, for client filters): the match runs before any lookup.
            stages += self._lookups(lookups, done, policies)
            stages.append({"$match": condition})
        if query.search is not None:
            lookups = []
            search = self.search(query.search, lookups)
            stages += self._lookups(lookups, done, policies)
            stages.append({"$match": search})
        count = [*stages, {"$count": "total"}]
        page = stages + self._order(query.order, done, policies)
        window = query.window
        if window.offset:
            page.append({"$skip": window.offset})
        page.append({"$limit": window.count})
        page.append({"$project": self._projection(load)})
        return CompiledList(count=count, page=page)

    # ------------------------------------------------------------------ paths and lookups
    def _info_at(self, relations: Sequence[str]) -> DocumentInfo:
        info = self.root
        for step in relations:
            info = self.documents.info(info.references[step].target)
        return info

    def key(self, path: FieldPath, lookups: list[Sequence[str]]) -> str:
        """The key ``path`` is stored or looked up under; its lookups are added to ``lookups``."""
        info = self._info_at(path.relations)
        stored = info.keys[path.field]
        if not path.relations:
            return stored
        for depth in range(1, len(path.relations) + 1):
            prefix = path.relations[:depth]
            if prefix not in lookups:
                lookups.append(prefix)
        return f"{_alias(path.relations)}.{stored}"

    def _lookups(
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
            source = self._info_at(relations[:-1])
            reference = source.references[relations[-1]]
            target = self.documents.info(reference.target)
            parent = _alias(relations[:-1]) if len(relations) > 1 else None
            alias = _alias(relations)
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
            present = {"$ifNull": [_value(info, item.path.field, f"$${variable}."), None]}
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
        """One filter as a match condition (docs: query language, "Document-store resources")."""
        if isinstance(item, RawFilter):
            values = list(item.values)
            return {item.key: values[0] if len(values) == 1 else {"$in": values}}
        compile_operator = dispatch(self, "op", item.operator.name, key=item.key or item.path.name)
        return compile_operator(self.key(item.path, lookups), item.value)  # type: ignore[no-any-return]

    def op_eq(self, key: str, value: object) -> Stage:
        """Equality; ``{key: value}`` never matches a missing or null value here (value is never None)."""
        encoded = encode(value)
        return _NOTHING if encoded is _UNREPRESENTABLE else {key: encoded}

    def op_in(self, key: str, values: Sequence[object]) -> Stage:
        """Membership (a repeated parameter; docs: query language, "Repeated parameters")."""
        encoded = [value for value in map(encode, values) if value is not _UNREPRESENTABLE]
        return {key: {"$in": encoded}}

    def search(self, search: Search, lookups: list[Sequence[str]]) -> Stage:
        """Case-insensitive substring search over the searchable keys, with OR (docs: query language, "Search")."""
        pattern = caseless_regex(search.text)
        return {"$or": [{self.key(path, lookups): {"$regex": pattern}} for path in search.paths]}

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
                info = self._info_at(term.path.relations)
                key = self.key(term.path, lookups)
                nullable = info.entity.fields[term.path.field].nullable or bool(term.path.relations)
                if term.path.relations:
                    # The first looked-up document's value (none: missing, sorted as null).
                    values[f"{PREFIX}k{position}"] = _first_value(info, term.path.field, _alias(term.path.relations))
                    key = f"{PREFIX}k{position}"
                elif "." in key or "$" in key:
                    values[f"{PREFIX}k{position}"] = _value(info, term.path.field, "$")
                    key = f"{PREFIX}k{position}"
            if nullable:
                # NULLs last in both directions (docs: query language, "Ordering"); MongoDB puts them
                # first ascending.
                flag = f"{PREFIX}n{position}"
                flags[flag] = {"$cond": [{"$eq": [{"$ifNull": [f"${key}", None]}, None]}, 1, 0]}
                sort[flag] = 1
            sort[key] = direction
        stages = self._lookups(lookups, done, policies)
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


def _value(info: DocumentInfo, field: str, prefix: str) -> Any:
    """``field`` of a document of ``info`` as an aggregation expression; ``prefix``: ``"$"`` or ``"$$this."``.

    A link's identifier (``owner_id``, stored at ``owner.$id``) is read with ``link_id``.
    """
    key = info.keys[field]
    link = info.link_key(field)
    return prefix + key if link is None else link_id(prefix + link)


def _first_value(info: DocumentInfo, field: str, alias: str) -> Any:
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
