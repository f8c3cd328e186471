"""What a resource's declaration gives when the application starts: the checked exposure policy and its types.

``prepare`` runs every start-up check of a ``Resource`` (fail at configuration time, not per
request) and derives the field map, the query parser, the envelope type and the envelope's message,
once per resource; nothing here reads a request.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from litestar_listing.backends.base import TOTAL_MODES, FacetBackend, check_contract, offered_operators
from litestar_listing.core.cost import Cost, CostModel, cost_of, facet_cost
from litestar_listing.core.errors import ConfigurationError, InvalidQueryError, ParameterError
from litestar_listing.core.indexes import order_terms
from litestar_listing.core.parsing import QueryParser, QueryString, is_raw_key
from litestar_listing.core.query import LOOKUP_SEP, Combine, FieldPath, Filter, FilterSyntax, ListQuery, OrderTerm
from litestar_listing.core.schema import FieldMap, ModelGraph, closest
from litestar_listing.plugin.envelope import envelope_type, facets_envelope_type, item_type

if TYPE_CHECKING:
    from litestar_listing.core.facets import FacetQuery
    from litestar_listing.plugin.resource import Resource

__all__ = ("Prepared", "check_load_relations", "prepare")

ITEM_MODULE = "litestar_listing.plugin.resource"
"""The module item types are named in (``<ITEM_MODULE>.<resource name>``): it tells two resources of one model apart."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A resource's declaration resolved against its models (``prepare``).

    Attributes:
        field_map: The exposure policy: every filterable, orderable and searchable path.
        parser: The query parser of the resource's fields, limits, operators and options.
        envelope: The response type of the list action, named ``<Name>List`` (docs: query language,
            "The envelope and pagination").
        message: The envelope's ``message``: the declared one, or ``"Listed <name>."``.
        cost_model: The weights of its lists' cost (``Resource.cost``).
        max_cost: Its ceiling (``Resource.max_cost``), or None.
        indexed_orders: ``Resource.indexed_orders`` as ordering terms (docs: indexes).
        facets_envelope: The response type of the facet action, named ``<Name>Facets`` (docs:
            facets, "The answer"); None without ``facet_fields``.
    """

    field_map: FieldMap
    parser: QueryParser
    envelope: type[msgspec.Struct]
    message: str
    cost_model: CostModel = field(default_factory=CostModel)
    max_cost: float | None = None
    indexed_orders: tuple[tuple[OrderTerm, ...], ...] = ()
    facets_envelope: type[msgspec.Struct] | None = None

    def parse_priced(
        self, params: Iterable[tuple[str, str]] | QueryString, forced_filters: Sequence[Filter] = ()
    ) -> tuple[ListQuery, Cost]:
        """Parse ``params`` (``QueryParser.parse``) and price the list (``price``): a bad or too costly list is a 400.

        Raises:
            InvalidQueryError: Every bad parameter at once, or the parameters that put the list over
                ``max_cost``.
        """
        query = self.parser.parse(params, forced_filters)
        return query, self.price(query)

    def parse_facets_priced(
        self, params: Iterable[tuple[str, str]] | QueryString, forced_filters: Sequence[Filter] = ()
    ) -> tuple[FacetQuery, Cost]:
        """Parse a facet request (``QueryParser.parse_facets``) and price it (``core.cost.facet_cost``).

        Raises:
            InvalidQueryError: Every bad parameter at once, or the parameters that put the request
                over ``max_cost``.
        """
        query = self.parser.parse_facets(params, forced_filters)
        return query, self._within_ceiling(facet_cost(query, self.field_map, self.cost_model))

    def price(self, query: ListQuery) -> Cost:
        """The cost of ``query`` (``core.cost.cost_of``), checked against the resource's ceiling.

        Raises:
            InvalidQueryError: The cost is over ``max_cost``: one entry per parameter that made it so
                (``Cost.over``), each saying what it adds (docs: admission, "The ceiling").
        """
        return self._within_ceiling(cost_of(query, self.field_map, self.cost_model))

    def _within_ceiling(self, cost: Cost) -> Cost:
        """``cost``, or the 400 of a cost over ``max_cost`` (docs: admission, "The ceiling")."""
        ceiling = self.max_cost
        if ceiling is None or cost.total <= ceiling:
            return cost
        errors = [
            ParameterError(
                name,
                f"makes this list too expensive: it costs {cost.total:.1f} units, over the {ceiling:g} this "
                f"resource allows, and this parameter adds {units:.1f}; narrow or drop it",
            )
            for name, units in cost.over(ceiling)
        ]
        raise InvalidQueryError(errors)


_PREPARED: weakref.WeakKeyDictionary[Resource, Prepared] = weakref.WeakKeyDictionary()
"""Each resource's ``Prepared``, made once: derived from the declaration alone, the same in every application."""


def prepare(resource: Resource) -> Prepared:
    """Check ``resource`` against its backend and models, and derive what its list action needs; once per resource.

    The application's ``ListingPlugin`` prepares its resources when the application is built, so that
    a declaration that does not match its models stops the start, not a request. The result is kept
    with the resource (a copy made by ``dataclasses.replace`` is prepared anew).

    Returns:
        The resource's ``Prepared``: the same object on every call.

    Raises:
        ConfigurationError: Naming the resource: the backend breaks its contract
            (``backends.base.check_contract``), a path does not exist, is private or too deep, a
            forced filter names a missing field, a ``load`` name is no relation, ``combine`` is not
            ``and``/``or``, a document-store resource exposes a relation filter, a raw filter key is
            not allowed, ``keyset`` needs a capability the backend lacks, or ``total_mode`` is unknown.
    """
    prepared = _PREPARED.get(resource)
    if prepared is None:
        prepared = _PREPARED[resource] = _prepare(resource)
    return prepared


def _indexed_order(field_map: FieldMap, terms: Sequence[str]) -> tuple[OrderTerm, ...]:
    """One ordering of ``Resource.indexed_orders``, each term orderable (``core.indexes.order_terms``)."""
    if isinstance(terms, str):
        msg = f"indexed_orders takes orderings, each a sequence of terms: ({terms!r},), not {terms!r}"
        raise ConfigurationError(msg)
    return order_terms(field_map, terms, argument="indexed_orders")


def _prepare(resource: Resource) -> Prepared:
    backend = resource.backend
    try:
        check_contract(backend)
        try:
            combine = Combine(resource.combine)
        except ValueError:
            msg = f"combine must be 'and' or 'or', not {resource.combine!r}"
            raise ConfigurationError(msg) from None
        field_map = FieldMap.build(
            backend.model_graph(),
            filter_fields=resource.filter_fields,
            order_fields=resource.order_fields,
            search_fields=resource.search_fields,
            default_order=resource.default_order,
            computed=backend.computed_fields(),
            max_depth=resource.max_depth,
            parts=backend.capabilities.parts,
            json_keys=resource.json_keys,
            syntax=backend.capabilities.filter_syntax,
            facet_fields=resource.facet_fields,
        )
        if resource.facet_fields and not (backend.capabilities.facets and isinstance(backend, FacetBackend)):
            msg = f"facet_fields needs a backend that counts facets; {type(backend).__name__} does not"
            raise ConfigurationError(msg)
        if resource.json_keys and not backend.capabilities.json_keys:
            msg = f"json_keys needs a backend with Capabilities.json_keys; {type(backend).__name__} has none"
            raise ConfigurationError(msg)
        for forced in resource.scopes:
            for name in forced.fields:
                field_map.field_at(FieldPath.parse(name))
        check_load_relations(field_map.graph, resource.load)
        indexed_orders = tuple(_indexed_order(field_map, terms) for terms in resource.indexed_orders)
        syntax = backend.capabilities.filter_syntax
        _check_raw_keys(resource.raw_filters, allowed=backend.capabilities.raw_filters)
        if resource.keyset and not backend.capabilities.keyset:
            msg = f"keyset=True needs a backend with keyset continuation; {type(backend).__name__} has none"
            raise ConfigurationError(msg)
        if resource.total_mode not in TOTAL_MODES:
            msg = f"total_mode must be one of {', '.join(map(repr, TOTAL_MODES))}, not {resource.total_mode!r}"
            raise ConfigurationError(msg)
    except ConfigurationError as error:
        msg = f"resource {resource.name!r}: {error}"
        raise ConfigurationError(msg) from error
    ignore_unknown = resource.ignore_unknown_filters
    if ignore_unknown is None:
        ignore_unknown = syntax is FilterSyntax.DOCUMENT
    parser = QueryParser(
        field_map,
        combine,
        resource.limits,
        ignore_unknown,
        syntax=syntax,
        raw_keys=frozenset(resource.raw_filters),
        keyset=resource.keyset,
        operators=offered_operators(backend),
    )
    # The item type is named after the listed model, singular (``Flight``).
    item = resource.item or item_type(
        field_map.graph.root,
        field_map.graph,
        computed=field_map.computed,
        load=tuple(resource.load),
        extra=resource.enrich_fields,
        module=f"{ITEM_MODULE}.{resource.name.replace('-', '_')}",
    )
    envelope = envelope_type(f"{_type_name(resource.name)}List", item)
    message = resource.message or f"Listed {resource.name}."
    facets = tuple(field_map.facetable)
    facets_envelope = facets_envelope_type(f"{_type_name(resource.name)}Facets", facets) if facets else None
    prepared = Prepared(
        field_map, parser, envelope, message, resource.cost, resource.max_cost, indexed_orders, facets_envelope
    )
    own = cost_of(parser.parse(()), field_map, resource.cost).total
    if resource.max_cost is not None and own > resource.max_cost:
        msg = (
            f"resource {resource.name!r}: max_cost={resource.max_cost:g} is below the cost of its own list "
            f"without parameters ({own:.1f} units): every list would be refused"
        )
        raise ConfigurationError(msg)
    return prepared


def check_load_relations(graph: ModelGraph, load: Sequence[str]) -> None:
    """Check that each ``load`` name is a relation path of ``graph``'s listed model (docs: eager loading).

    Raises:
        ConfigurationError: A step is no relation; the message names it and the closest relations.
    """
    for path in load:
        entity = graph.root_entity
        for step in path.split(LOOKUP_SEP):
            relation = entity.relations.get(step)
            if relation is None:
                hint = closest(step, entity.relations)
                known = (
                    f"did you mean {' or '.join(map(repr, hint))}?" if hint else f"it has {sorted(entity.relations)}"
                )
                msg = f"load {path!r}: {entity.name} has no relation {step!r}; {known}"
                raise ConfigurationError(msg)
            entity = graph.entities[relation.target]


_DBREF_KEYS = frozenset({"$id", "$ref", "$db"})


def _check_raw_keys(keys: Sequence[str], *, allowed: bool) -> None:
    """Raw keys are dotted field paths; ``$`` only as a link's ``$id``/``$ref``/``$db``.

    (docs: query language, "Document-store resources"; security, "No store operators from the query string")
    """
    if keys and not allowed:
        msg = "raw_filters are for document-store backends only"
        raise ConfigurationError(msg)
    for key in keys:
        segments = key.split(".")
        if not is_raw_key(key) or not all(segments):
            msg = f"raw filter {key!r} must be a dotted field path containing '.' or '$', like 'meta.color'"
            raise ConfigurationError(msg)
        if segments[0].startswith("$") or any(s.startswith("$") and s not in _DBREF_KEYS for s in segments):
            msg = (
                f"raw filter {key!r} names a store operator; a query string must never reach operators such as "
                "$where, $expr or $function. Only $id, $ref and $db of a reference "
                "may follow a field name."
            )
            raise ConfigurationError(msg)


def _type_name(name: str) -> str:
    return "".join(part.title() for part in name.replace("-", "_").split("_"))
