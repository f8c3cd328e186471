"""OpenAPI for list endpoints: every reserved parameter and every exposed filter with its operators.

Parameters are read by the engine from the raw query string, so they are documented here rather
than declared on the handler's signature (which would make Litestar validate them a second time).
The filters are the properties of one form-exploded object per relation (``filter_group``): a
handful of parameters that client generators and Swagger UI take as they are (docs: explorer,
"Generated clients").
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

from litestar_listing.backends.base import offered_operators
from litestar_listing.core.coercion import CODECS, describe_type, text_pattern, value_schema
from litestar_listing.core.cursor import CURSOR_PARAMETER
from litestar_listing.core.facets import FacetMode
from litestar_listing.core.fields import FILTERS, filter_group
from litestar_listing.core.operators import Element, Operator
from litestar_listing.core.parsing import MAX_OFFSET
from litestar_listing.core.query import LOOKUP_SEP, FieldPath, FilterSyntax
from litestar_listing.core.schema import FieldInfo, ValueType
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.problems import ErrorFormat, ErrorShapes

if TYPE_CHECKING:
    from litestar.openapi import OpenAPIConfig

    from litestar_listing.plugin.policies import RowPolicies
    from litestar_listing.plugin.resource import Resource

__all__ = (
    "FILTERS",
    "ListingComponents",
    "SharedSchemas",
    "error_schema",
    "facet_operation_class",
    "facet_parameters",
    "filter_parameters",
    "list_operation_class",
    "list_parameters",
    "problem_schema",
    "refusals",
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
    """Schemas the list operations of one application share through ``components/schemas`` (``ListingState``).

    Litestar writes ``components/schemas`` from its own registry of Python types, so these join it
    through ``ListingComponents`` (see ``with_shared_schemas``).
    """

    __slots__ = ("schemas",)

    def __init__(self, schemas: dict[str, dict[str, Any]] | None = None) -> None:
        self.schemas: dict[str, dict[str, Any]] = {} if schemas is None else schemas
        """Each shared schema by component name, in JSON Schema key names (``schemas`` itself when given)."""

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
        """A ``$ref`` to the schema of ``info``'s values (``core.coercion.value_schema``), with an example."""
        schema = value_schema(info)
        example = value_example(info)
        if "pattern" in schema and example is not None:
            schema["examples"] = [example]
        return self.reference(CODECS[info.type].name(info), schema)


_EXAMPLES: dict[ValueType, str] = {
    ValueType.TEXT: "text",
    ValueType.INTEGER: "1",
    ValueType.FLOAT: "1.5",
    ValueType.DECIMAL: "12.50",
    ValueType.BOOLEAN: "true",
    ValueType.DATE: "2013-01-01",
    ValueType.DATETIME: "2013-01-01T05:00:00Z",
    ValueType.UUID: "00000000-0000-0000-0000-000000000000",
}
"""A valid value of each type, as a client writes it, for the schemas that have a ``pattern``.

Swagger UI renders a parameter's sample again on each change of the page; without an example it
makes one from the pattern (for a datetime's, milliseconds), for each of hundreds of properties.
"""


def value_example(info: FieldInfo) -> str | None:
    """A valid value of ``info``'s type as a client writes it (an enumeration's first value); None: none known."""
    if info.type is ValueType.ENUM:
        return next((str(member.value) for member in info.enum or ()), None)
    return _EXAMPLES.get(info.type)


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

    Raises:
        ImproperlyConfiguredException: ``config`` already holds an earlier plugin's schemas and one
            of its names holds a different schema in ``shared`` (plugins that do not share the
            application's ``ListingState.shared_schemas``).
    """
    parts = config.components if isinstance(config.components, list) else [config.components]
    values: dict[str, Any] = {}
    # An earlier plugin's schemas stay (the application's ``ListingState`` usually shares their dict).
    listing = {
        name: schema
        for part in parts
        if isinstance(part, ListingComponents)
        for name, schema in part.listing_schemas.items()
    }
    for part in parts:
        for item in fields(Components):
            value = getattr(part, item.name, None)
            if value:
                values[item.name] = {**(values.get(item.name) or {}), **value}
    # A shallow copy: ``dataclasses.replace`` would run the config's ``__post_init__`` (and its warnings) again.
    copied = copy.copy(config)
    clashes = sorted(name for name, schema in shared.schemas.items() if listing.get(name, schema) != schema)
    if clashes:
        msg = f"OpenAPI components/schemas {clashes} name different schemas of two listing plugins"
        raise ImproperlyConfiguredException(msg)
    # The same dict when it holds them all: schemas named after this call are written too.
    listing = shared.schemas if listing.keys() <= shared.schemas.keys() else {**listing, **shared.schemas}
    copied.components = ListingComponents(**values, listing_schemas=listing)
    return copied


@dataclass
class _QueryParameter(Parameter):
    """A ``Parameter`` written without the fields that only repeat OpenAPI's defaults.

    ``required``, ``deprecated``, ``allowEmptyValue`` and ``allowReserved`` default to false; a list
    operation has several parameters, and writing four defaults on each only makes it longer.
    """

    def to_schema(self) -> dict[str, Any]:
        """The parameter object without its false defaults."""
        return {key: value for key, value in super().to_schema().items() if value is not False or key == "explode"}


@dataclass
class _NamedEnumSchema(Schema):
    """A ``Schema`` whose enum values carry member names for client generators (``x-enum-varnames``)."""

    enum_varnames: list[str] | None = field(default=None, metadata={"alias": "x-enum-varnames"})


def _order_varname(term: str) -> str:
    """The member name of an ``order_by`` term in a generated enum, e.g. ``DEP_DELAY_DESC``.

    A relation path names its field first, then each relation outwards (``NAME_OF_ORIGIN_AIRPORT``
    for ``origin_airport__name``): generators merge runs of ``_``, so ``FLIGHT_ID`` could not tell
    ``flight_id`` from ``flight__id`` (``ID_OF_FLIGHT``).
    """
    path = FieldPath.parse(term.removeprefix("-"))
    name = "_OF_".join(reversed(path.segments)).upper()
    return name + "_DESC" if term.startswith("-") else name


def _order_parameter(resource: Resource) -> Parameter:
    field_map = prepare(resource).field_map
    terms = [f"{sign}{name}" for name in sorted(field_map.orderable) for sign in ("", "-")]
    names: list[str] = []
    for term in terms:
        name = base = _order_varname(term)
        number = 2
        while name in names:  # an own field named like ``id_of_flight``: numbered, never merged
            name, number = f"{base}_{number}", number + 1
        names.append(name)
    default = ",".join(("-" if term.descending else "") + term.path.name for term in field_map.default_order)
    return _QueryParameter(
        name="order_by",
        param_in=ParamType.QUERY,
        description=(
            "Ordering terms, '-' for descending, each field at most once; the primary key breaks ties. Repeat the "
            f"parameter for each term, or separate them with commas. Empty or absent: the default, {default}."
        ),
        schema=Schema(
            type=OpenAPIType.ARRAY,
            items=_NamedEnumSchema(type=OpenAPIType.STRING, enum=terms, enum_varnames=names),
            unique_items=True,
            max_items=resource.limits.max_order_terms,
        ),
        allow_empty_value=True,  # ``order_by=`` is the default order, as an absent parameter
    )


def _operator_schema(
    info: FieldInfo, operator: Operator, resource: Resource, shared: SharedSchemas
) -> Schema | Reference:
    """The schema of ``info``'s values under ``operator``: its element's, or its elements' text, comma-separated.

    Several elements travel in one parameter, separated by commas (``f__in=a,b``, ``f__between=low,high``):
    what a filter object's property holds, as one string (client generators and Swagger UI send a
    property's array as JSON, or not at all).
    """
    element = _element_schema(info, operator, shared)
    arity = operator.kind.arity
    if arity.single:
        return element
    one = text_pattern(info)
    described = describe_type(info)
    if arity.count is None:
        schema: dict[str, Any] = {
            "type": "string",
            "pattern": f"^{one}(,{one})*$",
            "description": f"comma-separated, at most {resource.limits.max_in_values}: {described}",
        }
    else:
        schema = {
            "type": "string",
            "pattern": f"^{one}{f',{one}' * (arity.count - 1)}$",
            "description": f"{arity.written}, {' <= '.join(arity.written.split(','))}: {described}",
        }
    example = value_example(info)
    if example is not None and "," not in example:
        schema["examples"] = [",".join([example] * (arity.count or 2))]  # equal bounds are a valid range
    return shared.reference(CODECS[info.type].name(info) + arity.suffix, schema)


def _element_schema(info: FieldInfo, operator: Operator, shared: SharedSchemas) -> Schema | Reference:
    """The schema of one element of ``info``'s values under ``operator`` (``ValueKind.element``)."""
    element = operator.kind.element
    if element is Element.FLAG:
        # Inline: ``{"type": "boolean"}`` is shorter than a reference to it.
        return _inline(CODECS[ValueType.BOOLEAN].schema(info))
    if element is Element.PATTERN:
        pattern = {"type": "string", "pattern": _LIKE_PATTERN, "description": _LIKE_DESCRIPTION, "examples": ["%text%"]}
        return shared.reference("LikePattern", pattern)
    if element is Element.TEXT:
        return shared.value(FieldInfo(operator.name, ValueType.TEXT))
    return shared.value(info)


_FORCED_NOTE = "Ignored, its value unchecked, while a server-side scope sets this field."


def _forced_paths(resource: Resource) -> set[str]:
    """Fields that forced filters may set.

    The engine drops a client's equality on such a field unread while a scope applies (docs: query
    language, "Forced filters"), so any text may be answered with a 200: the parameter's schema is
    plain text.
    """
    return {path for scope in resource.scopes for path in scope.fields}


def _filter_object(
    name: str, description: str, properties: dict[str, Schema | Reference], *, closed: bool
) -> Parameter:
    """A query parameter whose object's properties are parameters of their own (``style: form, explode: true``).

    OpenAPI writes such an object as one ``name=value`` per property, the parameter's own name
    unused: exactly the filter parameters of the query language. A client that writes every object
    as ``deepObject`` (``filters[name]=value``) is read the same (docs: query language, "Filter
    objects"). ``example`` is an empty object, no
    filter, so that Swagger UI does not fill the form with a sample of every property.
    """
    return _QueryParameter(
        name=name,
        param_in=ParamType.QUERY,
        description=description,
        style="form",
        explode=True,
        # The schema's example too: Swagger UI then samples the object without walking its properties.
        schema=Schema(type=OpenAPIType.OBJECT, properties=properties, additional_properties=not closed, examples=[{}]),
        example={},
    )


def list_parameters(resource: Resource, shared: SharedSchemas) -> list[Parameter]:
    """The query parameters of ``resource``'s list endpoint (docs: query language), filters last.

    Args:
        resource: The built resource.
        shared: Where the value schemas the parameters refer to are collected.

    Returns:
        ``page``, ``count``, ``search`` (when the resource has searchable fields), ``order_by``
        as an array of its allowed ``[-]field`` terms, ``cursor`` (keyset resources), then the filter
        objects (``filter_parameters``).
    """
    limits = resource.limits
    parameters: list[Parameter] = [
        _QueryParameter(
            name="page",
            param_in=ParamType.QUERY,
            description="Page number, from 1; (page - 1) x count must stay within a 64-bit row offset.",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=MAX_OFFSET, default=1),
        ),
        _QueryParameter(
            name="count",
            param_in=ParamType.QUERY,
            description="Page size.",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=limits.max_count, default=limits.default_count),
        ),
    ]
    parameters.extend(_search_parameter(resource))
    parameters.append(_order_parameter(resource))
    if resource.keyset:
        parameters.append(
            _QueryParameter(
                name=CURSOR_PARAMETER,
                param_in=ParamType.QUERY,
                description=(
                    "Keyset continuation: the X-Next-Cursor header of the previous response. Continues after "
                    "that page's last item; not with 'page', and with the same filters, search, order_by and count."
                ),
                schema=Schema(type=OpenAPIType.STRING, min_length=1, max_length=4096, pattern="^[A-Za-z0-9_-]+$"),
            )
        )
    return [*parameters, *filter_parameters(resource, shared)]


def _search_parameter(resource: Resource) -> list[Parameter]:
    """``search``, when the resource has searchable fields."""
    searchable, limits = prepare(resource).field_map.searchable, resource.limits
    if not searchable:
        return []
    names = ", ".join(exposed.path.name for exposed in searchable)
    text = _inline(value_schema(FieldInfo("search", ValueType.TEXT)))
    return [
        _QueryParameter(
            name="search",
            param_in=ParamType.QUERY,
            description=f"Case-insensitive substring search over: {names}. Empty: no search.",
            schema=Schema(type=OpenAPIType.STRING, max_length=limits.max_search_length, pattern=text.pattern),
            allow_empty_value=True,
        )
    ]


def filter_parameters(resource: Resource, shared: SharedSchemas) -> list[Parameter]:
    """The filter objects of ``resource`` (``filter_group``), as its list and facet endpoints document them.

    ``filters`` and one ``<relation>_filters`` per relation, each property a filter parameter
    (``path`` for equality, ``path__op`` otherwise) typed by its field and operator; for
    document-store resources, ``filters`` with one property per field, reference alias and raw
    key instead (docs: query language, "Document-store resources").
    """
    field_map = prepare(resource).field_map
    parameters: list[Parameter] = []
    closed = not prepare(resource).parser.ignore_unknown
    if resource.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT:
        properties = _document_filters(resource, shared)
        description = (
            "Filters, each property a parameter of its own: a field, a reference's name or <field>_id, a declared "
            "key of a JSON field, a part of a date, or a raw key, equal to the value; repeat a parameter for any of "
            "several values."
        )
        if properties:
            parameters.append(_filter_object(FILTERS, description, properties, closed=closed))
        return parameters
    forced = _forced_paths(resource)
    groups: dict[str, dict[str, Schema | Reference]] = {}
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        properties = groups.setdefault(filter_group(exposed.path), {})
        for operator in offered_operators(resource.backend).values():
            if not operator.applies_to(info.type, many=info.many):
                continue
            key = name if operator.name == "eq" else f"{name}{LOOKUP_SEP}{operator.name}"
            schema = _operator_schema(info, operator, resource, shared)
            if operator.name == "eq" and name in forced:
                schema = Schema(type=OpenAPIType.STRING, description=_FORCED_NOTE)
            properties[key] = schema
    for group, properties in groups.items():
        whose = "own fields" if group == FILTERS else f"the relation {group.removesuffix('_' + FILTERS)!r}"
        description = (
            f"Filters on {whose}, each property a parameter of its own: <path> for equality, "
            "<path>__<operator> for the operators in the operation's description."
        )
        parameters.append(_filter_object(group, description, properties, closed=closed))
    return parameters


def _document_filters(resource: Resource, shared: SharedSchemas) -> dict[str, Schema | Reference]:
    field_map = prepare(resource).field_map
    properties: dict[str, Schema | Reference] = {}
    aliases = {
        relation.key_field: name
        for name, relation in field_map.graph.root_entity.relations.items()
        if relation.key_field is not None
    }
    forced = _forced_paths(resource)
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        for key in [name, aliases[name]] if name in aliases else [name]:
            schema: Schema | Reference = shared.value(info)
            if name in forced:
                schema = Schema(type=OpenAPIType.STRING, description=_FORCED_NOTE)
            properties[key] = schema
    for key in resource.raw_filters:
        properties[key] = shared.value(FieldInfo(key, ValueType.TEXT))
    return properties


_EXTRA_SCHEMA: dict[str, Any] = {
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
"""``extra`` of a 400: every bad parameter as ``{key, message, source: "query"}``."""


def error_schema(status: int = 400) -> dict[str, Any]:
    """Litestar's error body for ``status``: ``{status_code, detail, extra}``, as JSON Schema.

    For 400 (``InvalidQueryError``), ``extra`` lists every bad parameter as ``{key, message,
    source: "query"}``, ``key`` being the parameter's name as sent. Other statuses (401 and 403 from
    a forced filter or a row policy, 429 from a spent cost budget, 503 from an unavailable store)
    have no ``extra``.
    """
    properties: dict[str, Any] = {
        "status_code": {"type": "integer", "const": status},
        "detail": {"type": "string", "minLength": 1},
    }
    if status != 400:
        return {"type": "object", "required": ["status_code", "detail"], "properties": properties}
    properties["extra"] = _EXTRA_SCHEMA
    return {"type": "object", "required": ["status_code", "detail", "extra"], "properties": properties}


def problem_schema(status: int = 400, error_format: ErrorFormat = "problem") -> dict[str, Any]:
    """The RFC 9457 problem details body of ``status`` under Litestar's ``ProblemDetailsPlugin``, as JSON Schema.

    Args:
        status: The HTTP status.
        error_format: ``"problem"``: what the plugin makes of the exception
            (``enable_for_all_http_exceptions``): ``{status, title, detail}``, ``title`` holding the
            exception's message and ``detail`` the status phrase, and for a 400 ``extra`` as in
            ``error_schema``. ``"mapped"``: made by the application's own function, so only
            ``status`` is required and the other RFC 9457 members are typed.

    Returns:
        A JSON Schema object.
    """
    if error_format == "mapped":
        properties: dict[str, Any] = {"status": {"type": "integer"}}
        properties.update({name: {"type": "string"} for name in ("type", "title", "detail", "instance")})
        return {"type": "object", "required": ["status"], "properties": properties}
    properties = {
        "status": {"type": "integer", "const": status},
        "title": {"type": "string", "minLength": 1, "description": "What went wrong."},
        "detail": {"type": "string", "minLength": 1, "description": "The HTTP status phrase."},
    }
    if status == 400:
        properties["extra"] = _EXTRA_SCHEMA
    return {"type": "object", "required": list(properties), "properties": properties}


_ERROR_NAMES = {
    400: "InvalidQuery",
    401: "AuthenticationRequired",
    403: "PermissionDenied",
    429: "OverBudget",
    503: "StoreUnavailable",
}
"""Component names of the error bodies: ``components/schemas/Listing<name>``, ``Listing<name>Problem``."""


def _error_response(
    description: str,
    status: int,
    shared: SharedSchemas,
    errors: ErrorShapes,
    headers: dict[str, OpenAPIHeader | Reference] | None = None,
) -> OpenAPIResponse:
    error_format = errors.format(status)
    if error_format == "litestar":
        schema = shared.reference(f"Listing{_ERROR_NAMES[status]}", error_schema(status))
    elif error_format == "problem":
        schema = shared.reference(f"Listing{_ERROR_NAMES[status]}Problem", problem_schema(status))
    else:
        schema = shared.reference("ListingProblemDetails", problem_schema(status, "mapped"))
    return OpenAPIResponse(
        description=description,
        headers=headers,
        content={errors.media_type(status): OpenAPIMediaType(schema=schema)},
    )


def refusals(resource: Resource, policies: RowPolicies | None = None) -> frozenset[int]:
    """The statuses a built resource's scoping may refuse a request with: 401, 403, or none.

    A scope (``Resource.scopes``) may answer 401 (no user) and 403 (a user without the claim it
    reads). A row policy with a rule on a model the resource reaches may answer 403 for the same
    reason, and 401 when that model is the listed one (``RowPolicies.resolve``).
    """
    statuses: set[int] = {401, 403} if resource.scopes else set()
    if policies:
        graph = prepare(resource).field_map.graph
        for name in graph.entities:
            policy = policies.by_entity.get(name)
            if policy is not None and policy.rule is not None:
                statuses.update((401, 403) if name == graph.root else (403,))
    return frozenset(statuses)


def _budget_headers() -> dict[str, OpenAPIHeader | Reference]:
    """The ``RateLimit-*`` headers of a list under a cost budget, as Litestar's rate limiting writes them."""
    number = Schema(type=OpenAPIType.INTEGER, minimum=0)
    return {
        "RateLimit-Policy": OpenAPIHeader(
            description="The client's cost budget: '<units>; w=<window seconds>'.",
            schema=Schema(type=OpenAPIType.STRING),
        ),
        "RateLimit-Limit": OpenAPIHeader(description="Cost units per window.", schema=number),
        "RateLimit-Remaining": OpenAPIHeader(description="Cost units left in the window.", schema=number),
        "RateLimit-Reset": OpenAPIHeader(description="Seconds until the window ends.", schema=number),
    }


def _extension_headers(
    resource: Resource, *, budget: bool, listing: bool = True
) -> dict[str, OpenAPIHeader | Reference]:
    """The headers of a 200: the budget's and the cost's; a list's extensions too when ``listing``."""
    headers: dict[str, OpenAPIHeader | Reference] = _budget_headers() if budget else {}
    if resource.cost_headers:
        headers["X-Listing-Cost"] = OpenAPIHeader(
            description="The list's cost, in cost units.", schema=Schema(type=OpenAPIType.NUMBER, minimum=0)
        )
        headers["X-Listing-Lane"] = OpenAPIHeader(
            description="The admission lane the list ran in.",
            schema=Schema(type=OpenAPIType.STRING, enum=["cheap", "expensive"]),
        )
        headers["X-Listing-Wait"] = OpenAPIHeader(
            description="Seconds the list waited to be admitted.", schema=Schema(type=OpenAPIType.NUMBER, minimum=0)
        )
    if not listing:
        return headers
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


def _operators_text(resource: Resource) -> str:
    """What the filter objects' property names mean: the operator suffixes the resource's backend offers."""
    if resource.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT:
        return "Filters are equalities; a filter repeated means any of its values."
    suffixes = "; ".join(
        f"__{name}: {operator.label}" for name, operator in offered_operators(resource.backend).items() if name != "eq"
    )
    return (
        f"Filters: <field> equal to; {suffixes}. A filter repeated means any of its values (equality: 'in'; "
        "'ne': 'nin'); the values of 'in' and 'nin' are separated by commas, or the parameter repeated."
    )


def _bounds(resource: Resource, ceiling: str) -> str:
    """The bounds no parameter schema states: the operators, the filters' limits, the ceiling (``ceiling`` of it)."""
    limits = resource.limits
    bounds = _operators_text(resource) + (
        f" At most {limits.max_filters} filter parameters per request, repetitions included, and "
        f"{limits.max_in_values} values per 'in' or 'nin' filter."
    )
    return bounds if resource.max_cost is None else f"{bounds} {ceiling.format(resource.max_cost)}"


def list_operation_class(
    resource: Resource,
    shared: SharedSchemas,
    policies: RowPolicies | None = None,
    *,
    errors: ErrorShapes | None = None,
    guarded: bool = False,
    budget: bool = False,
) -> type[Operation]:
    """An ``Operation`` subclass that adds ``resource``'s query parameters and its error responses.

    400 always (naming ``max_cost`` when the resource has a ceiling); 401 and 403 when the
    resource's scopes or row policies may refuse a request (``refusals``), 403 also when the route
    has guards; 429 under a cost budget, with ``Retry-After`` and the ``RateLimit-*`` headers; 503
    always (the store may be unreachable, out of connections, or past the resource's ``timeout``),
    with its ``Retry-After`` header. Error
    bodies and value schemas are ``$ref``s to ``shared``, filled here, when the application is built.
    The description gains the bounds no parameter schema can state.

    Args:
        resource: The built resource.
        shared: Where the schemas the operation refers to are collected.
        policies: The row policies of the application serving it, which may refuse a request (401, 403).
        errors: The application's error formats (``ErrorShapes.detect``): each error response's
            media type and body, Litestar's or problem details. None: Litestar's.
        guarded: The route has guards (``RouteOptions.guards``), which may answer 403.
        budget: The application's plugin has a cost budget (``CostBudget``), which may answer 429.
    """
    parameters = list_parameters(resource, shared)
    bounds = _bounds(resource, "A list may cost at most {0:g} units (filters, search, ordering and page depth).")
    responses = _responses(resource, shared, policies, errors=errors, guarded=guarded, budget=budget)
    return _operation_class(
        f"{resource.name.title()}ListOperation",
        parameters,
        bounds,
        responses,
        _extension_headers(resource, budget=budget),
    )


def facet_parameters(resource: Resource, shared: SharedSchemas) -> list[Parameter]:
    """The query parameters of ``resource``'s facet endpoint (docs: facets, "The request"), filters last.

    ``facet`` as an array of the facetable names, ``facet_limit``, ``facet_mode``, ``search`` and
    the filter objects of the list (``filter_parameters``).
    """
    facets, limits = list(prepare(resource).field_map.facetable), resource.limits
    return [
        _QueryParameter(
            name="facet",
            param_in=ParamType.QUERY,
            description=(
                f"The facets to count, at most {limits.max_facets}: each value's rows among the list's, "
                "its own filters left out unless facet_mode is conjunctive."
            ),
            required=True,
            schema=Schema(
                type=OpenAPIType.ARRAY,
                items=Schema(type=OpenAPIType.STRING, enum=facets),
                min_items=1,
                max_items=limits.max_facets,
            ),
        ),
        _QueryParameter(
            name="facet_limit",
            param_in=ParamType.QUERY,
            description="The most values answered per facet, the most frequent first.",
            schema=Schema(
                type=OpenAPIType.INTEGER,
                minimum=1,
                maximum=limits.max_facet_limit,
                default=limits.default_facet_limit,
            ),
        ),
        _QueryParameter(
            name="facet_mode",
            param_in=ParamType.QUERY,
            description=(
                "disjunctive: a facet's counts leave out the filters on its own path; conjunctive: every "
                "filter applies to every facet."
            ),
            schema=Schema(type=OpenAPIType.STRING, enum=[mode.value for mode in FacetMode], default="disjunctive"),
        ),
        *_search_parameter(resource),
        *filter_parameters(resource, shared),
    ]


def facet_operation_class(
    resource: Resource,
    shared: SharedSchemas,
    policies: RowPolicies | None = None,
    *,
    errors: ErrorShapes | None = None,
    guarded: bool = False,
    budget: bool = False,
) -> type[Operation]:
    """An ``Operation`` subclass documenting ``resource``'s facet endpoint (docs: facets), as ``list_operation_class``.

    Its parameters are ``facet_parameters``; its error responses those of the list.
    """
    bounds = _bounds(resource, "A facet request may cost at most {0:g} units (filters, search and facets).")
    responses = _responses(resource, shared, policies, errors=errors, guarded=guarded, budget=budget)
    headers = _extension_headers(resource, budget=budget, listing=False)
    return _operation_class(
        f"{resource.name.title()}FacetsOperation", facet_parameters(resource, shared), bounds, responses, headers
    )


def _responses(
    resource: Resource,
    shared: SharedSchemas,
    policies: RowPolicies | None,
    *,
    errors: ErrorShapes | None,
    guarded: bool,
    budget: bool,
) -> dict[str, OpenAPIResponse]:
    """The error responses of ``resource``'s endpoints (``list_operation_class``)."""
    errors = ErrorShapes() if errors is None else errors
    invalid = "A query parameter is invalid; every bad parameter is listed in 'extra'."
    if resource.max_cost is not None:
        invalid = (
            f"A query parameter is invalid, or the list would cost more than {resource.max_cost:g} units (its "
            "ceiling; the parameters that made it so are listed); every bad parameter is listed in 'extra'."
        )
    responses: dict[str, OpenAPIResponse] = {"400": _error_response(invalid, 400, shared, errors)}
    refused = refusals(resource, policies)
    if 401 in refused:
        responses["401"] = _error_response(
            "Authentication is required: a server-side scope of this resource found no user.", 401, shared, errors
        )
    reasons = ["the authenticated user lacks what a server-side scope of this resource reads"] if 403 in refused else []
    if guarded:
        reasons.append("a guard of this route refused the request")
    if reasons:
        responses["403"] = _error_response(f"Permission denied: {'; or '.join(reasons)}.", 403, shared, errors)
    retry_after = OpenAPIHeader(
        description="Seconds to wait before retrying.", schema=Schema(type=OpenAPIType.INTEGER, minimum=0)
    )
    if budget:
        responses["429"] = _error_response(
            "The client has spent its cost budget for the window; retry after the 'Retry-After' seconds.",
            429,
            shared,
            errors,
            {"Retry-After": retry_after, **_budget_headers()},
        )
    responses["503"] = _error_response(
        "The store did not answer in time, is unreachable or has no free connection, or the server is "
        "busy; retry after the 'Retry-After' seconds.",
        503,
        shared,
        errors,
        {"Retry-After": retry_after},
    )
    return responses


def _operation_class(
    name: str,
    parameters: list[Parameter],
    bounds: str,
    responses: dict[str, OpenAPIResponse],
    headers: dict[str, OpenAPIHeader | Reference],
) -> type[Operation]:
    """An ``Operation`` subclass adding ``parameters``, ``bounds``, ``responses`` and the 200's ``headers``."""

    @dataclass
    class ListOperation(Operation):
        def __post_init__(self) -> None:
            self.parameters = [*(self.parameters or []), *parameters]
            self.description = f"{self.description}\n\n{bounds}" if self.description else bounds
            merged: dict[str, Any] = {**(self.responses or {}), **responses}
            success = merged.get("200")
            if isinstance(success, OpenAPIResponse):
                success.headers = {**(success.headers or {}), **headers}
            self.responses = merged

    ListOperation.__name__ = ListOperation.__qualname__ = name
    return ListOperation
