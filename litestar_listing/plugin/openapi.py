"""OpenAPI for list endpoints: every reserved parameter and every exposed filter with its operators.

Parameters are read by the engine from the raw query string, so they are documented here rather
than declared on the handler's signature (which would make Litestar validate them a second time).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from litestar.enums import ParamType
from litestar.openapi.spec import (
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    Schema,
)

from litestar_listing.core.coercion import _MAX_NUMBER_TEXT, describe_type
from litestar_listing.core.cursor import CURSOR_PARAMETER
from litestar_listing.core.operators import Operator, ValueKind
from litestar_listing.core.parsing import MAX_OFFSET, Limits
from litestar_listing.core.query import LOOKUP_SEP, FilterSyntax
from litestar_listing.core.schema import FieldInfo, ValueType

if TYPE_CHECKING:
    from litestar_listing.plugin.resource import Resource

__all__ = ("error_schema", "list_operation_class", "list_parameters")


_NO_NUL = r"^[^\x00]*$"
"""Text without NUL characters: the engine refuses them (no database stores them in text)."""

_LIKE_PATTERN = r"^([^\x00\\]|\\[^\x00])*$"
"""A LIKE pattern: no NUL, and a backslash always escapes a next character (none may end it)."""

_YEAR = r"(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
_DATE = (
    rf"({_YEAR}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)"
    rf"|{_LEAP_YEAR}-02-29)"
)
"""A calendar date, years 1 to 9999 (Python's), 29 February in leap years only: RFC 3339 ``full-date``
without year 0, which is what ``coerce`` accepts."""

_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?"
_OFFSET = r"(Z|z|[+-]([01][0-9]|2[0-3]):?[0-9]{2})"
_DATETIME_PATTERN = rf"^{_DATE}([T ]{_TIME}{_OFFSET}?)?$"
"""What ``coerce`` reads as a date-time: ISO 8601 with ``T`` or a space, optional seconds, fraction and
offset (none is UTC), or a bare date (midnight UTC). Wider than RFC 3339 ``date-time``, which would
call valid values invalid (and narrower: no lowercase ``t``, at most 6 fraction digits)."""

_FLOAT_BOUND = sys.float_info.max
"""Finite numbers only: past it the text reads as infinity, which is refused."""


def _value_schema(info: FieldInfo) -> Schema:
    if info.type is ValueType.INTEGER:
        bound = 2 ** (info.bits - 1)
        return Schema(type=OpenAPIType.INTEGER, minimum=-bound, maximum=bound - 1)
    if info.type is ValueType.FLOAT:
        return Schema(type=OpenAPIType.NUMBER, minimum=-_FLOAT_BOUND, maximum=_FLOAT_BOUND)
    if info.type is ValueType.DECIMAL:
        return Schema(
            type=OpenAPIType.STRING,
            pattern=r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,4})?$",
            max_length=_MAX_NUMBER_TEXT,
        )
    if info.type is ValueType.BOOLEAN:
        return Schema(type=OpenAPIType.BOOLEAN)
    if info.type is ValueType.DATE:
        return Schema(type=OpenAPIType.STRING, format="date", pattern=f"^{_DATE}$")  # type: ignore[arg-type]
    if info.type is ValueType.DATETIME:
        return Schema(type=OpenAPIType.STRING, pattern=_DATETIME_PATTERN)
    if info.type is ValueType.UUID:
        return Schema(type=OpenAPIType.STRING, format="uuid")  # type: ignore[arg-type]
    if info.type is ValueType.ENUM and info.enum is not None:
        return Schema(type=OpenAPIType.STRING, enum=[str(member.value) for member in info.enum])
    if info.type is ValueType.TEXT:
        return Schema(type=OpenAPIType.STRING, pattern=_NO_NUL)
    return Schema(type=OpenAPIType.STRING)


def _operator_schema(info: FieldInfo, operator: Operator, limits: Limits) -> tuple[Schema, bool | None]:
    """The schema of ``info``'s values under ``operator``, and ``explode`` (False for comma lists)."""
    if operator.kind is ValueKind.LIST:
        # ``a,b`` is two values. An empty list is sent as an empty value, which is one empty text:
        # only text fields accept it.
        items = _value_schema(info)
        least = None if info.type is ValueType.TEXT else 1
        return Schema(type=OpenAPIType.ARRAY, items=items, min_items=least, max_items=limits.max_in_values), False
    if operator.kind is ValueKind.RANGE:
        value = _value_schema(info)
        return Schema(type=OpenAPIType.ARRAY, items=value, min_items=2, max_items=2), False
    if operator.kind is ValueKind.FLAG:
        return Schema(type=OpenAPIType.BOOLEAN), None
    if operator.kind is ValueKind.PATTERN:
        return Schema(type=OpenAPIType.STRING, pattern=_LIKE_PATTERN), None
    if operator.kind is ValueKind.TEXT:
        return Schema(type=OpenAPIType.STRING, pattern=_NO_NUL), None
    return _value_schema(info), None


def _takes_empty(info: FieldInfo, operator: Operator) -> bool:
    """Whether ``name__op=`` (an empty value) is a valid value: text, or a LIKE pattern.

    Comma lists keep the default (no empty value): for text fields the empty list is already valid
    by their schema, and declaring it twice makes clients unable to tell a scalar from a list.
    """
    return operator.kind in {ValueKind.TEXT, ValueKind.PATTERN} or (
        info.type is ValueType.TEXT and operator.kind is ValueKind.FIELD
    )


_FORCED_NOTE = " Ignored, its value unchecked, while a server-side scope sets this field."


def _forced_paths(resource: Resource) -> set[str]:
    """Fields that forced filters may set.

    The engine drops a client's equality on such a field unread while a scope applies (spec §4.4.10),
    so any text may be answered with a 200: the parameter's schema is plain text.
    """
    return {path for scope in resource.scopes for path in scope.fields}


def list_parameters(resource: Resource) -> list[Parameter]:
    """The query parameters of ``resource``'s list endpoint (spec §4.1), filters last.

    Returns:
        ``page``, ``count``, ``search`` (when the resource has searchable fields), ``order_by``
        with a pattern of its allowed names, and one parameter per exposed filter path and
        operator (``path`` for equality, ``path__op`` otherwise); for document-store resources
        one per field, reference alias and raw key instead (spec §4.4.9).
    """
    field_map, limits = resource.field_map, resource.limits
    parameters = [
        Parameter(
            name="page",
            param_in=ParamType.QUERY,
            required=False,
            description="Page number, from 1 (spec §4.7); (page - 1) x count must stay within a 64-bit row offset.",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=MAX_OFFSET + 1, default=1),
        ),
        Parameter(
            name="count",
            param_in=ParamType.QUERY,
            required=False,
            description="Page size.",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=limits.max_count, default=limits.default_count),
        ),
    ]
    if field_map.searchable:
        names = ", ".join(exposed.path.name for exposed in field_map.searchable)
        parameters.append(
            Parameter(
                name="search",
                param_in=ParamType.QUERY,
                required=False,
                description=f"Case-insensitive substring search over: {names}. Empty: no search.",
                schema=Schema(type=OpenAPIType.STRING, max_length=limits.max_search_length, pattern=_NO_NUL),
                allow_empty_value=True,
            )
        )
    orderable = sorted(field_map.orderable)
    term = "-?(" + "|".join(re.escape(name) for name in orderable) + ")"
    parameters.append(
        Parameter(
            name="order_by",
            param_in=ParamType.QUERY,
            required=False,
            description=(
                "Comma-separated ordering terms, '-' for descending, each field at most once; the primary key "
                "breaks ties. Empty or absent: the default, "
                f"{','.join(('-' if t.descending else '') + t.path.name for t in field_map.default_order)}. "
                f"Orderable: {', '.join(orderable)}."
            ),
            schema=Schema(type=OpenAPIType.STRING, pattern=f"^{term}(,{term})*$"),
            allow_empty_value=True,  # ``order_by=`` is the default order, as an absent parameter
        )
    )
    if resource.keyset:
        parameters.append(
            Parameter(
                name=CURSOR_PARAMETER,
                param_in=ParamType.QUERY,
                required=False,
                description=(
                    "Keyset continuation (an extension of spec §4.7): the X-Next-Cursor header of the previous "
                    "response. Continues after that page's last item; not with 'page', and with the same filters, "
                    "search, order_by and count."
                ),
                schema=Schema(type=OpenAPIType.STRING, min_length=1, max_length=4096, pattern="^[A-Za-z0-9_-]+$"),
            )
        )
    if resource.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT:
        return parameters + _document_filters(resource)
    forced = _forced_paths(resource)
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        for operator in resource.operators.values():
            if not operator.applies_to(info.type):
                continue
            key = name if operator.name == "eq" else f"{name}{LOOKUP_SEP}{operator.name}"
            schema, explode = _operator_schema(info, operator, limits)
            empty = _takes_empty(info, operator)
            repeat = f" Repeat it for '{operator.repeated_as}'." if operator.repeated_as else ""
            description = f"{name} {operator.label}; {describe_type(info)}.{repeat}"
            if operator.name == "eq" and name in forced:
                schema, empty, description = Schema(type=OpenAPIType.STRING), True, description + _FORCED_NOTE
            parameters.append(
                Parameter(
                    name=key,
                    param_in=ParamType.QUERY,
                    required=False,
                    description=description,
                    schema=schema,
                    explode=explode,
                    allow_empty_value=empty,
                )
            )
    return parameters


def _document_filters(resource: Resource) -> list[Parameter]:
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
            schema, description = _value_schema(info), f"{meaning} equal to; {describe_type(info)}. Repeat it for 'in'."
            empty = info.type is ValueType.TEXT
            if name in forced:
                schema, empty, description = Schema(type=OpenAPIType.STRING), True, description + _FORCED_NOTE
            parameters.append(
                Parameter(
                    name=key,
                    param_in=ParamType.QUERY,
                    required=False,
                    description=description,
                    schema=schema,
                    allow_empty_value=empty,
                )
            )
    parameters.extend(
        Parameter(
            name=key,
            param_in=ParamType.QUERY,
            required=False,
            description=f"Raw store filter: {key} equal to the text. Repeat it for 'in'.",
            schema=Schema(type=OpenAPIType.STRING, pattern=_NO_NUL),
            allow_empty_value=True,
        )
        for key in resource.raw_filters
    )
    return parameters


def error_schema(status: int = 400) -> Schema:
    """Litestar's error body for ``status``: ``{status_code, detail, extra}``.

    For 400 (``InvalidQueryError``), ``extra`` lists every bad parameter as ``{key, message,
    source: "query"}``, ``key`` being the parameter's name as sent. Other statuses (401 from a forced
    filter, 503 from an unavailable store) have no ``extra``.
    """
    text = Schema(type=OpenAPIType.STRING)
    properties: dict[str, Schema | Reference] = {
        "status_code": Schema(type=OpenAPIType.INTEGER, const=status),
        "detail": Schema(type=OpenAPIType.STRING, min_length=1),
    }
    if status != 400:
        return Schema(type=OpenAPIType.OBJECT, required=["status_code", "detail"], properties=properties)
    properties["extra"] = Schema(
        type=OpenAPIType.ARRAY,
        min_items=1,
        items=Schema(
            type=OpenAPIType.OBJECT,
            required=["key", "message", "source"],
            properties={
                "key": text,
                "message": Schema(type=OpenAPIType.STRING, min_length=1),
                "source": Schema(type=OpenAPIType.STRING, const="query"),
            },
        ),
    )
    return Schema(type=OpenAPIType.OBJECT, required=["status_code", "detail", "extra"], properties=properties)


def _error_response(description: str, status: int) -> OpenAPIResponse:
    return OpenAPIResponse(
        description=description,
        content={"application/json": OpenAPIMediaType(schema=error_schema(status))},
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


def list_operation_class(resource: Resource) -> type[Operation]:
    """An ``Operation`` subclass that adds ``resource``'s query parameters and its error responses.

    400 always; 401 when the resource has forced filters (they may refuse a request without a
    user); 503 always (the store may be unreachable, out of connections, or past the resource's
    ``timeout``). The description gains the bounds no parameter schema can state.
    """

    @dataclass
    class ListOperation(Operation):
        def __post_init__(self) -> None:
            self.parameters = [*(self.parameters or []), *list_parameters(resource)]
            limits = resource.limits
            bounds = (
                f"At most {limits.max_filters} filter parameters per request, repetitions included, and "
                f"{limits.max_in_values} values per 'in' or 'nin' filter."
            )
            self.description = f"{self.description}\n\n{bounds}" if self.description else bounds
            responses: dict[str, Any] = dict(self.responses or {})
            responses["400"] = _error_response(
                "A query parameter is invalid; every bad parameter is listed in 'extra'.", 400
            )
            if resource.scopes:
                responses["401"] = _error_response(
                    "Authentication is required: a server-side scope of this resource found no user.", 401
                )
            responses["503"] = _error_response(
                "The store did not answer in time, is unreachable or has no free connection; retry after "
                "the 'Retry-After' seconds.",
                503,
            )
            success = responses.get("200")
            if isinstance(success, OpenAPIResponse):
                success.headers = {**(success.headers or {}), **_extension_headers(resource)}
            self.responses = responses

    ListOperation.__name__ = ListOperation.__qualname__ = f"{resource.name.title()}ListOperation"
    return ListOperation
