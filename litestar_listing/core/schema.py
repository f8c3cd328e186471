"""The resource's field map: which paths exist, their types and relations, and what is exposed.

Backends describe their models as a ``ModelGraph``; ``FieldMap.build`` checks a resource's exposure
policy against it once, at application start (docs: design, "Exposure").
"""

from __future__ import annotations

import builtins
import datetime as dt
import enum
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.fields import LOOKUP_SEP, FieldPath, JsonKey, ValueType
from litestar_listing.core.names import NameIndex
from litestar_listing.core.operators import OPERATORS
from litestar_listing.core.parts import PARTS, Part, PartOf
from litestar_listing.core.query import FilterSyntax, OrderTerm

__all__ = (
    "ALL_FIELDS",
    "EntityInfo",
    "ExposedField",
    "FieldInfo",
    "FieldMap",
    "ModelGraph",
    "RelationInfo",
    "ValueType",
    "closest",
)

ALL_FIELDS = "*"
"""In an exposure list, every non-private column of the model (``"*"``) or of a relation (``"airline__*"``)."""


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """One column (or computed value) of a model.

    Attributes:
        name: The attribute name exposed to clients.
        type: Its value type.
        nullable: Whether it may hold NULL.
        enum: For ``ValueType.ENUM``, the Python enum whose values are accepted.
        bits: For ``ValueType.INTEGER``, the storage width (16, 32 or 64); wider values are a 400.
        bounds: For ``ValueType.INTEGER``, the smallest and largest value when narrower than ``bits``
            allows (a date part's, ``core.parts``); values outside are a 400.
        many: A list of values of ``type`` (a JSON key declared as a list): a filter matches when
            some element does, and the list operators apply (``contains``).
        coerce: For ``ValueType.IDENTIFIER``, text -> value; raises ``ValueError`` on bad text.
        timezone: For ``ValueType.DATETIME``, whether the column stores an offset; naive columns
            receive the value converted to UTC without an offset.
        private: Never filtered, searched, ordered on nor listed, through any path.
        computed: Not a column but an expression the resource maps (docs: computed).
        indexed: The store has an ordered index whose leading column (or key) is this field, as the
            model declares it, so an equality or range filter or an ordering on the field alone can
            be served by an index: a primary key's first column, a unique or indexed column, the
            first column of a declared index or unique constraint. Partial, sparse and non-ordered
            (hash, text) indexes do not count. Never set on a computed value.
        reads: For a computed value built per request (``backends.base.Computed``), the names of
            the models whose rows it reads under their row policies.
        expected: What a valid value looks like, for error messages and OpenAPI (e.g. "a
            24-character hexadecimal ObjectId"); empty means the type's own description.
    """

    name: str
    type: ValueType
    nullable: bool = True
    enum: builtins.type[enum.Enum] | None = None
    bits: int = 64
    bounds: tuple[int, int] | None = None
    many: bool = False
    coerce: Callable[[str], object] | None = None
    timezone: bool = True
    private: bool = False
    computed: bool = False
    indexed: bool = False
    expected: str = ""
    reads: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RelationInfo:
    """A relation from one model to another.

    Attributes:
        name: The relation attribute, as used in paths (``airline`` in ``airline__name``).
        target: The name of the target entity in the ``ModelGraph``.
        to_many: True for one-to-many and many-to-many relations.
        key_field: For a to-one reference, the field of the source entity holding the referenced
            record's identifier (``owner_id``): document-store filters accept the relation's own
            name as an alias of it (docs: query language, "Document-store resources").
    """

    name: str
    target: str
    to_many: bool = False
    key_field: str | None = None


@dataclass(frozen=True, slots=True)
class EntityInfo:
    """A model: its fields, its relations and its primary key.

    Attributes:
        name: A name unique within the graph (the model's class name).
        fields: Fields by attribute name.
        relations: Relations by attribute name.
        pk: The primary-key field names, in order.
    """

    name: str
    fields: Mapping[str, FieldInfo]
    relations: Mapping[str, RelationInfo]
    pk: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModelGraph:
    """The listed model and every model reachable from it.

    Attributes:
        root: The name of the listed entity.
        entities: Every entity by name.
    """

    root: str
    entities: Mapping[str, EntityInfo]

    @property
    def root_entity(self) -> EntityInfo:
        """The listed entity."""
        return self.entities[self.root]

    def including(self, others: Iterable[ModelGraph]) -> ModelGraph:
        """This graph with the entities of ``others`` added (those of this graph win).

        For the models a computed value reads without a relation leading there
        (``backends.base.Computed``): their row policies are resolved with the listed model's.
        """
        entities = dict(self.entities)
        for other in others:
            for name, entity in other.entities.items():
                entities.setdefault(name, entity)
        return self if len(entities) == len(self.entities) else ModelGraph(self.root, entities)


@dataclass(frozen=True, slots=True)
class ExposedField:
    """A path a client may use, resolved against the graph.

    Attributes:
        path: The path.
        field: The field at its end.
        to_many: True when the path crosses a to-many relation (filters and search use EXISTS).
        hops: The relations crossed, in order.
        part: For ``<path>__<part>``, the part of the date or datetime at ``path`` that a filter
            compares; ``field`` then describes the part's values (docs: query language, "Parts of dates").
    """

    path: FieldPath
    field: FieldInfo
    to_many: bool
    hops: tuple[RelationInfo, ...] = ()
    part: PartOf | None = None

    @property
    def name(self) -> str:
        """The name a client writes, e.g. ``airline__name`` or ``time_hour__month``."""
        return self.path.name if self.part is None else f"{self.path.name}{LOOKUP_SEP}{self.part.name}"

    def with_part(self, part: Part) -> ExposedField:
        """This date or datetime path's ``part``: its values typed as the part's (``core.parts``)."""
        info = self.field
        values = FieldInfo(
            f"{info.name}{LOOKUP_SEP}{part.name}",
            part.type,
            nullable=info.nullable,
            bounds=part.bounds,
            indexed=info.indexed and part.ranged,
        )
        text = self.path.key is not None  # a JSON key's date is ISO text
        return replace(self, field=values, part=PartOf(part, info.type, aware=info.timezone, text=text))


def closest(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """The allowed names closest to a misspelt ``name``, best first (for configuration errors).

    Requests use a ``NameIndex`` built once per resource instead of indexing ``candidates`` anew.
    """
    return NameIndex(candidates).closest(name, limit)


def _check_syntax(filterable: Mapping[str, ExposedField], syntax: FilterSyntax) -> None:
    """Refuse a filter path through a relation under the document-store rules, which filter own fields.

    (docs: query language, "Document-store resources")
    """
    if syntax is not FilterSyntax.DOCUMENT:
        return
    for name, exposed in filterable.items():
        if exposed.hops:
            msg = (
                f"filter path {name!r} crosses a relation; document-store resources filter the model's own "
                "fields and references only"
            )
            raise ConfigurationError(msg)


def _resolve(
    graph: ModelGraph, path: FieldPath, computed: Mapping[str, FieldInfo], *, private: bool = False
) -> ExposedField:
    if len(path.segments) == 1 and path.field in computed:
        return ExposedField(path, computed[path.field], to_many=False)
    entity = graph.root_entity
    hops: list[RelationInfo] = []
    for step in path.relations:
        relation = entity.relations.get(step)
        if relation is None:
            hint = closest(step, entity.relations)
            msg = f"{path.name!r}: {entity.name} has no relation {step!r}" + (f" (did you mean {hint})" if hint else "")
            raise ConfigurationError(msg)
        hops.append(relation)
        entity = graph.entities[relation.target]
    info = entity.fields.get(path.field)
    if info is None:
        hint = closest(path.field, entity.fields)
        msg = f"{path.name!r}: {entity.name} has no field {path.field!r}" + (f" (did you mean {hint})" if hint else "")
        raise ConfigurationError(msg)
    if info.private and not private:
        msg = f"{path.name!r}: {entity.name}.{path.field} is private and cannot be exposed"
        raise ConfigurationError(msg)
    if path.key is not None:  # a key of the JSON document: a field of the key's type
        info = FieldInfo(path.name, path.key.type, many=path.key.many)
    return ExposedField(path, info, to_many=any(hop.to_many for hop in hops), hops=tuple(hops))


JsonKeys = Mapping[str, Mapping[str, object]]
"""A resource's declared JSON keys: each JSON field's path -> its keys -> their types (``json_keys``)."""

_JSON_TYPES: Mapping[object, ValueType] = MappingProxyType(
    {
        str: ValueType.TEXT,
        int: ValueType.INTEGER,
        float: ValueType.FLOAT,
        bool: ValueType.BOOLEAN,
        dt.date: ValueType.DATE,
    }
)
_KEY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")


def json_keys_of(field: str, declared: Mapping[str, object], *, depth: int = 3) -> list[JsonKey]:
    """The keys of one JSON field a resource declares, e.g. ``{"seats": int, "dims": {"width": float}}``.

    Types: ``str``, ``int``, ``float``, ``bool``, ``datetime.date`` (``YYYY-MM-DD`` text), ``list[...]``
    of one of those, or a mapping of nested keys (docs: query language, "Keys of JSON documents").

    Raises:
        ConfigurationError: A key is not a plain name (letters, digits, single ``_``), is named
            like an operator, nests deeper than ``depth``, or has a type not listed above.
    """
    found: list[JsonKey] = []

    def walk(prefix: tuple[str, ...], keys: Mapping[str, object]) -> None:
        for name, kind in keys.items():
            keys_so_far = (*prefix, name)
            written = LOOKUP_SEP.join((field, *keys_so_far))
            if not _KEY_NAME.fullmatch(name) or name in OPERATORS:
                msg = f"JSON key {written!r}: a key is a name of letters, digits and single '_', not an operator"
                raise ConfigurationError(msg)
            if isinstance(kind, Mapping):
                if len(keys_so_far) >= depth:
                    msg = f"JSON key {written!r} nests deeper than {depth} keys"
                    raise ConfigurationError(msg)
                walk(keys_so_far, kind)
                continue
            many = typing.get_origin(kind) is list
            element = typing.get_args(kind)[0] if many and typing.get_args(kind) else kind
            value_type = _JSON_TYPES.get(element)
            if value_type is None:
                msg = f"JSON key {written!r}: {kind!r} is not str, int, float, bool, date, a list of one or a mapping"
                raise ConfigurationError(msg)
            found.append(JsonKey(keys_so_far, value_type, many=many))

    walk((), declared)
    return found


def _facetable(
    graph: ModelGraph,
    names: Sequence[str],
    keyed: Mapping[str, ExposedField],
    parts: Sequence[Part],
    max_depth: int,
) -> dict[str, ExposedField]:
    """The facet paths of ``names`` (``FieldMap.build``'s ``facet_fields``), resolved against ``graph``.

    Raises:
        ConfigurationError: A name is a wildcard, names no field, a private one, a computed value,
            a whole JSON field or no part of a date; or crosses more than ``max_depth`` relations.
    """
    found: dict[str, ExposedField] = {}
    for name in names:
        if name == ALL_FIELDS or name.endswith(LOOKUP_SEP + ALL_FIELDS):
            msg = "facet_fields takes explicit paths, not wildcards"
            raise ConfigurationError(msg)
        exposed = keyed.get(name)
        if exposed is None:
            head, _, last = name.rpartition(LOOKUP_SEP)
            part = next((each for each in parts if each.name == last), None)
            # A field or relation of the part's name wins over the part (docs: query language, "Parts of dates").
            if not head or part is None or _exists(graph, FieldPath.parse(name)):
                exposed = _resolve(graph, FieldPath.parse(name), {})
            else:
                dated = keyed.get(head) or _resolve(graph, FieldPath.parse(head), {})
                if not part.applies_to(dated.field.type) or (dated.path.key is not None and not part.ranged):
                    msg = f"facet path {name!r}: {part.name!r} is not a part of {head!r}"
                    raise ConfigurationError(msg)
                exposed = dated.with_part(part)
        if exposed.field.type is ValueType.JSON:
            msg = f"facet path {name!r} is a whole JSON field; declare its keys in json_keys and name one"
            raise ConfigurationError(msg)
        if len(exposed.path.relations) > max_depth:
            msg = f"facet path {name!r} crosses {len(exposed.path.relations)} relations; the limit is {max_depth}"
            raise ConfigurationError(msg)
        found[name] = exposed
    return found


def _exists(graph: ModelGraph, path: FieldPath) -> bool:
    """Whether ``path`` names a field through relations of ``graph`` (no hint is looked up)."""
    entity = graph.root_entity
    for step in path.relations:
        relation = entity.relations.get(step)
        if relation is None:
            return False
        entity = graph.entities[relation.target]
    return path.field in entity.fields


def _expand(graph: ModelGraph, patterns: Iterable[str], computed: Mapping[str, FieldInfo]) -> list[FieldPath]:
    paths: list[FieldPath] = []
    for pattern in patterns:
        segments = tuple(pattern.split(LOOKUP_SEP))
        if segments[-1] != ALL_FIELDS:
            paths.append(FieldPath(segments))
            continue
        entity = graph.root_entity
        for step in segments[:-1]:
            relation = entity.relations.get(step)
            if relation is None:
                msg = f"{pattern!r}: {entity.name} has no relation {step!r}"
                raise ConfigurationError(msg)
            entity = graph.entities[relation.target]
        paths.extend(FieldPath((*segments[:-1], name)) for name, info in entity.fields.items() if not info.private)
    return paths


@dataclass(frozen=True)
class FieldMap:
    """What clients of one resource may filter, order and search on; built once at start.

    Attributes:
        graph: The models behind the resource.
        filterable: Exposed filter paths by name.
        orderable: Exposed order paths by name, computed aliases included.
        searchable: The searchable paths, in declared order.
        default_order: The ordering when the client sends none.
        pk: The primary-key fields of the listed model: the last ordering terms.
        max_depth: The most relations a path may cross.
    """

    graph: ModelGraph
    filterable: Mapping[str, ExposedField]
    orderable: Mapping[str, ExposedField]
    searchable: tuple[ExposedField, ...]
    default_order: tuple[OrderTerm, ...]
    pk: tuple[FieldPath, ...]
    max_depth: int = 3
    computed: Mapping[str, FieldInfo] = field(default_factory=dict)
    facetable: Mapping[str, ExposedField] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        graph: ModelGraph,
        *,
        filter_fields: Sequence[str] = (ALL_FIELDS,),
        order_fields: Sequence[str] = (ALL_FIELDS,),
        search_fields: Sequence[str] = (),
        default_order: Sequence[str] = (),
        computed: Mapping[str, FieldInfo] | None = None,
        max_depth: int = 3,
        parts: Iterable[str] = (),
        json_keys: JsonKeys | None = None,
        syntax: FilterSyntax = FilterSyntax.RELATIONAL,
        facet_fields: Sequence[str] = (),
    ) -> FieldMap:
        """Resolve an exposure policy against ``graph``.

        Args:
            graph: The models.
            filter_fields: Paths (``"airline__name"``) and wildcards (``"*"``, ``"airline__*"``)
                clients may filter on.
            order_fields: The same for ``order_by``; to-many paths are not allowed.
            search_fields: The searchable text paths; wildcards are not allowed.
            default_order: Terms like ``"-time_hour"``; any existing, non-private to-one path or
                computed alias may be used, exposed or not.
            computed: Computed aliases the resource maps to expressions; they are orderable and
                nothing else (docs: computed).
            max_depth: The most relations a path may cross.
            parts: The date parts (``core.parts.PARTS``) the backend compiles: each filterable date
                or datetime path gains ``<path>__<part>`` for those that apply to it, unless a
                filterable path has that name (docs: query language, "Parts of dates").
            json_keys: The keys of JSON fields clients may filter, order and search on, by the JSON
                field's path (``{"specs": {"seats": int}}``; ``json_keys_of``). Each is filterable
                as ``<path>__<key>`` (a list key too), orderable unless a list or through a to-many
                relation, and searchable when text and named in ``search_fields``. The JSON fields
                themselves are neither (docs: query language, "Keys of JSON documents").
            facet_fields: The paths whose values a facet request counts (docs: facets): fields
                and relation paths (through to-many relations too), keys of the JSON fields in
                ``json_keys``, and ``<path>__<part>`` for a part in ``parts`` of a date or
                datetime path; no wildcard, no computed value, no whole JSON field.
            syntax: How the backend reads filter names. Under the document-store rules a filter names
                the model's own field (or a key of its own JSON field, or a part of its own date):
                a filter path through a relation is refused, and the keys of a JSON field reached
                through a relation are ordered and searched only (docs: query language,
                "Document-store resources").

        Returns:
            The resolved map.

        Raises:
            ConfigurationError: A path does not exist, is private or is too deep, a to-many path is
                used for ordering, a search path is not text, ``search_fields`` holds a wildcard
                (docs: design, "Exposure"), under the document-store rules a filter path crosses a
                relation, or a facet path is none of those ``facet_fields`` takes.
        """
        computed = dict(computed or {})
        entity = graph.root_entity

        def resolve_all(patterns: Sequence[str], what: str) -> dict[str, ExposedField]:
            resolved: dict[str, ExposedField] = {}
            for path in _expand(graph, patterns, {} if what == "filter" else computed):
                exposed = _resolve(graph, path, computed if what != "filter" else {})
                if len(path.relations) > max_depth:
                    msg = f"{what} path {path.name!r} crosses {len(path.relations)} relations; the limit is {max_depth}"
                    raise ConfigurationError(msg)
                if what == "order" and exposed.to_many:
                    msg = f"order path {path.name!r} crosses a to-many relation; only to-one paths can be ordered on"
                    raise ConfigurationError(msg)
                resolved[path.name] = exposed
            return resolved

        if any(LOOKUP_SEP + ALL_FIELDS in name or name == ALL_FIELDS for name in search_fields):
            msg = "search_fields takes explicit paths, not wildcards"
            raise ConfigurationError(msg)
        filterable = resolve_all(filter_fields, "filter")
        _check_syntax(filterable, syntax)
        keyed: dict[str, ExposedField] = {}
        for field_name, declared in (json_keys or {}).items():
            document = _resolve(graph, FieldPath.parse(field_name), {})
            if document.field.type is not ValueType.JSON:
                msg = f"json_keys: {field_name!r} is not a JSON field"
                raise ConfigurationError(msg)
            if len(document.path.relations) > max_depth:
                msg = f"json_keys: {field_name!r} crosses more than {max_depth} relations"
                raise ConfigurationError(msg)
            for key in json_keys_of(field_name, declared):
                exposed = _resolve(graph, FieldPath(document.path.segments, key), {})
                keyed[exposed.path.name] = exposed
        filterable = {name: exposed for name, exposed in filterable.items() if exposed.field.type is not ValueType.JSON}
        # Under the document-store rules, a key reached through a relation is ordered and searched only.
        filterable.update(
            (name, key) for name, key in keyed.items() if not (key.hops and syntax is FilterSyntax.DOCUMENT)
        )
        offered = [PARTS[name] for name in PARTS if name in set(parts)]
        for exposed in list(filterable.values()):
            # A JSON key's date is text: only the parts that are a range of it (``year``), of one value.
            in_document = exposed.path.key is not None
            for part in offered:
                if part.applies_to(exposed.field.type) and not (
                    in_document and (exposed.field.many or not part.ranged)
                ):
                    filterable.setdefault(f"{exposed.name}{LOOKUP_SEP}{part.name}", exposed.with_part(part))
        orderable = resolve_all([*order_fields, *computed], "order")
        orderable = {name: exposed for name, exposed in orderable.items() if exposed.field.type is not ValueType.JSON}
        orderable.update({name: key for name, key in keyed.items() if not (key.field.many or key.to_many)})
        searchable = resolve_all([name for name in search_fields if name not in keyed], "search")
        searchable = {name: keyed.get(name) or searchable[name] for name in search_fields}
        for exposed in searchable.values():
            if exposed.field.type is not ValueType.TEXT:
                msg = f"search path {exposed.path.name!r} is not a text field"
                raise ConfigurationError(msg)
        pk = tuple(FieldPath((name,)) for name in entity.pk)
        order_terms: list[OrderTerm] = []
        for term in default_order:
            path = FieldPath.parse(term.removeprefix("-"))
            exposed = _resolve(graph, path, computed)
            if exposed.to_many:
                msg = f"default order {term!r} crosses a to-many relation"
                raise ConfigurationError(msg)
            order_terms.append(OrderTerm(path, descending=term.startswith("-")))
        return cls(
            graph=graph,
            filterable=MappingProxyType(filterable),
            orderable=MappingProxyType(orderable),
            searchable=tuple(searchable.values()),
            default_order=tuple(order_terms),
            pk=pk,
            max_depth=max_depth,
            computed=MappingProxyType(computed),
            facetable=MappingProxyType(_facetable(graph, facet_fields, keyed, offered, max_depth)),
        )

    def field_at(self, path: FieldPath) -> ExposedField:
        """Resolve any existing path of the graph, exposed or not (for server-side filters).

        Raises:
            ConfigurationError: The path does not exist or ends in a private field.
        """
        return _resolve(self.graph, path, self.computed)

    def reached(self, path: FieldPath) -> ExposedField:
        """Resolve a path a parsed query holds: exposed, or the resource's own (a private primary key).

        The primary key ends every ordering (``with_pk``) even when it is private, and the default
        order may name fields no client may: the cost of a list (``core.cost``) prices them all.

        Raises:
            ConfigurationError: The path does not exist.
        """
        return _resolve(self.graph, path, self.computed, private=True)

    @cached_property
    def _visible_to_many(self) -> frozenset[tuple[str, ...]]:
        # The to-many relations a client already reaches through a filter or search path, as path
        # prefixes (``("tracks",)``, ``("album", "tracks")``): naming them in an error leaks nothing.
        prefixes: set[tuple[str, ...]] = set()
        for exposed in (*self.filterable.values(), *self.searchable):
            for depth, hop in enumerate(exposed.hops, start=1):
                if hop.to_many:
                    prefixes.add(exposed.path.segments[:depth])
                    break
        return frozenset(prefixes)

    def to_many_prefix(self, name: str) -> str | None:
        """The to-many relation that the path ``name`` crosses, if clients may already filter or search through it.

        Ordering on such a path is refused with this reason (docs: design, "Ordering"): a row has several
        related rows, so there is no one value to order it by. A relation that no exposed path
        crosses gives None, so the answer is the same as for a path that does not exist.

        Returns:
            The relation's path (``"tracks"``, ``"album__tracks"``), or None.
        """
        segments = tuple(name.split(LOOKUP_SEP))[:-1]
        for depth in range(1, len(segments) + 1):
            if segments[:depth] in self._visible_to_many:
                return LOOKUP_SEP.join(segments[:depth])
        return None

    def with_pk(self, order: Sequence[OrderTerm]) -> tuple[OrderTerm, ...]:
        """``order`` with the primary key appended unless it is already there (docs: design, "Ordering")."""
        named = {term.path for term in order}
        return (*order, *(OrderTerm(path) for path in self.pk if path not in named))
