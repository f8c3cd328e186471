"""Hypothesis strategies for list query strings, built from a resource's field map and its data.

Nothing here names a field: the paths, their types and operators come from the ``FieldMap``, and the
values mostly from the rows themselves (so that filters find something), plus spelling variants,
neighbours and trap strings (``%``, ``_``, ``\\``, quotes, accents, case pairs, empty text).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from hypothesis import strategies as st

from litestar_listing.core.coercion import CODECS
from litestar_listing.core.operators import OPERATORS, Element, Operator
from litestar_listing.core.parsing import MAX_OFFSET
from litestar_listing.core.schema import ExposedField, FieldInfo, FieldMap, ValueType
from litestar_listing.core.text import fold_case

__all__ = ("LIKE_TRAPS", "TRAPS", "Domain", "query_strings")

T = TypeVar("T")

TRAPS: tuple[str, ...] = (
    "",
    " ",
    "%",
    "_",
    "\\",
    "%_",
    "50%",
    "_off",
    "e_c",
    "\\s",
    "C:\\",
    "'",
    "O'B",
    "'s",
    '"',
    '"hi"',
    "Á",
    "á",
    "ÁLBUM",
    "album",
    "ß",
    "SS",
    "STRASSE",
    "straße",
    "Ω",
    "ω",
    "ΩΜΈΓΑ",
    "ü",
    "Ü",
    "e\u0301",
    "İ",
    "ς",
    "Σ",
    ",",
    "a,b",
)
"""Text that wildcards, escaping, quoting or case folding could get wrong."""

LIKE_TRAPS: tuple[str, ...] = (
    "%",
    "_",
    "%%",
    "%\\%%",
    "%\\_%",
    "%\\\\%",
    "\\%",
    "%_%",
    "_%_",
    "%\\%",
    "%ß%",
    "%Ω%",
    "%'%",
    '%"%',
    "%\\a%",
    "",
    "ÁLBUM",
    "_lbum",
    "%e%",
    "%E%",
)
"""LIKE patterns with wildcards and escapes in awkward places."""

FLAGS: tuple[str, ...] = CODECS[ValueType.BOOLEAN].edges(FieldInfo("flag", ValueType.BOOLEAN))

_CASES: tuple[Callable[[str], str], ...] = (str, str.upper, str.lower, str.swapcase, str.title, fold_case)


@functools.cache
def one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws.

    ``sampled_from`` draws its items about evenly; ``integers(0, n) == 0`` would not do here, as
    hypothesis draws the smallest integer far more often than the others.
    """
    return st.sampled_from((False,) * (n - 1) + (True,))


def _at(row: Mapping[str, Any], path: str) -> tuple[object, ...]:
    """The values ``path`` reaches from ``row``, enum members as their values."""
    return tuple(getattr(value, "value", value) for value in _reach(row, path.split("__")))


def _values(row: Mapping[str, Any], exposed: ExposedField) -> tuple[object, ...]:
    """The values a filter on ``exposed`` compares in ``row``: its field's, a JSON key's, or their date part."""
    key = exposed.path.key
    if key is None:
        found = _at(row, exposed.path.name)
    else:  # the typed values of a JSON document's key (``JsonKey.values``), its dates as dates
        found = tuple(
            _date_of(value) if key.type is ValueType.DATE else value
            for document in _at(row, "__".join(exposed.path.segments))
            for value in key.values(document)
        )
        found = tuple(value for value in found if value is not None)
    part = exposed.part
    return found if part is None else tuple(part.extract(value) for value in found)  # type: ignore[arg-type]


def _date_of(text: object) -> dt.date | None:
    """A JSON document's ``YYYY-MM-DD`` text as a date; None when it names no day (``2024-02-30``)."""
    try:
        return dt.date.fromisoformat(str(text))
    except ValueError:
        return None


def _reach(value: object, segments: Sequence[str]) -> Iterator[object]:
    """Every non-null value at ``segments`` below ``value`` (nested dicts; lists for to-many)."""
    if value is None:
        return
    if isinstance(value, list):
        for item in value:
            yield from _reach(item, segments)
    elif not segments:
        yield value
    elif isinstance(value, Mapping):
        yield from _reach(value.get(segments[0]), segments[1:])


@dataclass(frozen=True)
class Domain:
    """What the strategies know about one resource.

    Attributes:
        field_map: The resource's exposure: filter, order and search paths and their types.
        values: Each filter and search path -> the distinct non-null values the rows hold there,
            in first-seen order (a stable order keeps the draws reproducible).
        rows: The rows the resource lists without filters; each query draws one as its anchor, whose
            values most filters compare with, so that ANDed filters still find a row.
        operators: Each value type, and whether a list of it -> the operators of ``OPERATORS`` that apply.
    """

    field_map: FieldMap
    values: Mapping[str, tuple[object, ...]]
    rows: tuple[Mapping[str, Any], ...]
    operators: Mapping[tuple[ValueType, bool], tuple[Operator, ...]]

    @classmethod
    def of(cls, field_map: FieldMap, rows: Sequence[Mapping[str, Any]]) -> Domain:
        """The domain of a resource whose rows (relations nested, as the memory backend takes them) are ``rows``."""
        named = {**{exposed.path.name: exposed for exposed in field_map.searchable}, **field_map.filterable}
        values = {
            name: tuple(dict.fromkeys(value for row in rows for value in _values(row, exposed)))
            for name, exposed in named.items()
        }
        operators = {
            (value_type, many): tuple(
                operator for operator in OPERATORS.values() if operator.applies_to(value_type, many=many)
            )
            for value_type in ValueType
            for many in (False, True)
        }
        return cls(field_map, values, tuple(rows), operators)

    @functools.cached_property
    def filter_paths(self) -> tuple[str, ...]:
        """The filterable path names, in the field map's order."""
        return tuple(self.field_map.filterable)

    @functools.cached_property
    def order_paths(self) -> tuple[str, ...]:
        """The orderable path names, computed aliases included."""
        return tuple(self.field_map.orderable)

    @functools.cached_property
    def texts(self) -> Mapping[str, tuple[str, ...]]:
        """``values`` as text."""
        return {path: tuple(str(value) for value in values) for path, values in self.values.items()}

    @functools.cached_property
    def search_values(self) -> tuple[str, ...]:
        """Every text the searchable paths hold."""
        return tuple(
            dict.fromkeys(
                str(value) for exposed in self.field_map.searchable for value in self.values[exposed.path.name]
            )
        )

    @functools.cached_property
    def junk(self) -> tuple[tuple[str, str], ...]:
        """Parameters the engine must reject (400), each alone enough to reject a query."""
        filterable = self.field_map.filterable
        numeric = next(name for name, exposed in filterable.items() if exposed.field.type is ValueType.INTEGER)
        text = next(name for name, exposed in filterable.items() if exposed.field.type is ValueType.TEXT)
        return (
            ("page", "0"),
            ("count", "0"),
            ("count", "101"),
            ("page", "two"),
            ("no_such_field", "1"),
            (f"{numeric}__like", "1%"),
            (numeric, "ten"),
            (f"{numeric}__gt", ""),
            (f"{text}__like", "abc\\"),
            (f"{text}__gt", "a\x00"),
            (f"{text}__startswith", "a"),  # drawn twice below: a repeated non-repeatable operator
            ("order_by", "no_such_field"),
            ("search", "nul\x00"),
        )


# ------------------------------------------------------------------------------------------ values


@functools.cache
def _index(size: int) -> st.SearchStrategy[int]:
    return st.sampled_from(range(size))


def pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    """One of ``options``, drawn about evenly.

    One cached strategy per length: building a strategy for every draw would take most of the time.
    """
    return options[draw(_index(len(options)))]


def spelling(draw: st.DrawFn, info: FieldInfo, value: object) -> str:
    """Query-string text that coerces to exactly ``value`` for a field of type ``info.type``."""
    return pick(draw, CODECS[info.type].spellings(info, value))


def neighbour(draw: st.DrawFn, info: FieldInfo, value: object) -> str:
    """Text for a value near ``value``: the next number, day or second, or a case or substring variant of text."""
    return pick(draw, CODECS[info.type].neighbours(info, value) or (fragment(draw, (str(value),)),))


def outsider(draw: st.DrawFn, info: FieldInfo) -> str:
    """A valid value that the data usually lacks: an extreme, zero, a trap string."""
    return pick(draw, CODECS[info.type].edges(info) or TRAPS)


def field_value(draw: st.DrawFn, domain: Domain, path: str, anchor: Mapping[str, Any]) -> str:
    """A value for a comparison on ``path``: mostly the anchor row's or another row's, sometimes near one or none."""
    info = domain.field_map.filterable[path].field
    source = pick(draw, ("anchor",) * 3 + ("data",) * 3 + ("near",) * 2 + ("outside",))
    pool = (source == "anchor" and _values(anchor, domain.field_map.filterable[path])) or domain.values[path]
    if not pool or source == "outside":
        return outsider(draw, info)
    value = pick(draw, pool)
    return neighbour(draw, info, value) if source == "near" else spelling(draw, info, value)


def _slice(draw: st.DrawFn, value: str) -> tuple[int, int]:
    # Small integers are drawn most often: starts near the beginning, ends near the end.
    start = draw(st.integers(0, len(value)))
    return start, len(value) - draw(st.integers(0, len(value) - start))


def fragment(draw: st.DrawFn, pool: Sequence[str]) -> str:
    """Text for ``search`` and the text operators: a whole value, a prefix, suffix or middle, in some case."""
    if not pool or draw(one_in(8)):
        return pick(draw, TRAPS)
    value = pick(draw, pool)
    start, end = _slice(draw, value)
    part = pick(draw, (value, value[:end], value[start:], value[start:end]))
    return pick(draw, _CASES)(part)


def _escape_like(char: str) -> str:
    return "\\" + char if char in "%_\\" else char


def like_pattern(draw: st.DrawFn, pool: Sequence[str]) -> str:
    """A LIKE pattern from a value: a slice with escaped literals, a wildcard or two, ``%`` at either end."""
    if not pool or draw(one_in(8)):
        return pick(draw, LIKE_TRAPS)
    value = pick(draw, pool)
    start, end = _slice(draw, value)
    chars = [_escape_like(char) for char in value[start:end]]
    if draw(st.booleans()) and chars:
        chars[pick(draw, range(len(chars)))] = pick(draw, ("_", "%", "\\" + value[start]))
    # Mostly a pattern that can match: a ``%`` where the slice cut the value.
    lead = "%" if start > 0 and not draw(one_in(5)) else pick(draw, ("", "%"))
    trail = "%" if end < len(value) and not draw(one_in(5)) else pick(draw, ("", "%"))
    pattern = lead + "".join(chars) + trail
    return pattern.upper() if draw(one_in(6)) else pattern


# ------------------------------------------------------------------------------------------ params


def filter_params(
    draw: st.DrawFn, domain: Domain, path: str, operator: Operator, anchor: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """The parameters of one filter; ``eq``, ``ne``, ``in`` and ``nin`` sometimes repeat."""
    key = path if operator.name == "eq" and draw(st.booleans()) else f"{path}__{operator.name}"
    kind = operator.kind
    if kind.element is Element.FLAG:
        return [(key, pick(draw, FLAGS))]
    own = tuple(str(value) for value in _at(anchor, path))
    texts = own if draw(st.booleans()) and own else domain.texts[path]
    if kind.element is Element.PATTERN:
        return [(key, like_pattern(draw, texts))]
    if kind.element is Element.TEXT:
        return [(key, fragment(draw, texts))]
    if kind.arity.count is None:
        # f__in=a,b and f__in=a,b&f__in=c (repetitions are a union).
        groups = range(pick(draw, (1, 1, 1, 2)))
        return [
            (key, ",".join(field_value(draw, domain, path, anchor) for _ in range(pick(draw, (1, 2, 3, 4)))))
            for _ in groups
        ]
    if not kind.arity.single:
        # f__between=low,high: drawn in any order, so about half are a 400 (low > high).
        return [(key, ",".join(field_value(draw, domain, path, anchor) for _ in range(kind.arity.count or 0)))]
    if operator.repeated_as is not None and draw(one_in(4)):
        # f=a&f=b (or f=a&f__eq=b) is IN; f__ne=a&f__ne=b is NOT IN.
        keys = (path, f"{path}__eq") if operator.name == "eq" else (key,)
        return [(pick(draw, keys), field_value(draw, domain, path, anchor)) for _ in range(pick(draw, (2, 3)))]
    return [(key, field_value(draw, domain, path, anchor))]


def order_by(draw: st.DrawFn, domain: Domain) -> str:
    """One to three distinct orderable paths (relation paths and computed aliases included), each maybe descending."""
    names = dict.fromkeys(pick(draw, domain.order_paths) for _ in range(pick(draw, (1, 1, 2, 2, 3))))
    return ",".join(pick(draw, ("", "-")) + name for name in names)


def window(draw: st.DrawFn, domain: Domain) -> list[tuple[str, str]]:
    """``count`` and ``page``, either may be absent.

    ``count`` is 1..100; ``page`` runs to one past the last page of the unfiltered rows, or is, rarely,
    the last page a 64-bit row offset allows.
    """
    params: list[tuple[str, str]] = []
    count = draw(st.integers(1, 100)) if draw(one_in(3)) else pick(draw, (None, 1, 2, 3, 5, 10, 20, 50, 100))
    if count is not None:
        params.append(("count", str(count)))
    last = -(-len(domain.rows) // (count or 10))
    pages = "far" if draw(one_in(40)) else pick(draw, ("absent", "first", "any"))
    if pages == "far":
        params.append(("page", str(MAX_OFFSET // (count or 10) + 1)))
    elif pages != "absent":
        params.append(("page", str(draw(st.integers(1, 3 if pages == "first" else last + 1)))))
    return params


@st.composite
def query_strings(draw: st.DrawFn, domain: Domain) -> str:
    """A whole query string: up to four filters, maybe a search and an ``order_by``, a window.

    About one in twenty-five also carries a parameter from ``Domain.junk``, which the engine must
    reject; the others are valid.
    """
    anchor = pick(draw, domain.rows)
    targets: dict[tuple[str, Operator], None] = {}
    for _ in range(pick(draw, (0, 1, 1, 2, 2, 3, 4))):
        path = pick(draw, domain.filter_paths)
        # One parameter group per path and operator: two ``gt`` on one path would be a 400.
        info = domain.field_map.filterable[path].field
        targets[path, pick(draw, domain.operators[info.type, info.many])] = None
    params: list[tuple[str, str]] = []
    for path, operator in targets:
        params += filter_params(draw, domain, path, operator, anchor)
    if draw(st.booleans()):
        searchable = [str(value) for exposed in domain.field_map.searchable for value in _at(anchor, exposed.path.name)]
        pool = searchable if draw(st.booleans()) and searchable else domain.search_values
        params.append(("search", fragment(draw, pool)))
    if draw(st.booleans()):
        params.append(("order_by", order_by(draw, domain)))
    params += window(draw, domain)
    if draw(one_in(25)):
        junk = pick(draw, domain.junk)
        params += [junk, junk] if junk[0].endswith("__startswith") else [junk]
    return urlencode(params)
