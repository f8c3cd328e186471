"""Documents -> items, and eager loading of links for the page only (docs: eager loading).

Each loaded relation costs one ``find`` for the whole page (``_id``s in chunks), at every depth;
documents no page item references are never read.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bson import Binary, DBRef, Decimal128

from litestar_listing.core.schema import FieldInfo, ValueType

if TYPE_CHECKING:
    from pymongo.asynchronous.collection import AsyncCollection

    from litestar_listing.backends.beanie.introspection import DocumentInfo, Documents

__all__ = ("CHUNK", "decode", "decode_value", "load", "reference_id")

CHUNK = 1000
"""Most identifiers in one ``$in`` of an eager-loading query."""

Raw = Mapping[str, Any]


def reference_id(value: object) -> object:
    """The referenced identifier of a stored link (a ``DBRef``, or its sub-document form), else None."""
    if isinstance(value, DBRef):
        return value.id
    if isinstance(value, Mapping):
        return value.get("$id")
    return None


def decode_value(info: FieldInfo, value: object) -> object:
    """A stored BSON value as the Python value of the field's type (Decimal128 -> Decimal, ...)."""
    if value is None:
        return None
    kind = info.type
    if kind is ValueType.DECIMAL:
        if isinstance(value, Decimal128):
            return value.to_decimal()
        return decimal.Decimal(str(value)) if isinstance(value, (int, float)) else value
    if kind is ValueType.DATETIME and isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)  # BSON datetimes are UTC
    if kind is ValueType.DATE and isinstance(value, dt.datetime):
        return value.date()  # Beanie stores a date as its midnight
    if kind is ValueType.UUID and isinstance(value, Binary):
        return value.as_uuid()
    if kind is ValueType.UUID and isinstance(value, bytes) and len(value) == 16:
        return uuid.UUID(bytes=value)
    if kind is ValueType.ENUM and info.enum is not None:
        try:
            return info.enum(value)
        except ValueError:
            return value
    return value


def decode(info: DocumentInfo, document: Raw, computed: Mapping[str, FieldInfo] | None = None) -> dict[str, Any]:
    """The item of one stored document: every non-private field by name, computed values last."""
    item: dict[str, Any] = {}
    for name, field in info.entity.fields.items():
        if field.private:
            continue
        key = info.keys[name]
        link = key.removesuffix(".$id")
        value = reference_id(document.get(link)) if link != key else document.get(key)
        item[name] = decode_value(field, value)
    for name, field in (computed or {}).items():
        item[name] = decode_value(field, document.get(name))
    return item


async def _find(
    collection: AsyncCollection[Any], key: str, ids: Sequence[object], session: Any, *, allowed: Raw | None = None
) -> list[Raw]:
    found: list[Raw] = []
    for start in range(0, len(ids), CHUNK):
        match: Raw = {key: {"$in": list(ids[start : start + CHUNK])}}
        if allowed is not None:  # the linked class's row policy: outside it, a document is missing
            match = {"$and": [match, allowed]}
        cursor = collection.find(match, session=session).sort("_id", 1)
        found.extend(await cursor.to_list(None))
    return found


async def load(
    documents: Documents,
    info: DocumentInfo,
    items: list[dict[str, Any]],
    raws: Sequence[Raw],
    tree: Mapping[str, Any],
    session: Any = None,
    allowed: Callable[[DocumentInfo], Raw | None] | None = None,
) -> None:
    """Attach the relations of ``tree`` (``{"owner": {"role": {}}}``) to ``items``, in place.

    A link becomes the linked item or None (also when the linked document is gone); a list of
    links or a back link becomes a list of items in ``_id`` order.

    Args:
        documents: The document classes.
        info: The class of ``items``.
        items: The items, in the order of ``raws``.
        raws: The stored documents the items were decoded from.
        tree: The relations to load, nested.
        session: A pymongo ``AsyncClientSession``, or None.
        allowed: The row policy of a linked class as a query, or None for none (``ListQuery.policies``).
    """
    for name, subtree in tree.items():
        reference = info.references[name]
        target = documents.info(reference.target)
        collection = reference.target.get_pymongo_collection()
        condition = None if allowed is None else allowed(target)
        if reference.kind == "back":
            back_key = target.references[reference.back_field].key
            children = await _find(
                collection, f"{back_key}.$id", [raw["_id"] for raw in raws], session, allowed=condition
            )
            by_parent: dict[object, list[int]] = {}
            for position, child in enumerate(children):
                by_parent.setdefault(reference_id(child.get(back_key)), []).append(position)
            per_item = [by_parent.get(raw["_id"], []) for raw in raws]
        else:
            stored = [raw.get(reference.key) for raw in raws]
            linked = [
                [reference_id(value)] if reference.kind == "link" else [reference_id(one) for one in value or ()]
                for value in stored
            ]
            wanted = list(dict.fromkeys(key for keys in linked for key in keys if key is not None))
            children = await _find(collection, "_id", wanted, session, allowed=condition)
            position_of = {child["_id"]: position for position, child in enumerate(children)}
            per_item = [sorted({position_of[key] for key in keys if key in position_of}) for keys in linked]
        child_items = [decode(target, child) for child in children]
        if subtree:
            await load(documents, target, child_items, children, subtree, session, allowed)
        for item, positions in zip(items, per_item, strict=True):
            if reference.kind == "link":
                item[name] = child_items[positions[0]] if positions else None
            else:
                item[name] = [child_items[position] for position in positions]
