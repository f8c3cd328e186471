"""OpenAPI for list endpoints: every reserved parameter and every exposed filter with its operators.

Parameters are read by the engine from the raw query string, so they are documented here rather
than declared on the handler's signature (which would make Litestar validate them a second time).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from litestar.enums import ParamType
from litestar.exceptions import ImproperlyConfiguredException
from litestar.openapi.spec import (
    Components,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    Schema,
)

from litestar_listing.core.coercion import CODECS, value_schema
from litestar_listing.core.cursor import CURSOR_PARAMETER
from litestar_listing.core.operators import Element, Operator
from litestar_listing.core.parsing import MAX_OFFSET
from litestar_listing.core.query import LOOKUP_SEP, FilterSyntax
from litestar_listing.core.schema import FieldInfo, ValueType

if TYPE_CHECKING:
    from litestar.openapi import OpenAPIConfig

    from litestar_listing.plugin.resource import Resource

__all__ = (
    "ListingComponents",
    "SharedSchemas",
    "error_schema",
    "list_operation_class",
    "list_parameters",
    "with_shared_schemas",
)


_LIKE_PATTERN = r"^([^\x00\\]|\\[^\x00])*$"
"""A LIKE pattern: no NUL, and a backslash always escapes a next character (none may end it)."""

_LIKE_DESCRIPTION = "a LIKE pattern: % any run of characters, _ one character, a backslash escapes the next one"

_JSON_KEYS = {"maxLength": "max_length", "minLength": "min_length", "maxItems": "max_items", "minItems": "min_items"}


def _inline(schema: dict[str, Any]) -> Schema:
    """Litestar's ``Schema`` of a plain JSON Schema dict of ``core.coercion`` (no nested schemas)."""
    values = {_JSON_KEYS.get(key, key): value for key, value in schema.items()}
    return Schema(**{**values, "type": OpenAPIType(values["type"])})


class SharedSchemas:
    """Schemas the list operations of one ``ListingPlugin`` share through ``components/schemas``.

    Litestar writes ``components/schemas`` from its own registry of Python types, so these join it
    through ``ListingComponents`` (see ``with_shared_schemas``).
    """

    __slots__ = ("schemas",)

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}
        """Each shared schema by component name, in JSON Schema key names."""

    def reference(self, name: str, schema: dict[str, Any]) -> Reference:
        """A ``$ref`` to ``schema`` shared as ``name``; another schema under that name gets ``name2``, ...

        Args:
            name: The component's name.
            schema: JSON Schema (OpenAPI 3.1) in JSON's key names.

        Returns:
            ``{"$ref": "#/components/schemas/<name>"}``.
        """
        key, suffix = name, 2
        while self.schemas.setdefault(key, schema) != schema:
            key, suffix = f"{name}{suffix}", suffix + 1
        return Reference(ref=f"#/components/schemas/{key}")

    def value(self, info: FieldInfo) -> Reference:
        """A ``$ref`` to the schema of ``info``'s values (``core.coercion.value_schema``)."""
        return self.reference(CODECS[info.type].name(info), value_schema(info))


@dataclass
class ListingComponents(Components):
    """``Components`` whose ``schemas`` also carry the listing's shared schemas.

    Litestar replaces ``components.schemas`` with the schemas of its own type registry when it builds
    the document; the listing's are merged in when the document is written.

    Raises:
        ImproperlyConfiguredException: When written, an application type has the name of a
            different listing schema (e.g. a model called ``DateTime``).
    """

    listing_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Shared schemas by component name (``SharedSchemas.schemas``)."""

    @property
    def _exclude_fields(self) -> set[str]:
        return {"listing_schemas"}

    def to_schema(self) -> dict[str, Any]:
        """The components object, the listing's schemas merged into ``schemas`` in name order."""
        result = super().to_schema()
        own = result.get("schemas", {})
        clashes = sorted(
            name for name in set(own) & set(self.listing_schemas) if own[name] != self.listing_schemas[name]
        )
        if clashes:
            msg = f"OpenAPI components/schemas {clashes} name both an application type and a listing value schema"
            raise ImproperlyConfiguredException(msg)
        merged = {**self.listing_schemas, **own}
        if merged:
            result["schemas"] = dict(sorted(merged.items()))
        return result


def with_shared_schemas(config: OpenAPIConfig, shared: SharedSchemas) -> OpenAPIConfig:
    """A copy of ``config`` whose components also write ``shared``'s schemas (``config`` is not changed).

    Args:
        config: The application's OpenAPI configuration; a list of ``Components`` is merged as
            Litestar merges it.
        shared: The schemas the list operations refer to.
    """
    parts = config.components if isinstance(config.components, list) else [config.components]
    values: dict[str, Any] = {}
    for part in parts:
        for item in fields(Components):
            value = getattr(part, item.name, None)
            if value:
                values[item.name] = {**(values.get(item.name) or {}), **value}
    # A shallow copy: ``dataclasses.replace`` would run the config's ``__post_init__`` (and its warnings) again.
    copied = copy.copy(config)
    copied.components = ListingComponents(**values, listing_schemas=shared.schemas)
    return copied


@dataclass
class _QueryParameter(Parameter):
    """A ``Parameter`` written without the fields that only repeat OpenAPI's defaults.

    ``required``, ``deprecated``, ``allowEmptyValue`` and ``allowReserved`` default to false; a list
    operation has hundreds of parameters, and writing four defaults on each was a quarter of the document.
    """

    def to_schema(self) -> dict[str, Any]:
        """The parameter object without its false defaults."""
        return {key: value for key, value in super().to_schema().items() if value is not False or key == "explode"}


def _operator_schema(
    info: FieldInfo, operator: Operator, resource: Resource, shared: SharedSchemas
) -> Schema | Reference:
    """The schema of ``info``'s values under ``operator``: its element's, in an array unless single."""
    element = _element_schema(info, operator, shared)
    arity = operator.kind.arity
    if arity.single:
        return element
    if not isinstance(element, Reference):  # pragma: no cover - every element but a flag is shared
        msg = f"{operator.kind} has no shared element schema"
        raise TypeError(msg)
    # Several elements: repeated parameters (``f__in=a&f__in=b``, what client generators write; an
    # empty list sends nothing; the engine also splits each at commas), or, with ``explode: false``,
    # comma-separated in one parameter (``f__between=low,high``).
    values: dict[str, Any] = {"type": "array", "items": {"$ref": element.ref}}
    if arity.count is None:
        values["maxItems"] = resource.limits.max_in_values
    else:
        values["minItems"] = values["maxItems"] = arity.count
    return shared.reference(element.ref.rsplit("/", 1)[1] + arity.suffix, values)


def _element_schema(info: FieldInfo, operator: Operator, shared: SharedSchemas) -> Schema | Reference:
    """The schema of one element of ``info``'s values under ``operator`` (``ValueKind.element``)."""
    element = operator.kind.element
    if element is Element.FLAG:
        # Inline: ``{"type": "boolean"}`` is shorter than a reference to it.
        return _inline(CODECS[ValueType.BOOLEAN].schema(info))
    if element is Element.PATTERN:
        pattern = {"type": "string", "pattern": _LIKE_PATTERN, "description": _LIKE_DESCRIPTION}
        return shared.reference("LikePattern", pattern)
    if element is Element.TEXT:
        return shared.value(FieldInfo(operator.name, ValueType.TEXT))
    return shared.value(info)


def _takes_empty(info: FieldInfo, operator: Operator) -> bool:
    """Whether ``name__op=`` (an empty value) is a valid value: text, or a LIKE pattern.

    Parameters of several elements keep the default (no empty value): an empty list is sent as no
    parameter at all, and for text fields an empty item is already valid by the item schema.
    """
    kind = operator.kind
    return kind.arity.single and (
        kind.element in {Element.TEXT, Element.PATTERN}
        or (info.type is ValueType.TEXT and kind.element is Element.FIELD)
    )


_FORCED_NOTE = " Ignored, its value unchecked, while a server-side scope sets this field."


def _forced_paths(resource: Resource) -> set[str]:
    """Fields that forced filters may set.

    The engine drops a client's equality on such a field unread while a scope applies (spec §4.4.10),
    so any text may be answered with a 200: the parameter's schema is plain text.
    """
    return {path for scope in resource.scopes for path in scope.fields}


def list_parameters(resource: Resource, shared: SharedSchemas) -> list[Parameter]:
    """The query parameters of ``resource``'s list endpoint (spec §4.1), filters last.

    Args:
        resource: The built resource.
        shared: Where the value schemas the parameters refer to are collected.

    Returns:
        ``page``, ``count``, ``search`` (when the resource has searchable fields), ``order_by``
        as an array of its allowed ``[-]field`` terms, and one parameter per exposed filter path
        and operator (``path`` for equality, ``path__op`` otherwise); for document-store resources
        one per field, reference alias and raw key instead (spec §4.4.9).
    """
    field_map, limits = resource.field_map, resource.limits
    parameters: list[Parameter] = [
        _QueryParameter(
            name="page",
            param_in=ParamType.QUERY,
            description="Page number, from 1 (spec §4.7); (page - 1) x count must stay within a 64-bit row offset.",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=MAX_OFFSET + 1, default=1),
        ),
        _QueryParameter(
            name="count",
            param_in=ParamType.QUERY,
            description="Page size.",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=limits.max_count, default=limits.default_count),
        ),
    ]
    if field_map.searchable:
        names = ", ".join(exposed.path.name for exposed in field_map.searchable)
        text = _inline(value_schema(FieldInfo("search", ValueType.TEXT)))
        parameters.append(
            _QueryParameter(
                name="search",
                param_in=ParamType.QUERY,
                description=f"Case-insensitive substring search over: {names}. Empty: no search.",
                schema=Schema(type=OpenAPIType.STRING, max_length=limits.max_search_length, pattern=text.pattern),
                allow_empty_value=True,
            )
        )
    orderable = sorted(field_map.orderable)
    default = ",".join(("-" if term.descending else "") + term.path.name for term in field_map.default_order)
    parameters.append(
        _QueryParameter(
            name="order_by",
            param_in=ParamType.QUERY,
            description=(
                "Ordering terms, comma-separated, '-' for descending, each field at most once; the primary key "
                f"breaks ties. Empty or absent: the default, {default}."
            ),
            schema=Schema(
                type=OpenAPIType.ARRAY,
                items=Schema(
                    type=OpenAPIType.STRING, enum=[f"{sign}{name}" for name in orderable for sign in ("", "-")]
                ),
                unique_items=True,
            ),
            explode=False,
            allow_empty_value=True,  # ``order_by=`` is the default order, as an absent parameter
        )
    )
    if resource.keyset:
        parameters.append(
            _QueryParameter(
                name=CURSOR_PARAMETER,
                param_in=ParamType.QUERY,
                description=(
                    "Keyset continuation (an extension of spec §4.7): the X-Next-Cursor header of the previous "
                    "response. Continues after that page's last item; not with 'page', and with the same filters, "
                    "search, order_by and count."
                ),
                schema=Schema(type=OpenAPIType.STRING, min_length=1, max_length=4096, pattern="^[A-Za-z0-9_-]+$"),
            )
        )
    if resource.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT:
        return parameters + _document_filters(resource, shared)
    forced = _forced_paths(resource)
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        for operator in resource.operators.values():
            if not operator.applies_to(info.type):
                continue
            key = name if operator.name == "eq" else f"{name}{LOOKUP_SEP}{operator.name}"
            schema = _operator_schema(info, operator, resource, shared)
            empty = _takes_empty(info, operator)
            description = operator.label[0].upper() + operator.label[1:] + "."
            if operator.name == "eq" and name in forced:
                schema, empty, description = Schema(type=OpenAPIType.STRING), True, description + _FORCED_NOTE
            parameters.append(
                _QueryParameter(
                    name=key,
                    param_in=ParamType.QUERY,
                    description=description,
                    schema=schema,
                    allow_empty_value=empty,
                    explode=operator.kind.arity.explode,
                )
            )
    return parameters


def _document_filters(resource: Resource, shared: SharedSchemas) -> list[Parameter]:
    field_map = resource.field_map
    parameters: list[Parameter] = []
    aliases = {
        relation.key_field: name
        for name, relation in field_map.graph.root_entity.relations.items()
        if relation.key_field is not None
    }
    forced = _forced_paths(resource)
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        reference = name in aliases
        names = [name, aliases[name]] if reference else [name]
        for key in names:
            meaning = f"the referenced record's identifier ({aliases[name]})" if reference else name
            schema: Schema | Reference = shared.value(info)
            description = f"{meaning} equal to; repeat it for any of several values."
            empty = info.type is ValueType.TEXT
            if name in forced:
                schema, empty, description = Schema(type=OpenAPIType.STRING), True, description + _FORCED_NOTE
            parameters.append(
                _QueryParameter(
                    name=key,
                    param_in=ParamType.QUERY,
                    description=description,
                    schema=schema,
                    allow_empty_value=empty,
                )
            )
    parameters.extend(
        _QueryParameter(
            name=key,
            param_in=ParamType.QUERY,
            description=f"Raw store filter: {key} equal to the text; repeat it for any of several values.",
            schema=shared.value(FieldInfo(key, ValueType.TEXT)),
            allow_empty_value=True,
        )
        for key in resource.raw_filters
    )
    return parameters


def error_schema(status: int = 400) -> dict[str, Any]:
    """Litestar's error body for ``status``: ``{status_code, detail, extra}``, as JSON Schema.

    For 400 (``InvalidQueryError``), ``extra`` lists every bad parameter as ``{key, message,
    source: "query"}``, ``key`` being the parameter's name as sent. Other statuses (401 from a forced
    filter, 503 from an unavailable store) have no ``extra``.
    """
    properties: dict[str, Any] = {
        "status_code": {"type": "integer", "const": status},
        "detail": {"type": "string", "minLength": 1},
    }
    if status != 400:
        return {"type": "object", "required": ["status_code", "detail"], "properties": properties}
    properties["extra"] = {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "required": ["key", "message", "source"],
            "properties": {
                "key": {"type": "string"},
                "message": {"type": "string", "minLength": 1},
                "source": {"type": "string", "const": "query"},
            },
        },
    }
    return {"type": "object", "required": ["status_code", "detail", "extra"], "properties": properties}


_ERROR_NAMES = {400: "InvalidQuery", 401: "AuthenticationRequired", 503: "StoreUnavailable"}
"""Component names of the error bodies (``components/schemas/ListingError<name>``)."""


def _error_response(
    description: str, status: int, shared: SharedSchemas, headers: dict[str, OpenAPIHeader | Reference] | None = None
) -> OpenAPIResponse:
    schema = shared.reference(f"Listing{_ERROR_NAMES[status]}", error_schema(status))
    return OpenAPIResponse(
        description=description, headers=headers, content={"application/json": OpenAPIMediaType(schema=schema)}
    )


def _extension_headers(resource: Resource) -> dict[str, OpenAPIHeader | Reference]:
    headers: dict[str, OpenAPIHeader | Reference] = {}
    if resource.keyset:
        headers["X-Next-Cursor"] = OpenAPIHeader(
            description="The 'cursor' of the next page; absent on the last page.",
            schema=Schema(type=OpenAPIType.STRING),
        )
        headers["Link"] = OpenAPIHeader(
            description='The next page\'s URL with rel="next"; absent on the last page.',
            schema=Schema(type=OpenAPIType.STRING),
        )
    if resource.total_mode == "estimated":
        headers["X-Total-Mode"] = OpenAPIHeader(
            description="'estimated' when pagination.total is the planner's estimate, else 'exact'.",
            schema=Schema(type=OpenAPIType.STRING, enum=["exact", "estimated"]),
        )
    return headers


def list_operation_class(resource: Resource, shared: SharedSchemas) -> type[Operation]:
    """An ``Operation`` subclass that adds ``resource``'s query parameters and its error responses.

    400 always; 401 when the resource has forced filters (they may refuse a request without a
    user); 503 always (the store may be unreachable, out of connections, or past the resource's
    ``timeout``), with its ``Retry-After`` header. Error bodies and value schemas are ``$ref``s to
    ``shared``, filled here, when the application is built. The description gains the bounds no
    parameter schema can state.
    """
    parameters = list_parameters(resource, shared)
    limits = resource.limits
    bounds = (
        "A filter repeated means any of its values (equality: 'in'; 'ne': 'nin'); the values of 'in' and 'nin' "
        "are repeated parameters, or separated by commas. "
        f"At most {limits.max_filters} filter parameters per request, repetitions included, and "
        f"{limits.max_in_values} values per 'in' or 'nin' filter."
    )
    errors: dict[str, OpenAPIResponse] = {
        "400": _error_response("A query parameter is invalid; every bad parameter is listed in 'extra'.", 400, shared)
    }
    if resource.scopes:
        errors["401"] = _error_response(
            "Authentication is required: a server-side scope of this resource found no user.", 401, shared
        )
    retry_after = OpenAPIHeader(
        description="Seconds to wait before retrying.", schema=Schema(type=OpenAPIType.INTEGER, minimum=0)
    )
    errors["503"] = _error_response(
        "The store did not answer in time, is unreachable or has no free connection; retry after "
        "the 'Retry-After' seconds.",
        503,
        shared,
        {"Retry-After": retry_after},
    )

    @dataclass
    class ListOperation(Operation):
        def __post_init__(self) -> None:
            self.parameters = [*(self.parameters or []), *parameters]
            self.description = f"{self.description}\n\n{bounds}" if self.description else bounds
            responses: dict[str, Any] = {**(self.responses or {}), **errors}
            success = responses.get("200")
            if isinstance(success, OpenAPIResponse):
                success.headers = {**(success.headers or {}), **_extension_headers(resource)}
            self.responses = responses

    ListOperation.__name__ = ListOperation.__qualname__ = f"{resource.name.title()}ListOperation"
    return ListOperation
