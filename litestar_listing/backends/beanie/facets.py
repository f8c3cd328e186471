"""``FacetQuery`` -> one MongoDB aggregation: the list's own stages, then ``$facet`` with one sub-pipeline per facet.

The stages every counted query shares (the resource's pipeline, the listed class's row policy, the forced
filters, the search and the client's filters that no facet leaves out) run once, before ``$facet``, where an
index may serve their ``$match``; each sub-pipeline adds only the filters its own query keeps and the others
leave out, then groups the documents by the facet's value (docs: facets; backends, "MongoDB versions and the
test store").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from litestar_listing.backends.beanie.compiler import (
    PART_EXPRESSIONS,
    PREFIX,
    PipelineCompiler,
    field_value,
    first_value,
    json_elements,
    json_value,
    link_id,
    lookup_alias,
)
from litestar_listing.backends.beanie.introspection import DocumentInfo
from litestar_listing.backends.beanie.loading import decode_value
from litestar_listing.core.facets import Facet, FacetCount, FacetCounts, FacetPage, FacetQuery
from litestar_listing.core.fields import FieldPath, ValueType
from litestar_listing.core.parts import PartOf
from litestar_listing.core.query import Combine, Filter, ListQuery, RawFilter
from litestar_listing.core.schema import FieldInfo

__all__ = ("CompiledFacets", "compile_facets")

Stage = dict[str, Any]
Read = Callable[[object], object]
"""A grouped value as the list's items hold it (``FacetCount.value``)."""

TOTAL = "total"
"""The ``$facet`` output of the list's total: ``[{"total": n}]``, or no document when nothing matches."""

_VALUE = PREFIX + "facet"
"""The key a facet of several values per document (``Facet.many``) holds them under, to ``$unwind``."""


@dataclass(frozen=True, slots=True)
class CompiledFacets:
    """The aggregation of one facet request, and how to read its one result document.

    Attributes:
        pipeline: The stages: the shared ones, then ``$facet``. Its output is one document holding
            ``total`` and, per facet ``i`` in the order asked, ``f<i>``: its values ranked and cut, each
            ``{"_id": value, "count": n, "distinct": d}``; with ``distinct_apart``, ``d<i>`` besides:
            ``[{"distinct": d}]``, or no document for no value.
        query: The facet request.
        reads: Per facet, its values as the list's items hold them.
        distinct_apart: The number of distinct values is counted by a sub-pipeline of its own.
    """

    pipeline: list[Stage]
    query: FacetQuery
    reads: tuple[Read, ...]
    distinct_apart: bool = False

    def answer(self, result: Mapping[str, Any] | None) -> FacetPage:
        """The ``FacetPage`` of the aggregation's result document (None: no document)."""
        found: Mapping[str, Any] = result or {}
        counted: list[FacetCounts] = []
        for position, (facet, read) in enumerate(zip(self.query.facets, self.reads, strict=True)):
            rows: Sequence[Mapping[str, Any]] = found.get(f"f{position}") or ()
            values = tuple(FacetCount(read(row["_id"]), int(row["count"])) for row in rows)
            distinct_rows: Sequence[Mapping[str, Any]] = (
                (found.get(f"d{position}") or ()) if self.distinct_apart else rows
            )
            distinct = int(distinct_rows[0]["distinct"]) if distinct_rows else 0
            counted.append(FacetCounts(facet, values, distinct))
        totals: Sequence[Mapping[str, Any]] = found.get(TOTAL) or ()
        return FacetPage(int(totals[0][TOTAL]) if totals else 0, tuple(counted))


def compile_facets(compiler: PipelineCompiler, query: FacetQuery, *, distinct_apart: bool = False) -> CompiledFacets:
    """The one aggregation of ``query`` (docs: facets).

    Each facet's counts obey ``query.counted(facet)``: the stages all of them share run before ``$facet``
    (``_shared_filters``), and each sub-pipeline ``$match``-es the rest of its own query's filters, then
    looks up the links its path crosses (under their classes' row policies, as a list looks them up to
    order or search) and counts the documents by value. The total's sub-pipeline matches the rest of the
    list's own filters and ``$count``-s.

    A facet's sub-pipeline groups by the value (``$group``), counts the groups over the whole partition
    (``$setWindowFields`` with ``$count``, MongoDB 5.0), ranks them (``ranked``'s rule: count descending,
    value ascending, null after the values of its count, by a flag sorted before the value, since MongoDB
    sorts null first) and keeps ``query.limit`` of them. MongoDB refuses ``$setWindowFields`` in a
    transaction and under snapshot reads (5.0.4 and later; mongomock has neither): with
    ``distinct_apart`` the groups are counted by a second sub-pipeline of the facet's instead.

    By MongoDB's documented rules, which mongomock does not enforce: ``$facet``'s sub-pipelines hold none
    of the stages it refuses (``$out``, ``$merge``, ``$facet``, ``$geoNear``...), and its result is one
    document of at most 16 MB: here at most ``Limits.max_facets`` (8) facets of at most
    ``Limits.max_facet_limit`` (100) values each, so values averaging some 20 KB are needed to exceed it.
    Each stage inside ``$facet`` holds at most 100 MB and cannot spill to disk whatever ``allowDiskUse``
    says: a facet's groups (one per distinct value) must fit, so a facet of millions of distinct values
    fails; declare facets of fields with few values.

    Args:
        compiler: The compiler of the list's query (its policies' ``Computed`` values).
        query: The facet request.
        distinct_apart: Count each facet's distinct values by a sub-pipeline of its own.
    """
    listed = query.query
    policies = {policy.entity: policy for policy in listed.policies}
    shared, rests = _shared_filters(query)
    done: list[Sequence[str]] = []
    stages = [*compiler.pipeline, *compiler.matching(replace(listed, filters=shared), done)]
    outputs: dict[str, list[Stage]] = {TOTAL: [*compiler.narrowing(rests[-1], list(done)), {"$count": TOTAL}]}
    reads: list[Read] = []
    for position, (facet, rest) in enumerate(zip(query.facets, rests[:-1], strict=True)):
        own_done = list(done)
        grouped = compiler.narrowing(rest, own_done)
        needed: list[Sequence[str]] = [
            facet.path.relations[:depth] for depth in range(1, len(facet.path.relations) + 1)
        ]
        grouped += compiler.lookups(needed, own_done, policies)
        grouped += _grouped(compiler, facet)
        ranked: list[Stage] = [
            {"$addFields": {"last": {"$cond": [{"$eq": ["$_id", None]}, 1, 0]}}},
            {"$sort": {"count": -1, "last": 1, "_id": 1}},
            {"$limit": query.limit},
        ]
        if distinct_apart:
            outputs[f"f{position}"] = [*grouped, *ranked]
            outputs[f"d{position}"] = [*grouped, {"$count": "distinct"}]
        else:
            outputs[f"f{position}"] = [
                *grouped,
                {"$setWindowFields": {"output": {"distinct": {"$count": {}}}}},
                *ranked,
            ]
        reads.append(_read(compiler, facet))
    stages.append({"$facet": outputs})
    return CompiledFacets(stages, query, tuple(reads), distinct_apart)


def _shared_filters(query: FacetQuery) -> tuple[tuple[Filter | RawFilter, ...], list[ListQuery]]:
    """The client filters every counted query keeps, and what each adds to them, the list's own last.

    With AND, a filter kept by every facet's query is matched once before ``$facet``; each query's
    others are ANDed in its sub-pipeline. With OR the filters cannot be split: they are shared when
    every facet keeps all of them (``FacetQuery.counted``), else each sub-pipeline matches its own.

    Returns:
        The shared filters, and per facet (then for the total) a query of the filters it adds, with
        the list's ``combine`` and policies.
    """
    listed = query.query
    kept = [query.counted(facet).filters for facet in query.facets]
    if listed.combine is Combine.AND:
        shared = tuple(item for item in listed.filters if all(_holds(filters, item) for filters in kept))
    else:
        shared = listed.filters if all(len(filters) == len(listed.filters) for filters in kept) else ()
    rests = [
        ListQuery(
            filters=tuple(item for item in filters if not _holds(shared, item)),
            combine=listed.combine,
            policies=listed.policies,
        )
        for filters in [*kept, listed.filters]
    ]
    return shared, rests


def _holds(filters: Sequence[Filter | RawFilter], item: Filter | RawFilter) -> bool:
    # By identity: FacetQuery.counted keeps the list's own filter objects, and two equal filters are two.
    return any(each is item for each in filters)


# ---------------------------------------------------------------- values


def _grouped(compiler: PipelineCompiler, facet: Facet) -> list[Stage]:
    """The stages that group the documents by ``facet``'s value: ``{"_id": value, "count": n}`` each.

    A value of one per document is grouped on directly; several (``Facet.many``) are gathered per
    document, distinct ones once (``$setUnion``), ``[null]`` for none, and unwound.
    """
    count = {"$sum": 1}
    if not facet.many:
        return [{"$group": {"_id": {"$ifNull": [_one_value(compiler, facet), None]}, "count": count}}]
    held = {"$setUnion": [_many_values(compiler, facet), []]}
    values = {"$let": {"vars": {"held": held}, "in": {"$cond": [{"$gt": [{"$size": "$$held"}, 0]}, "$$held", [None]]}}}
    return [
        {"$addFields": {_VALUE: values}},
        {"$unwind": f"${_VALUE}"},
        {"$group": {"_id": f"${_VALUE}", "count": count}},
    ]


def _one_value(compiler: PipelineCompiler, facet: Facet) -> Any:
    """The value of a document through to-one links: the first (only) linked document's, as ordering reads it."""
    path = facet.path
    info = compiler.info_at(path.relations)
    if path.relations:
        value = first_value(info, path.field, lookup_alias(path.relations))
    else:
        value = field_value(info, path.field, "$")
    if path.key is not None:
        value = json_value(value, path.key)
    return value if facet.part is None else _part(value, facet.part)


def _many_values(compiler: PipelineCompiler, facet: Facet) -> Any:
    """The values a document holds at ``facet``'s path, an array with repetitions: null where a branch holds none.

    As ``MemoryBackend`` reads a path: a missing (or hidden) document on a to-one step reads as one null,
    on a to-many step as none; a list key gives its elements of the declared type.
    """
    path = facet.path
    info = compiler.info_at(path.relations)
    key = path.key
    if path.relations:
        reached = _reached(compiler, path.relations)
        if key is not None and key.many:
            each = json_elements(field_value(info, path.field, "$$this."), key)
            values: Any = {
                "$reduce": {"input": reached, "initialValue": [], "in": {"$concatArrays": ["$$value", each]}}
            }
        else:
            value = field_value(info, path.field, "$$reached.")
            value = {"$ifNull": [value, None]} if key is None else json_value(value, key)
            values = {"$map": {"input": reached, "as": "reached", "in": value}}
    else:
        assert key is not None  # noqa: S101 - without relations, only a list key holds several values
        values = json_elements(field_value(info, path.field, "$"), key)
    if facet.part is not None:
        values = {"$map": {"input": values, "as": "held", "in": _part("$$held", facet.part)}}
    return values


def _reached(compiler: PipelineCompiler, relations: Sequence[str]) -> Any:
    """The documents ``relations`` reach from the listed document, one per branch, as an expression of an array.

    Each step reads the documents looked up into that step's key (``PipelineCompiler.lookups``, which
    kept only those inside their class's row policy): the first step's are exactly the documents
    reached; a later step picks, for each document reached so far, those its link (or list of links)
    names, or those whose link names it (a back link). A to-one step with no such document gives a
    null, as a missing one; a to-many step gives none, and a null reaches nothing through it.
    """
    info: DocumentInfo = compiler.root
    reached: Any = None
    for depth in range(1, len(relations) + 1):
        reference = info.references[relations[depth - 1]]
        looked_up = "$" + lookup_alias(relations[:depth])
        if reached is None:
            # The first step's documents are the listed document's own: a to-one link holds one at most.
            some = {"$gt": [{"$size": looked_up}, 0]}
            reached = looked_up if reference.to_many else {"$cond": [some, looked_up, [None]]}
        elif reference.kind == "link":
            reached = {
                "$map": {"input": reached, "as": "reached", "in": _linked(looked_up, f"$$reached.{reference.key}")}
            }
        else:
            present = {"$filter": {"input": reached, "as": "reached", "cond": {"$ne": ["$$reached", None]}}}
            if reference.kind == "links":
                held = {"$ifNull": [f"$$this.{reference.key}", []]}
                keys: Any = {"$map": {"input": held, "as": "link", "in": link_id("$$link")}}
                matched: Any = {"$in": ["$$linked._id", "$$keys"]}
            else:
                back = compiler.documents.info(reference.target).references[reference.back_field].key
                keys = "$$this._id"
                matched = {"$eq": [link_id(f"$$linked.{back}"), "$$keys"]}
            each = {"$filter": {"input": looked_up, "as": "linked", "cond": matched}}
            gathered = {"$concatArrays": ["$$value", {"$let": {"vars": {"keys": keys}, "in": each}}]}
            reached = {"$reduce": {"input": present, "initialValue": [], "in": gathered}}
        info = compiler.documents.info(reference.target)
    return reached


def _linked(looked_up: str, link: str) -> Any:
    """The document of ``looked_up`` (an array) that the link stored at ``link`` names, or null."""
    found = {"$filter": {"input": looked_up, "as": "linked", "cond": {"$eq": ["$$linked._id", link_id(link)]}}}
    first = {"$cond": [{"$gt": [{"$size": "$$found"}, 0]}, {"$arrayElemAt": ["$$found", 0]}, None]}
    return {"$let": {"vars": {"found": found}, "in": first}}


def _part(value: Any, part: PartOf) -> Any:
    """The part of ``value`` (a BSON date, or a JSON key's ``YYYY-MM-DD`` text), null where it is none.

    Computed as a list's filter computes the parts it compares per document (``PART_EXPRESSIONS``, after
    ``$type`` says the value is a date); ``year`` is ``$year`` and ``date`` the day's midnight
    (``$dateFromParts``), in UTC (docs: query language, "Parts of dates"). A text's year is its first four
    digits (``$split`` at ``-``, then ``$toInt``), as ``Part.extract`` reads it.
    """
    if part.text:
        number = {"$toInt": {"$arrayElemAt": [{"$split": ["$$text", "-"]}, 0]}}
        return {
            "$let": {
                "vars": {"text": {"$ifNull": [value, None]}},
                "in": {"$cond": [{"$eq": ["$$text", None]}, None, number]},
            }
        }
    day = "$$day"
    if part.name == "year":
        computed: Any = {"$year": day}
    elif part.name == "date":
        computed = {"$dateFromParts": {"year": {"$year": day}, "month": {"$month": day}, "day": {"$dayOfMonth": day}}}
    else:
        computed = PART_EXPRESSIONS[part.name](day)
    is_date = {"$eq": [{"$type": day}, "date"]}
    return {"$let": {"vars": {"day": {"$ifNull": [value, None]}}, "in": {"$cond": [is_date, computed, None]}}}


def _read(compiler: PipelineCompiler, facet: Facet) -> Read:
    """How a value of ``facet`` is read back: as the list's items hold it (``FacetCount.value``).

    A part's integer as an ``int`` (``$ceil`` gives a double), its date as a ``date``; a JSON key's value
    as ``JsonKey.values`` gives it (a ``float`` key's integers as floats); a field's as ``decode`` lists
    it, an enumeration by its stored value.
    """
    part = facet.part
    if part is not None:
        return _read_date if part.part.type is ValueType.DATE else _read_integer
    key = facet.path.key
    if key is not None:
        return _read_float if key.type is ValueType.FLOAT else _as_stored
    info = _field_info(compiler, facet.path)
    if info.type is ValueType.ENUM:
        return _as_stored
    return lambda value: decode_value(info, value)


def _field_info(compiler: PipelineCompiler, path: FieldPath) -> FieldInfo:
    return compiler.info_at(path.relations).entity.fields[path.field]


def _as_stored(value: object) -> object:
    return value


def _read_integer(value: object) -> object:
    return int(value) if isinstance(value, (int, float)) else value


def _read_float(value: object) -> object:
    return float(value) if isinstance(value, (int, float)) else value


def _read_date(value: object) -> object:
    return value.date() if isinstance(value, dt.datetime) else value
