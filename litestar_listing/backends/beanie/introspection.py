"""Beanie documents -> the engine's ``ModelGraph``, and where each field is stored in a document.

A ``Link[X]`` field is a to-one relation under its own name and, for filters, the field ``<name>_id``
stored at ``<name>.$id`` (docs: query language, "Document-store resources"); ``list[Link[X]]`` and ``BackLink`` fields
are to-many.
Fields of other shapes (embedded models, lists of values, dicts) are not part of the graph.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import sys
import types
import typing
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, ForwardRef, Literal, Union, get_args, get_origin

from beanie import BackLink, Document, Link
from beanie.odm.utils.typing import get_index_attributes
from bson import ObjectId
from bson.errors import InvalidId
from pydantic import SecretBytes, SecretStr
from pymongo import ASCENDING, DESCENDING, IndexModel

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.schema import EntityInfo, FieldInfo, ModelGraph, RelationInfo, ValueType

__all__ = ("DocumentInfo", "Documents", "Reference", "field_info", "indexed_keys", "object_id", "value_type")

OBJECT_ID_EXPECTED = "a 24-character hexadecimal ObjectId"
"""How an invalid ObjectId is described in a 400 (docs: query language, "Document-store resources")."""


def object_id(text: str) -> ObjectId:
    """``text`` as an ``ObjectId``: 24 hexadecimal characters (docs: query language, "Document-store resources").

    Raises:
        ValueError: ``text`` is not a valid ObjectId.
    """
    try:
        return ObjectId(text.strip())
    except (InvalidId, TypeError):
        raise ValueError(OBJECT_ID_EXPECTED) from None


def value_type(annotation: Any) -> tuple[ValueType, dict[str, Any]] | None:
    """Map a plain (non-link) field annotation to a ``ValueType`` and extra ``FieldInfo`` arguments.

    Returns None for shapes the listing does not filter, order or list (embedded models, lists); a
    ``dict`` is a JSON document, listed whole.
    """
    kind = _unwrap(annotation)[0]
    if kind is dict or typing.get_origin(kind) is dict:
        return ValueType.JSON, {}
    if not isinstance(kind, type):
        return None
    simple: tuple[tuple[type, ValueType, dict[str, Any]], ...] = (
        (bool, ValueType.BOOLEAN, {}),  # before int: bool is an int
        (enum.Enum, ValueType.ENUM, {"enum": kind}),  # before str: StrEnum is a str
        (int, ValueType.INTEGER, {"bits": 64}),
        (float, ValueType.FLOAT, {}),
        (decimal.Decimal, ValueType.DECIMAL, {}),
        (str, ValueType.TEXT, {}),
        (SecretStr, ValueType.TEXT, {"private": True}),
        (SecretBytes, ValueType.TEXT, {"private": True}),
        (dt.datetime, ValueType.DATETIME, {"timezone": True}),  # before date: a datetime is a date
        (dt.date, ValueType.DATE, {}),
        (uuid.UUID, ValueType.UUID, {}),
        (ObjectId, ValueType.IDENTIFIER, {"coerce": object_id, "expected": OBJECT_ID_EXPECTED}),
    )
    for base, mapped, extra in simple:
        if issubclass(kind, base):
            return mapped, extra
    return None


def field_info(name: str, annotation: Any, *, computed: bool = False, reads: tuple[str, ...] = ()) -> FieldInfo:
    """The ``FieldInfo`` of a field or computed value annotated ``annotation`` (``reads``: see ``FieldInfo``).

    Raises:
        ConfigurationError: The annotation is not a type the listing can compare.
    """
    mapped = value_type(annotation)
    if mapped is None:
        msg = f"{name!r}: {annotation!r} is not a type a list can filter or order on"
        raise ConfigurationError(msg)
    kind, extra = mapped
    return FieldInfo(name, kind, nullable=_unwrap(annotation)[1], computed=computed, reads=reads, **extra)


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """``Optional[X]``/``X | None`` -> ``(X, True)``; anything else -> ``(annotation, False)``."""
    nullable = False
    if get_origin(annotation) in {Union, types.UnionType}:
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1 and len(members) < len(get_args(annotation)):
            annotation, nullable = members[0], True
    if get_origin(annotation) is Annotated:  # e.g. beanie.DecimalAnnotation inside an Optional
        annotation = get_args(annotation)[0]
    return annotation, nullable


@dataclass(frozen=True, slots=True)
class Reference:
    """A link from one document class to another.

    Attributes:
        name: The field holding the link(s), e.g. ``owner``.
        target: The linked document class.
        kind: ``link`` (``Link[X]``, to-one), ``links`` (``list[Link[X]]``) or ``back``
            (``BackLink``: documents of ``target`` whose ``back_field`` links here).
        key: Where the link(s) are stored in the document (the field's alias, else its name).
        back_field: For ``back``, the field of ``target`` that holds the link.
    """

    name: str
    target: type[Document]
    kind: Literal["link", "links", "back"]
    key: str
    back_field: str = ""

    @property
    def to_many(self) -> bool:
        """Whether the relation reaches several documents."""
        return self.kind != "link"


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """One document class as the compiler sees it.

    Attributes:
        document: The Beanie document class.
        entity: Its entity in the graph.
        keys: Field name -> the key it is stored under (``id`` -> ``_id``, ``owner_id`` -> ``owner.$id``).
        references: Relation name -> the link behind it.
    """

    document: type[Document]
    entity: EntityInfo
    keys: Mapping[str, str]
    references: Mapping[str, Reference]

    def link_key(self, name: str) -> str | None:
        """Where the link behind the field ``name`` is stored, when the field is a link's identifier.

        ``owner_id`` (stored at ``owner.$id``) -> ``owner``; any other field -> None.
        """
        key = self.keys[name]
        return key.removesuffix(".$id") if key.endswith(".$id") else None


def _resolve(argument: Any, owner: type[Document]) -> Any:
    # Link["User"] written before User exists: evaluate the name where the model was defined.
    if isinstance(argument, ForwardRef):
        argument = argument.__forward_arg__
    if isinstance(argument, str):
        namespace = vars(sys.modules[owner.__module__])
        try:
            return eval(argument, namespace)  # noqa: S307 - a type name from the model's own annotations
        except NameError:
            msg = f"{owner.__name__}: cannot resolve the linked document {argument!r}"
            raise ConfigurationError(msg) from None
    return argument


def _reference(name: str, model_field: Any, owner: type[Document]) -> Reference | None:
    extra = model_field.json_schema_extra if isinstance(model_field.json_schema_extra, Mapping) else {}
    key = model_field.alias or name
    annotation = _unwrap(model_field.annotation)[0]
    origin, args = get_origin(annotation), get_args(annotation)
    many = origin in {list, typing.List}  # noqa: UP006 - both spellings occur in user models
    if many and len(args) == 1:
        annotation = args[0]
        origin, args = get_origin(annotation), get_args(annotation)
    if origin is Link and args:
        return Reference(name, _resolve(args[0], owner), "links" if many else "link", key)
    if origin is BackLink and args:
        back_field = extra.get("original_field")
        if not isinstance(back_field, str):
            msg = f"{owner.__name__}.{name}: a BackLink needs Field(json_schema_extra={{'original_field': ...}})"
            raise ConfigurationError(msg)
        return Reference(name, _resolve(args[0], owner), "back", key, back_field)
    return None


def _index_models(document: type[Document]) -> list[IndexModel]:
    """The indexes ``init_beanie`` creates for ``document``, merged as it merges them.

    ``Indexed(...)`` fields first, then ``Settings.indexes`` (of every Document class in the MRO when
    ``Settings.merge_indexes``); a later index on the same set of keys replaces an earlier one.
    """
    merged: dict[tuple[str, ...], IndexModel] = {}

    def add(model: IndexModel) -> None:
        merged[tuple(sorted(model.document["key"]))] = model

    for name, model_field in document.model_fields.items():
        attributes = get_index_attributes(model_field)
        if attributes is not None:
            direction, options = attributes
            add(IndexModel([(model_field.alias or name, direction)], **options))
    settings = getattr(document, "Settings", None)
    owners = [document]
    if getattr(settings, "merge_indexes", False):
        owners = [
            owner for owner in reversed(document.__mro__) if issubclass(owner, Document) and owner is not Document
        ]
    for owner in owners:
        for entry in getattr(getattr(owner, "Settings", None), "indexes", None) or ():
            add(entry if isinstance(entry, IndexModel) else IndexModel(entry))
    return list(merged.values())


def indexed_keys(document: type[Document]) -> frozenset[str]:
    """The stored keys that lead an index of ``document``'s collection (``FieldInfo.indexed``).

    ``_id``, and the first key of each ascending or descending index that is neither partial nor
    sparse (a text, hashed or geospatial index serves no range nor ordering; a partial or sparse one
    does not hold every document). Indexes the collection has but the class does not declare are not
    seen.
    """
    leading = {"_id"}
    for model in _index_models(document):
        spec = model.document
        key, direction = next(iter(spec["key"].items()))
        if direction in {ASCENDING, DESCENDING} and "partialFilterExpression" not in spec and not spec.get("sparse"):
            leading.add(key)
    return frozenset(leading)


def _describe(document: type[Document]) -> tuple[dict[str, FieldInfo], dict[str, str], dict[str, Reference]]:
    fields: dict[str, FieldInfo] = {}
    keys: dict[str, str] = {}
    references: dict[str, Reference] = {}
    for name, model_field in document.model_fields.items():
        reference = _reference(name, model_field, document)
        if reference is not None:
            references[name] = reference
            continue
        if name == "revision_id" or value_type(model_field.annotation) is None:
            continue
        info = field_info(name, model_field.annotation)
        fields[name] = replace(info, nullable=False) if name == "id" else info
        keys[name] = "_id" if name == "id" else (model_field.alias or name)
    for name, reference in references.items():
        if reference.kind != "link":
            continue
        key_field = f"{name}_id"
        if key_field in fields:
            msg = f"{document.__name__}: field {key_field!r} clashes with the identifier alias of the link {name!r}"
            raise ConfigurationError(msg)
        target_id = reference.target.model_fields["id"].annotation
        nullable = _unwrap(document.model_fields[name].annotation)[1]
        fields[key_field] = replace(field_info(key_field, target_id), nullable=nullable)
        keys[key_field] = f"{reference.key}.$id"
    leading = indexed_keys(document)
    fields = {name: replace(info, indexed=keys[name] in leading) for name, info in fields.items()}
    return fields, keys, references


class Documents:
    """Every document class reachable from a listed one through its links.

    Args:
        root: The listed document class.

    Raises:
        ConfigurationError: A link cannot be resolved, a ``BackLink`` lacks its original field,
            or a ``<link>_id`` field clashes with a link's identifier alias.
    """

    def __init__(self, root: type[Document]) -> None:
        self.root = root
        self.infos: dict[type[Document], DocumentInfo] = {}
        queue: deque[type[Document]] = deque([root])
        while queue:
            document = queue.popleft()
            if document in self.infos:
                continue
            fields, keys, references = _describe(document)
            relations = {
                name: RelationInfo(
                    name,
                    reference.target.__name__,
                    to_many=reference.to_many,
                    key_field=f"{name}_id" if reference.kind == "link" else None,
                )
                for name, reference in references.items()
            }
            entity = EntityInfo(document.__name__, fields, relations, ("id",))
            self.infos[document] = DocumentInfo(document, entity, keys, references)
            queue.extend(reference.target for reference in references.values())

    def graph(self) -> ModelGraph:
        """The ``ModelGraph`` of the listed document class."""
        entities = {info.entity.name: info.entity for info in self.infos.values()}
        return ModelGraph(self.root.__name__, entities)

    def info(self, document: type[Document]) -> DocumentInfo:
        """The description of one reachable document class."""
        return self.infos[document]
