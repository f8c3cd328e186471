"""A list's answer: the envelope as msgspec structs, item types for OpenAPI, and ``ListResult``.

(docs: query language, "The envelope and pagination")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from litestar import Response

from litestar_listing.core.coercion import CODECS
from litestar_listing.core.query import load_tree
from litestar_listing.core.schema import FieldInfo, ModelGraph

__all__ = (
    "FacetValue",
    "ListResult",
    "Pagination",
    "envelope_type",
    "facets_envelope_type",
    "item_type",
    "pagination",
    "python_type",
)


class Pagination(msgspec.Struct, kw_only=True):
    """Paging metadata of a list response (docs: query language, "The envelope and pagination")."""

    page: int
    """The requested page number, from 1."""
    count: int
    """The requested page size."""
    total: int
    """Items matching the filters and the search, across all pages."""
    total_pages: int
    """``ceil(total / count)``; 0 when ``total`` is 0."""


def pagination(page: int, count: int, total: int) -> Pagination:
    """Build the paging metadata; ``total_pages`` is ``total / count`` rounded up, 0 when ``total`` is 0.

    Integer arithmetic, exact for any total (a float division is off past 2**53).
    """
    return Pagination(page=page, count=count, total=total, total_pages=-(-total // count))


def python_type(info: FieldInfo) -> Any:
    """The Python type of ``info``'s values (``T | None`` when nullable), for OpenAPI schemas."""
    base: Any = CODECS[info.type].python_type(info)
    return base | None if info.nullable else base


def item_type(
    name: str,
    graph: ModelGraph,
    *,
    computed: Mapping[str, FieldInfo] | None = None,
    load: tuple[str, ...] = (),
    extra: Mapping[str, Any] | None = None,
    module: str | None = None,
) -> type[msgspec.Struct]:
    """A struct describing the default item dict: non-private columns, computed values, loaded relations.

    Args:
        name: The struct's name in OpenAPI (e.g. ``Flight``).
        graph: The models.
        computed: Computed aliases (docs: computed), listed after the columns.
        load: Eager-loaded relation paths (docs: eager loading), nested as objects or arrays of objects.
        extra: Fields that enrichment adds (docs: enrichment), by name and type.
        module: The structs' ``__module__``: Litestar names a component by its bare name unless two
            types share it, then by the parts of ``module`` that tell them apart.

    Returns:
        A ``msgspec.Struct`` subclass used for documentation only.
    """
    tree = load_tree(load)

    def build(struct_name: str, entity_name: str, subtree: Mapping[str, Any], more: Mapping[str, Any]) -> Any:
        entity = graph.entities[entity_name]
        fields: list[tuple[str, Any]] = [
            (field.name, python_type(field)) for field in entity.fields.values() if not field.private
        ]
        fields.extend(more.items())
        for relation_name, child in subtree.items():
            relation = entity.relations[relation_name]
            nested = build(f"{struct_name}{relation_name.title().replace('_', '')}", relation.target, child, {})
            fields.append((relation_name, list[nested] if relation.to_many else nested | None))  # type: ignore[valid-type]
        return msgspec.defstruct(struct_name, fields, kw_only=True, module=module)

    more: dict[str, Any] = {key: python_type(info) for key, info in (computed or {}).items()}
    more.update(extra or {})
    return build(name, graph.root, tree, more)  # type: ignore[no-any-return]


def envelope_type(name: str, item: Any) -> type[msgspec.Struct]:
    """The list envelope named ``name`` of ``item`` items: ``data``, ``pagination``, ``message``, ``status``."""
    return msgspec.defstruct(
        name,
        [("data", list[item]), ("pagination", Pagination), ("message", str), ("status", Literal["success"])],
        kw_only=True,
    )


class FacetValue(msgspec.Struct, kw_only=True):
    """One value of a facet and the listed rows holding it (docs: facets, "The answer")."""

    value: Any
    """The value as the list's items hold it; null for the rows that hold none."""
    count: int
    """The rows holding it."""


def facets_envelope_type(name: str, facets: tuple[str, ...]) -> type[msgspec.Struct]:
    """The facet envelope named ``name`` of a resource whose facetable paths are ``facets``.

    ``data`` (one entry per facet asked: ``facet``, its ``values`` and ``distinct``), ``total``,
    ``message``, ``status`` (docs: facets, "The answer").
    """
    entry = msgspec.defstruct(
        f"{name}Entry",
        [("facet", Literal[facets]), ("values", list[FacetValue]), ("distinct", int)],
        kw_only=True,
    )
    return msgspec.defstruct(
        name,
        [("data", list[entry]), ("total", int), ("message", str), ("status", Literal["success"])],  # type: ignore[valid-type]
        kw_only=True,
    )


@dataclass(frozen=True, slots=True)
class ListResult:
    """One answered list action: what ``list_resource`` returns and ``provide_page`` gives a handler.

    Attributes:
        envelope: The envelope, an instance of the resource's envelope type (``data``,
            ``pagination``, ``message``, ``status``; docs: query language, "The envelope and
            pagination"): the body the mounted route answers.
        items: The page's items, as the resource lists them (``envelope.data``): dicts of the
            exposed fields, computed values, loaded relations and enriched fields.
        pagination: ``page``, ``count``, ``total``, ``total_pages`` (``envelope.pagination``).
        headers: The response headers of the extensions the resource opts into (``X-Next-Cursor``
            and ``Link`` with ``keyset``, when a next page exists; ``X-Total-Mode`` with
            ``total_mode="estimated"``; docs: extensions), the ``RateLimit-*`` headers of the plugin's
            ``budget`` and the ``X-Listing-*`` headers of ``cost_headers`` (docs: admission); empty otherwise.
    """

    envelope: msgspec.Struct
    items: list[dict[str, Any]]
    pagination: Pagination
    headers: Mapping[str, str]

    def response(self) -> Response[Any]:
        """The envelope with its extension headers, as the mounted route answers it."""
        return Response(self.envelope, headers=dict(self.headers))
