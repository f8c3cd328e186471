"""The query description that parsing produces and every backend compiles.

All nodes are frozen and slotted: a ``ListQuery`` is a value, safe to cache, hash and share.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from litestar_listing.core.fields import LOOKUP_SEP, FieldPath

if TYPE_CHECKING:
    from litestar_listing.core.operators import Operator
    from litestar_listing.core.parts import PartOf

__all__ = (
    "LOOKUP_SEP",
    "Combine",
    "FieldPath",
    "Filter",
    "FilterSyntax",
    "ListQuery",
    "OrderTerm",
    "Policy",
    "RawFilter",
    "Search",
    "Window",
    "load_tree",
)


class Combine(str, enum.Enum):
    """How a resource combines the client's filters (docs: query language, "Filters and operators"); fixed by it."""

    AND = "and"
    OR = "or"


class FilterSyntax(str, enum.Enum):
    """How filter parameter names are read; fixed by the backend's kind of store.

    ``RELATIONAL``: ``path[__operator]`` with relation paths and operator suffixes (docs: query language,
    "Filters and operators"; query language, "Relation paths").
    ``DOCUMENT``: own fields and reference aliases by equality only, raw keys with ``.``/``$``
    when allowlisted, unknown keys ignored unless the resource opts into a 400 (docs: query language,
    "Document-store resources").
    """

    RELATIONAL = "relational"
    DOCUMENT = "document"


def load_tree(paths: Iterable[str]) -> dict[str, Any]:
    """Nest relation paths: ``("airline", "plane__model")`` -> ``{"airline": {}, "plane": {"model": {}}}``."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for step in path.split(LOOKUP_SEP):
            node = node.setdefault(step, {})
    return tree


@dataclass(frozen=True, slots=True)
class Filter:
    """One comparison of a field with a coerced value.

    Attributes:
        path: The compared field.
        operator: The operator, from the registry (``core/operators.py``).
        value: The coerced value: a scalar for single-valued operators, a tuple of scalars for
            ``in`` and ``nin``, a ``bool`` for ``isnull``, a ``LikePattern`` (``core/text.py``) for ``like``.
        key: The parameter name the client sent, for error messages and forced-filter matching.
        part: The part of the date or datetime at ``path`` that is compared instead of the whole
            value (``time_hour__month``), or None; ``value`` is then of the part's type (docs:
            query language, "Parts of dates").
    """

    path: FieldPath
    operator: Operator
    value: object
    key: str = ""
    part: PartOf | None = None

    @property
    def name(self) -> str:
        """What the filter compares, as a client names it: ``airline__name``, ``time_hour__month``."""
        return self.path.name if self.part is None else f"{self.path.name}{LOOKUP_SEP}{self.part.name}"

    @property
    def matches_null(self) -> bool:
        """Whether a NULL value satisfies this filter: ``ne``, ``nin`` and ``isnull=true`` (docs: design, "NULL").

        A filter that NULL does not satisfy matches no row whose related row is missing, so a
        backend may test a relation path's rows alone (a semi-join) instead of joining them.
        """
        return self.operator.matches_null or (self.operator.name == "isnull" and self.value is True)


@dataclass(frozen=True, slots=True)
class RawFilter:
    """A raw store filter a document-store resource allowlists (docs: query language, "Document-store resources").

    The key is passed to the store unchanged; the values are the client's text, unconverted.

    Attributes:
        key: The store's own key, e.g. ``meta.color``; always contains ``.`` or ``$`` and never
            names a top-level operator (checked when the resource is built).
        values: One value for equality, several (a repeated parameter) for membership.
    """

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Search:
    """Case-insensitive substring search over several fields, combined with OR (docs: query language, "Search").

    Attributes:
        text: The literal text to find (wildcards in it are not special).
        paths: The resource's searchable fields.
    """

    text: str
    paths: tuple[FieldPath, ...]


@dataclass(frozen=True, slots=True)
class OrderTerm:
    """One ordering term: ascending unless ``descending``; NULLs always sort last (docs: query language, "Ordering").

    Attributes:
        path: A field, a to-one relation path, or a computed alias that the resource maps.
        descending: True for a ``-`` prefix.
    """

    path: FieldPath
    descending: bool = False


@dataclass(frozen=True, slots=True)
class Policy:
    """The rows of one model a request may reach: a row policy resolved for one request.

    A policy applies wherever rows of its model are reached (docs: design, "Row policies"; scoping,
    "Row policies"): the listed rows, the page and the total when the model is the listed one; the
    related row of a to-one path, which outside the policy behaves exactly as a missing one (a filter
    on it matches as on NULL, so only ``isnull=true``, ``ne`` and ``nin`` match; it sorts as NULL; it
    loads as null); the rows a to-many path's semi-join sees;
    eager-loaded rows; the rows a computed value reads.

    Attributes:
        entity: The model's name in the ``ModelGraph`` (its class name).
        filters: Conditions over the model's own fields (single-segment paths), ANDed; none with
            ``visible`` and no ``through`` means every row.
        visible: False when no row of the model may be reached (e.g. an anonymous request under a
            policy that denies anonymous users); ``filters`` and ``through`` are then ignored.
        through: To-one relations of the model whose related row must exist and be inside its own
            model's policy (the ``Policy`` of that model in the same ``ListQuery.policies``), ANDed
            with ``filters``: the policy the model inherits from a parent row, e.g. an invoice visible
            when its customer is (docs: scoping, "Policies that follow relations").
    """

    entity: str
    filters: tuple[Filter, ...] = ()
    visible: bool = True
    through: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Window:
    """The page of the result to return (docs: query language, "The envelope and pagination").

    Attributes:
        page: 1-based page number.
        count: Page size in items.
    """

    page: int = 1
    count: int = 10

    @property
    def offset(self) -> int:
        """Number of items skipped before the page: ``(page - 1) * count``."""
        return (self.page - 1) * self.count


@dataclass(frozen=True, slots=True)
class ListQuery:
    """Everything a backend needs to produce one page and its total.

    The backend evaluates ``forced_filters AND (filters combined by combine) AND search``,
    orders by ``order`` (which always ends with the primary key) and cuts ``window``.

    Attributes:
        filters: The client's filters; ``RawFilter`` only for document stores.
        combine: How ``filters`` combine with each other.
        search: The search, if the client sent one.
        order: The ordering terms, the primary-key tie-breaker last (docs: design, "Ordering").
        window: The page.
        forced_filters: Server-side filters, always ANDed outside ``filters`` (docs: query language,
            "Forced filters").
        after: Keyset continuation (opt-in per resource; docs: extensions, "Keyset continuation"): the
            ordering values of the previous page's last item, one per term of ``order``. The page is the
            ``window.count`` items that sort after them; ``window.offset`` is not used to skip rows.
        policies: The row policies of the request, at most one per model (``Policy``): the listed
            model's is ANDed like a forced filter, the others apply on every relation path and
            eager load that reaches their model.
    """

    filters: tuple[Filter | RawFilter, ...] = ()
    combine: Combine = Combine.AND
    search: Search | None = None
    order: tuple[OrderTerm, ...] = ()
    window: Window = field(default_factory=Window)
    forced_filters: tuple[Filter, ...] = ()
    after: tuple[object, ...] | None = None
    policies: tuple[Policy, ...] = ()

    def policy(self, entity: str) -> Policy | None:
        """The policy of model ``entity``, or None when its rows are not restricted."""
        for policy in self.policies:
            if policy.entity == entity:
                return policy
        return None

    def rows_before(self) -> int | None:
        """How many rows sort before the page, if the server knows it without counting.

        ``window.offset`` for a page asked by number; None after a cursor, whose page number the
        client wrote: no number of the envelope comes from the client (docs: design, "Totals").
        """
        return self.window.offset if self.after is None else None

    def total_from_page(self, rows: int) -> int | None:
        """The total a page of ``rows`` items proves without counting, or None when it must be counted.

        A partial page is the last one, and an empty first page means an empty list: the total
        is the rows before the page plus its own. Never after a cursor (``rows_before``).
        """
        before = self.rows_before()
        if before is None or not ((rows and rows < self.window.count) or (not rows and self.window.page == 1)):
            return None
        return before + rows
