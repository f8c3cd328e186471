"""``ListQuery`` -> MongoDB aggregation pipelines: one for the page, one for the total.

Filters compare the document's own keys (a reference at ``<field>.$id``, spec §4.4.9); search and
order through links use ``$lookup`` stages into ``_listing_``-prefixed arrays, so no document is
repeated and totals stay exact. Nothing from the client reaches a pipeline as an operator: keys
come from the model or the resource's allowlist, search text becomes an escaped regex.
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

__all__ = ("PREFIX", "CompiledList", "PipelineCompiler", "encode")

PREFIX = "_listing_"
"""Prefix of every key the compiled pipelines add to documents; none reaches an item."""

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
        count: Yields ``{"total": n}``, or nothing when no document matches (spec §4.7.2).
        page: Yields the page's documents, ordered and cut (spec §4.7.1), lookups removed.
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
        pipeline: The resource's own stages (spec §4.4.8); the compiled stages are appended.
        computed: Computed alias -> aggregation expression, added with ``$addFields`` (spec §4.3.2).
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

    def compile(self, query: ListQuery) -> CompiledList:
        """Both pipelines of ``query``; the page pipeline is empty-safe past the last page.

        Row policies (``ListQuery.policies``): the listed class's is matched with the forced
        filters; every ``$lookup`` keeps only the linked documents inside their class's policy,
        so a linked document outside it reads as a missing one (DESIGN.md, "Row policies").
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
        page.append({"$project": self._projection()})
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
        stages: list[Stage] = []
        for relations in sorted(needed, key=len):
            if relations in done:
                continue
            done.append(relations)
            source = self._info_at(relations[:-1])
            reference = source.references[relations[-1]]
            target = self.documents.info(reference.target)
            parent = f"{_alias(relations[:-1])}." if len(relations) > 1 else ""
            if reference.kind == "back":
                local, foreign = f"{parent}_id", target.keys[f"{reference.back_field}_id"]
            else:
                local, foreign = f"{parent}{reference.key}.$id", "_id"
            lookup = {
                "from": reference.target.get_collection_name(),
                "localField": local,
                "foreignField": foreign,
                "as": _alias(relations),
            }
            stages.append({"$lookup": lookup})
            allowed = self.policy_expression(target, policies.get(target.entity.name))
            if allowed is not None:
                alias = _alias(relations)
                stages.append({"$addFields": {alias: {"$filter": {"input": f"${alias}", "cond": allowed}}}})
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
            value = f"$${variable}.{info.keys[item.path.field]}"
            present = {"$ifNull": [value, None]}
            if item.operator.name == "isnull":
                parts.append({"$eq" if item.value else "$ne": [present, None]})
            elif item.operator.name == "in":
                encoded = [one for one in map(encode, item.value) if one is not _UNREPRESENTABLE]  # type: ignore[call-overload]
                parts.append({"$in": [present, encoded]})
            else:
                encoded_value = encode(item.value)
                parts.append(False if encoded_value is _UNREPRESENTABLE else {"$eq": [present, encoded_value]})
        return {"$and": parts} if parts else None

    # ------------------------------------------------------------------ filters and search
    def _condition(self, query: ListQuery, lookups: list[Sequence[str]]) -> Stage | None:
        # The search is matched in a stage of its own, after the lookups it needs.
        return where(query, lambda item: self.filter(item, lookups), None, _all_of, _any_of)

    def filter(self, item: Filter | RawFilter, lookups: list[Sequence[str]]) -> Stage:
        """One filter as a match condition (spec §4.4.9)."""
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
        """Membership (a repeated parameter, spec §4.4.4)."""
        encoded = [value for value in map(encode, values) if value is not _UNREPRESENTABLE]
        return {key: {"$in": encoded}}

    def search(self, search: Search, lookups: list[Sequence[str]]) -> Stage:
        """Case-insensitive substring search over the searchable keys, with OR (spec §4.2)."""
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
                    values[f"{PREFIX}k{position}"] = {"$arrayElemAt": [f"${key}", 0]}
                    key = f"{PREFIX}k{position}"
                elif "." in key or "$" in key:
                    values[f"{PREFIX}k{position}"] = f"${key}"
                    key = f"{PREFIX}k{position}"
            if nullable:
                # NULLs last in both directions (DESIGN.md, "Order"); MongoDB puts them first ascending.
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

    def _projection(self) -> dict[str, int]:
        # The listed fields only: private ones (a password hash) never leave the store.
        fields = self.root.entity.fields
        projection = {key.split(".", 1)[0]: 1 for name, key in self.root.keys.items() if not fields[name].private}
        projection.update(dict.fromkeys(self.computed, 1))
        return projection
