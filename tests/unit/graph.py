"""A small hand-built model graph for engine tests (no ORM involved)."""

from __future__ import annotations

import enum

from litestar_listing.core.schema import EntityInfo, FieldInfo, FieldMap, ModelGraph, RelationInfo, ValueType


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def _fields(*fields: FieldInfo) -> dict[str, FieldInfo]:
    return {field.name: field for field in fields}


GRAPH = ModelGraph(
    "Thing",
    {
        "Thing": EntityInfo(
            "Thing",
            _fields(
                FieldInfo("id", ValueType.INTEGER, nullable=False),
                FieldInfo("name", ValueType.TEXT),
                FieldInfo("small", ValueType.INTEGER, bits=16),
                FieldInfo("weight", ValueType.FLOAT),
                FieldInfo("price", ValueType.DECIMAL),
                FieldInfo("active", ValueType.BOOLEAN),
                FieldInfo("day", ValueType.DATE),
                FieldInfo("at", ValueType.DATETIME),
                FieldInfo("naive_at", ValueType.DATETIME, timezone=False),
                FieldInfo("uid", ValueType.UUID),
                FieldInfo("color", ValueType.ENUM, enum=Color),
                FieldInfo("owner_id", ValueType.INTEGER),
            ),
            {"owner": RelationInfo("owner", "User"), "tags": RelationInfo("tags", "Tag", to_many=True)},
            ("id",),
        ),
        "User": EntityInfo(
            "User",
            _fields(
                FieldInfo("id", ValueType.INTEGER, nullable=False),
                FieldInfo("name", ValueType.TEXT),
                FieldInfo("password_hash", ValueType.TEXT, private=True),
                FieldInfo("boss_id", ValueType.INTEGER),
            ),
            {"boss": RelationInfo("boss", "User"), "things": RelationInfo("things", "Thing", to_many=True)},
            ("id",),
        ),
        "Tag": EntityInfo(
            "Tag", _fields(FieldInfo("id", ValueType.INTEGER), FieldInfo("name", ValueType.TEXT)), {}, ("id",)
        ),
    },
)


def field_map(**options: object) -> FieldMap:
    settings: dict[str, object] = {
        "filter_fields": ["*", "owner__*", "owner__boss__name", "tags__name"],
        "order_fields": ["*", "owner__name"],
        "search_fields": ["name", "owner__name", "tags__name"],
        "default_order": ["-at"],
    }
    settings.update(options)
    return FieldMap.build(GRAPH, **settings)  # type: ignore[arg-type]
