"""Query shapes: a query with its field values left out, so that statements are built once per shape.

Lists of one resource differ mostly in their values: ``?page=3`` and ``?page=4``, ``?year=2013``
and ``?year=2014``. ``shape_of`` splits a ``ListQuery`` into its *shape* (the query with each such
value replaced by a ``Slot``) and the values by slot name; a dialect compiles a ``Slot`` to a named
bind parameter, so the statements compiled from the shape run for every query of that shape with
its own values (``Shapes`` keeps them).

Only values that reach the store as bound parameters are left out: the values of the operators
whose value is of the field's own type (``Element.FIELD``: ``eq``, ``in``, ``between``...), the
keyset's ordering values, and the page's offset. Everything else stays in the shape, compared and
hashed: operators, paths, the combination, the search text and patterns (the dialects rewrite them
into LIKE or GLOB text), the values of a date part compiled as a range (``date``, ``year``: the
compiler binds the range's ends, not the value), the ``isnull`` flag, None and booleans, the page
size, whether the page is a deferred join, and the row policies whole, values included. A value the
shape keeps can never be served from another query's statements, and a slot never reaches the SQL
text: without its value the statement does not run.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from litestar_listing.backends.relational.compiler import DEFERRED_OFFSET
from litestar_listing.core.operators import Element
from litestar_listing.core.query import Filter, ListQuery, RawFilter, Window

__all__ = ("OFFSET", "SHAPES_KEPT", "Shapes", "Slot", "shape_of")

OFFSET = "_listing_offset"
"""The name of the bound value of a shape's page offset."""

_PREFIX = "_listing_"

SHAPES_KEPT = 32
"""How many shapes a ``Shapes`` keeps, the least recently used dropped first."""


@dataclass(frozen=True, slots=True)
class Slot:
    """A value left out of a query's shape, bound as the parameter ``name`` when a statement runs.

    Attributes:
        name: The bind parameter's name (``_listing_<n>``, numbered in the query's order).
        kind: The value's Python type, part of the shape: a dialect may type the parameter by it
            (a ``Decimal`` binds as a plain NUMERIC; docs: design, "Coercion").
    """

    name: str
    kind: type


def shape_of(query: ListQuery) -> tuple[ListQuery, dict[str, object]]:
    """``query``'s shape, and its left-out values by slot name (``OFFSET`` included).

    The shape's window keeps the page size and whether the page is a deferred join (offset
    ``DEFERRED_OFFSET`` and beyond): its page number stands for every page on the same side.
    Compile it with ``offset=Slot(OFFSET, int)`` (``RelationalCompiler.compile``).
    """
    values: dict[str, object] = {}

    def slot(value: object) -> object:
        if value is None or isinstance(value, bool):
            return value
        name = f"{_PREFIX}{len(values)}"
        values[name] = value
        return Slot(name, type(value))

    def bound(item: Filter) -> Filter:
        if item.operator.kind.element is not Element.FIELD or (item.part is not None and item.part.ranged):
            return item
        value = tuple(slot(part) for part in item.value) if isinstance(item.value, tuple) else slot(item.value)
        return replace(item, value=value)

    def client(item: Filter | RawFilter) -> Filter | RawFilter:
        return item if isinstance(item, RawFilter) else bound(item)

    window = query.window
    deferred_page = -(-DEFERRED_OFFSET // window.count) + 1  # the first page a deferred join serves
    shape = replace(
        query,
        filters=tuple(client(item) for item in query.filters),
        forced_filters=tuple(bound(item) for item in query.forced_filters),
        after=None if query.after is None else tuple(slot(value) for value in query.after),
        window=Window(page=1 if window.offset < DEFERRED_OFFSET else deferred_page, count=window.count),
    )
    values[OFFSET] = window.offset
    return shape, values


Built = TypeVar("Built")


class Shapes(Generic[Built]):
    """What was built for each shape (statements), the ``SHAPES_KEPT`` most recently used.

    Used from the event loop's thread only.
    """

    def __init__(self, kept: int = SHAPES_KEPT) -> None:
        self._kept = kept
        self._built: OrderedDict[Hashable, Built] = OrderedDict()

    def get(self, key: Hashable, build: Callable[[], Built]) -> Built:
        """What ``build()`` made for ``key``: kept from an earlier call, or made now and kept.

        A key that cannot be hashed (a policy value of an unhashable type) is built each time.
        """
        try:
            built = self._built.get(key)
        except TypeError:
            return build()
        if built is not None:
            self._built.move_to_end(key)
            return built
        built = self._built[key] = build()
        if len(self._built) > self._kept:
            self._built.popitem(last=False)
        return built

    def __len__(self) -> int:
        return len(self._built)
