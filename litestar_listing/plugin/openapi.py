"""OpenAPI for list endpoints: every reserved parameter and every exposed filter with its operators.

Parameters are read by the engine from the raw query string, so they are documented here rather
than declared on the handler's signature (which would make Litestar validate them a second time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from litestar.enums import ParamType
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, Parameter, Schema

from litestar_listing.core.coercion import describe_type
from litestar_listing.core.operators import OPERATORS, ValueKind
from litestar_listing.core.query import LOOKUP_SEP, FilterSyntax
from litestar_listing.core.schema import FieldInfo, ValueType

if TYPE_CHECKING:
    from litestar_listing.plugin.resource import Resource

__all__ = ("error_schema", "list_operation_class", "list_parameters")


def _value_schema(info: FieldInfo) -> Schema:
    if info.type is ValueType.INTEGER:
        bound = 2 ** (info.bits - 1)
        return Schema(type=OpenAPIType.INTEGER, minimum=-bound, maximum=bound - 1)
    if info.type is ValueType.FLOAT:
        return Schema(type=OpenAPIType.NUMBER)
    if info.type is ValueType.DECIMAL:
        return Schema(type=OpenAPIType.STRING, pattern=r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,4})?$")
    if info.type is ValueType.BOOLEAN:
        return Schema(type=OpenAPIType.BOOLEAN)
    if info.type is ValueType.DATE:
        return Schema(type=OpenAPIType.STRING, format="date")  # type: ignore[arg-type]
    if info.type is ValueType.DATETIME:
        return Schema(type=OpenAPIType.STRING, format="date-time")  # type: ignore[arg-type]
    if info.type is ValueType.UUID:
        return Schema(type=OpenAPIType.STRING, format="uuid")  # type: ignore[arg-type]
    if info.type is ValueType.ENUM and info.enum is not None:
        return Schema(type=OpenAPIType.STRING, enum=[str(member.value) for member in info.enum])
    return Schema(type=OpenAPIType.STRING)


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
            description="Page number, from 1 (spec §4.7).",
            schema=Schema(type=OpenAPIType.INTEGER, minimum=1, default=1),
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
                description=f"Case-insensitive substring search over: {names}.",
                schema=Schema(type=OpenAPIType.STRING, max_length=limits.max_search_length),
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
                "Comma-separated ordering terms, '-' for descending; the primary key breaks ties. "
                f"Default: {','.join(('-' if t.descending else '') + t.path.name for t in field_map.default_order)}. "
                f"Orderable: {', '.join(orderable)}."
            ),
            schema=Schema(type=OpenAPIType.STRING, pattern=f"^{term}(,{term})*$"),
        )
    )
    if resource.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT:
        return parameters + _document_filters(resource)
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        for operator in OPERATORS.values():
            if not operator.applies_to(info.type):
                continue
            key = name if operator.name == "eq" else f"{name}{LOOKUP_SEP}{operator.name}"
            schema = _value_schema(info)
            explode = None
            if operator.kind is ValueKind.LIST:
                schema, explode = Schema(type=OpenAPIType.ARRAY, items=schema), False
            elif operator.kind is ValueKind.FLAG:
                schema = Schema(type=OpenAPIType.BOOLEAN)
            elif operator.kind in {ValueKind.TEXT, ValueKind.PATTERN}:
                schema = Schema(type=OpenAPIType.STRING)
            repeat = f" Repeat it for '{operator.repeated_as}'." if operator.repeated_as else ""
            parameters.append(
                Parameter(
                    name=key,
                    param_in=ParamType.QUERY,
                    required=False,
                    description=f"{name} {operator.label}; {describe_type(info)}.{repeat}",
                    schema=schema,
                    explode=explode,
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
    for name, exposed in field_map.filterable.items():
        info = exposed.field
        reference = name in aliases
        names = [name, aliases[name]] if reference else [name]
        for key in names:
            meaning = f"the referenced record's identifier ({aliases[name]})" if reference else name
            parameters.append(
                Parameter(
                    name=key,
                    param_in=ParamType.QUERY,
                    required=False,
                    description=f"{meaning} equal to; {describe_type(info)}. Repeat it for 'in'.",
                    schema=_value_schema(info),
                )
            )
    parameters.extend(
        Parameter(
            name=key,
            param_in=ParamType.QUERY,
            required=False,
            description=f"Raw store filter: {key} equal to the text. Repeat it for 'in'.",
            schema=Schema(type=OpenAPIType.STRING),
        )
        for key in resource.raw_filters
    )
    return parameters


def error_schema() -> Schema:
    """Litestar's 400 body: ``{status_code, detail, extra: [{key, message, source}]}``."""
    text = Schema(type=OpenAPIType.STRING)
    return Schema(
        type=OpenAPIType.OBJECT,
        required=["status_code", "detail"],
        properties={
            "status_code": Schema(type=OpenAPIType.INTEGER),
            "detail": text,
            "extra": Schema(
                type=OpenAPIType.ARRAY,
                items=Schema(
                    type=OpenAPIType.OBJECT,
                    required=["key", "message"],
                    properties={"key": text, "message": text, "source": text},
                ),
            ),
        },
    )


def list_operation_class(resource: Resource) -> type[Operation]:
    """An ``Operation`` subclass that adds ``resource``'s query parameters and its 400 response."""

    @dataclass
    class ListOperation(Operation):
        def __post_init__(self) -> None:
            self.parameters = [*(self.parameters or []), *list_parameters(resource)]
            responses: dict[str, Any] = dict(self.responses or {})
            responses["400"] = OpenAPIResponse(
                description="A query parameter is invalid; every bad parameter is listed in 'extra'.",
                content={"application/json": OpenAPIMediaType(schema=error_schema())},
            )
            self.responses = responses

    ListOperation.__name__ = ListOperation.__qualname__ = f"{resource.name.title()}ListOperation"
    return ListOperation
