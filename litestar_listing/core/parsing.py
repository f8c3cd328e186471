"""Query-string multidict -> ``ListQuery``, by the rules of the query language (docs: query language).

``QueryParser.parse`` checks every parameter, collects every problem, then raises one
``InvalidQueryError`` listing them all.
"""

from __future__ import annotations

import datetime
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qsl, unquote

from litestar_listing.core.coercion import CoercionError, coerce, coerce_bool, coerce_text
from litestar_listing.core.cursor import CURSOR_PARAMETER, CursorError, CursorToken, fingerprint
from litestar_listing.core.errors import InvalidQueryError, ParameterError
from litestar_listing.core.facets import Facet, FacetMode, FacetQuery
from litestar_listing.core.fields import FILTERS, ValueType, filter_group, filter_object_entry
from litestar_listing.core.names import NameIndex
from litestar_listing.core.operators import OPERATORS, Element, Operator, ValueKind
from litestar_listing.core.query import (
    LOOKUP_SEP,
    Combine,
    FieldPath,
    Filter,
    FilterSyntax,
    ListQuery,
    OrderTerm,
    RawFilter,
    Search,
    Window,
)
from litestar_listing.core.schema import ExposedField, FieldInfo, FieldMap
from litestar_listing.core.text import parse_like

__all__ = (
    "FACET_RESERVED",
    "MAX_OFFSET",
    "PROBLEMS_SIZE",
    "RESERVED",
    "Limits",
    "QueryParser",
    "QueryString",
    "equality_filter",
    "forced_filter",
    "is_raw_key",
)

RESERVED = ("page", "count", "search", "order_by")
"""The reserved query parameters; every other name is a filter (docs: query language, "Reserved parameters")."""

FACET_RESERVED = ("facet", "facet_limit", "facet_mode")
"""The parameters a facet request reads besides ``search`` and the filters (docs: facets, "The request")."""

MAX_OFFSET = 2**63 - 1
"""The largest row offset a page may reach: a signed 64-bit integer (docs: design, "Bounds and limits")."""

PROBLEMS_SIZE = 12 * 1024
"""Bytes the listed problems of one 400 may take in its JSON body (keys, messages and the JSON
around them), whatever the characters of the names: with the summary entry and the envelope,
the body stays under 16 KiB (docs: design, "Bounds and limits")."""

_POSITIVE = re.compile(r"\+?[0-9]{1,20}")
_SHOWN_NAME = 40
"""Characters shown of a parameter name longer than ``Limits.max_name_length``."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one list request; past any of them is a 400 (docs: query language, "Limits").

    Attributes:
        default_count: Page size when ``count`` is absent.
        max_count: Largest ``count``.
        max_in_values: Most values in one ``in``/``nin`` filter, repetitions included.
        max_search_length: Most characters of ``search`` text.
        max_pattern_length: Most characters of the value of a text operator (``like``, ``ilike``,
            ``(i)startswith``, ``(i)endswith``): a megabyte pattern costs every row it is tried on.
        max_filters: Most filter parameters in one request, repetitions included.
        max_order_terms: Most comma-separated terms of ``order_by``, counted before any is read.
        max_parameters: Most parameters (``name=value`` pairs, repetitions, reserved and unknown
            names included) read from one request; the rest are not read, and one problem says how
            many there were. Raise it with ``max_filters``.
        max_query_length: Most characters of the raw query string read (8 KiB, the request-line
            limit of most HTTP servers); the parameters past it are not read (one problem counts
            them), so percent-decoding is bounded too. An ``in`` list of 500 long values needs more.
        max_name_length: Most characters of a parameter name; a longer one is a problem of its
            own, shown by its first characters only.
        max_suggestions: Most distinct misspelt names of one request that get a "did you mean"
            hint (each looked up once); the others get the plain message.
        max_problems: Most problems a 400 lists, followed by one entry counting the rest. The
            entries listed also stay within ``PROBLEMS_SIZE`` bytes, so that the body of any 400
            stays under 16 KiB.
        max_facets: Most facets one facet request asks for (docs: facets).
        default_facet_limit: Values answered per facet when ``facet_limit`` is absent.
        max_facet_limit: Largest ``facet_limit``.
    """

    default_count: int = 10
    max_count: int = 100
    max_in_values: int = 500
    max_search_length: int = 256
    max_pattern_length: int = 256
    max_filters: int = 50
    max_order_terms: int = 8
    max_parameters: int = 64
    max_query_length: int = 8 * 1024
    max_name_length: int = 128
    max_suggestions: int = 3
    max_problems: int = 20
    max_facets: int = 8
    default_facet_limit: int = 10
    max_facet_limit: int = 100


@dataclass(frozen=True, slots=True)
class QueryString:
    """The parameters read from one request, within ``Limits.max_query_length`` and ``max_parameters``.

    Attributes:
        pairs: ``(name, value)`` pairs in request order, repetitions and blank values kept.
        unread: How many parameters were left unread (not decoded, not looked at).
        first_unread: The name of the first of them, as an error shows it.
    """

    pairs: tuple[tuple[str, str], ...]
    unread: int = 0
    first_unread: str = ""

    @classmethod
    def read(cls, raw: str, limits: Limits) -> QueryString:
        """Decode the head of a raw query string as ``urllib.parse.parse_qsl`` does (UTF-8, ``+`` is a space).

        Only the first ``max_query_length`` characters, and in them the first ``max_parameters``
        parameters, are decoded; the rest are only counted, without decoding.
        """
        head, rest = raw, ""
        if len(raw) > limits.max_query_length:
            # Cut before the parameter that crosses the limit: it is not read at all.
            cut = raw.rfind("&", 0, limits.max_query_length + 1)
            head, rest = (raw[:cut], raw[cut + 1 :]) if cut >= 0 else ("", raw)
        pieces = head.split("&", limits.max_parameters)
        if len(pieces) > limits.max_parameters:
            rest = pieces.pop() + ("&" + rest if rest else "")
        pairs = tuple(_decode_pairs(pieces))
        return cls._with_rest(pairs, rest.split("&"), limits)

    @classmethod
    def of(cls, params: Iterable[tuple[str, str]], limits: Limits) -> QueryString:
        """Pairs already decoded (``parse_query``, tests): the first ``max_parameters`` of them are read."""
        listed = list(params)
        read = tuple(listed[: limits.max_parameters])
        rest = listed[limits.max_parameters :]
        return cls(read, len(rest), _shown_name(rest[0][0], limits) if rest else "")

    @classmethod
    def _with_rest(cls, pairs: tuple[tuple[str, str], ...], rest: list[str], limits: Limits) -> QueryString:
        unread = len(rest) - rest.count("")
        if not unread:
            return cls(pairs)
        first = next(piece for piece in rest if piece)
        # Only this one name of the rest is decoded, and only as much of it as an error shows.
        prefix = first[: 3 * (limits.max_name_length + 1)]
        name, equals, _ = prefix.partition("=")
        decoded = parse_qsl(f"{name}=", keep_blank_values=True, errors="replace")
        shown = decoded[0][0] if decoded else name
        cut = not equals and len(first) > len(prefix)
        return cls(pairs, unread, shown[:_SHOWN_NAME] + "…" if cut else _shown_name(shown, limits))


_PLAIN_ESCAPED = re.compile(r"(?:[\x20-\x24\x26-\x5b\x5d-\x7e]|%[0-9A-Fa-f]{2})*")
"""Printable ASCII but backslash, with every ``%`` starting a valid escape: decodable in C below."""


def _decode_pairs(pieces: Iterable[str]) -> Iterable[tuple[str, str]]:
    r"""``parse_qsl(keep_blank_values=True, errors="replace")`` of the ``&``-separated ``pieces``.

    The same pairs, with the same CPU cost for every spelling: ``urllib.parse.unquote`` spends a
    Python step per escape, so 8 KiB of ``%01`` took about 1 ms of the event loop. A component
    made of printable ASCII and valid escapes is decoded by the codecs instead (``%XX`` read as
    ``\xXX`` by ``unicode_escape``, whose code points below 256 are the escaped bytes); anything
    else goes through ``unquote``, as before.
    """
    for piece in pieces:
        if not piece:
            continue
        name, _, value = piece.partition("=")
        yield _unquote(name.replace("+", " ")), _unquote(value.replace("+", " "))


def _unquote(text: str) -> str:
    if "%" not in text:
        return text
    if _PLAIN_ESCAPED.fullmatch(text) is None:
        return unquote(text, errors="replace")
    escaped = text.replace("%", "\\x").encode("ascii").decode("unicode_escape")
    return escaped.encode("latin-1").decode("utf-8", errors="replace")


def is_raw_key(key: str) -> bool:
    """Whether a filter name is a raw store key: it contains ``.`` or ``$``.

    Such keys reach a document store only when the resource allowlists them (docs: query language,
    "Document-store resources").
    """
    return "." in key or "$" in key


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


@dataclass(frozen=True)
class QueryParser:
    """Parses the query string of one resource's list endpoint.

    Attributes:
        field_map: What the resource exposes.
        combine: How the resource combines client filters.
        limits: Request bounds.
        ignore_unknown: Drop filters that are not exposed instead of answering 400 (the
            document-store default; relational resources opt in).
        syntax: How filter names are read: ``RELATIONAL`` (``path[__operator]``) or ``DOCUMENT``
            (own fields and reference aliases by equality, no operator suffixes, so ``name__eq`` is an
            unknown name; docs: query language, "Document-store resources").
        raw_keys: For ``DOCUMENT``, the raw store keys (containing ``.`` or ``$``) clients may
            send; they become ``RawFilter`` nodes. Any other raw key is an unknown name.
        keyset: Accept ``cursor`` (keyset continuation, ``core.cursor``) as a reserved parameter;
            without it ``cursor`` is a filter name like any other (docs: extensions).
        operators: The operators offered, by suffix (the backend's, ``backends.base.offered_operators``);
            a suffix not among them is read as part of the filter name. Must hold ``eq`` and the
            ``repeated_as`` of each.
    """

    field_map: FieldMap
    combine: Combine = Combine.AND
    limits: Limits = field(default_factory=Limits)
    ignore_unknown: bool = False
    syntax: FilterSyntax = FilterSyntax.RELATIONAL
    raw_keys: frozenset[str] = frozenset()
    keyset: bool = False
    operators: Mapping[str, Operator] = field(default_factory=lambda: OPERATORS)
    _filter_names: NameIndex = field(init=False, repr=False, compare=False)
    _order_names: NameIndex = field(init=False, repr=False, compare=False)
    _facet_names: NameIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The candidates of "did you mean" hints, indexed once per resource rather than per bad name.
        object.__setattr__(self, "_filter_names", NameIndex(self.field_map.filterable))
        object.__setattr__(self, "_order_names", NameIndex(self.field_map.orderable))
        object.__setattr__(self, "_facet_names", NameIndex(self.field_map.facetable))

    def parse(
        self, params: Iterable[tuple[str, str]] | QueryString, forced_filters: Sequence[Filter] = ()
    ) -> ListQuery:
        """Turn query parameters into a ``ListQuery``.

        Args:
            params: ``(name, value)`` pairs in request order, repetitions included, or a
                ``QueryString`` read from the raw query string; past ``limits.max_parameters``
                the pairs are not read.
            forced_filters: Server-side filters. A client filter whose parameter names the same
                field with equality is dropped; the forced filters are ANDed outside the client's
                filters (docs: query language, "Forced filters").

        Returns:
            The query, its order ending with the primary key.

        Raises:
            InvalidQueryError: With one ``ParameterError`` per bad parameter, at most
                ``limits.max_problems`` of them plus one counting the rest (docs: design, "Bounds and
                limits").

        The work done is bounded by ``limits`` whatever ``params`` holds: the parameters past
        ``max_parameters`` are only counted, ``order_by`` terms are counted before any is read,
        and at most ``max_suggestions`` names per request get a hint.
        """
        split = self._split(params, (*RESERVED, *((CURSOR_PARAMETER,) if self.keyset else ())), joined=("order_by",))
        errors, reserved = split.errors, split.reserved
        window = self._window(reserved, errors)
        search = self._search(reserved.get("search", ""), errors)
        order = self._order(reserved.get("order_by", ""), errors, split.hints)
        forced_keys = {item.path.name for item in forced_filters}
        filters = self._filters(split.filters, forced_keys, errors, split.hints)
        query = ListQuery(
            filters=tuple(filters),
            combine=self.combine,
            search=search,
            order=self.field_map.with_pk(order),
            window=window,
            forced_filters=tuple(forced_filters),
        )
        if CURSOR_PARAMETER in reserved and self.keyset and not errors:
            query = self._continue(query, reserved, errors)
        split.raise_errors(self.limits)
        return query

    def parse_facets(
        self, params: Iterable[tuple[str, str]] | QueryString, forced_filters: Sequence[Filter] = ()
    ) -> FacetQuery:
        """Turn the query parameters of a facet request into a ``FacetQuery`` (docs: facets, "The request").

        The list's own parameters are read as ``parse`` reads them: every filter and ``search``;
        ``page``, ``count``, ``order_by`` (and ``cursor``) change nothing, so a screen may send the
        list's query string unchanged. Besides them, ``facet`` (repeated or comma-separated, each
        a facetable name, at most ``limits.max_facets``), ``facet_limit`` (1 to
        ``limits.max_facet_limit``) and ``facet_mode`` (``disjunctive`` or ``conjunctive``).

        Raises:
            InvalidQueryError: Every bad parameter at once, as ``parse`` lists them; a request
                without ``facet`` too.
        """
        listed = (*RESERVED, *((CURSOR_PARAMETER,) if self.keyset else ()))
        split = self._split(params, (*listed, *FACET_RESERVED), joined=("order_by", "facet"))
        errors, reserved = split.errors, split.reserved
        search = self._search(reserved.get("search", ""), errors)
        facets = self._facets(reserved.get("facet", ""), errors, split.hints)
        limits = self.limits
        limit = _bounded_int(
            reserved.get("facet_limit"), "facet_limit", 1, limits.max_facet_limit, limits.default_facet_limit, errors
        )
        mode = FacetMode.DISJUNCTIVE
        if "facet_mode" in reserved:
            try:
                mode = FacetMode(reserved["facet_mode"])
            except ValueError:
                modes = " or ".join(repr(each.value) for each in FacetMode)
                errors.append(ParameterError("facet_mode", f"expected {modes}"))
        forced_keys = {item.path.name for item in forced_filters}
        filters = self._filters(split.filters, forced_keys, errors, split.hints)
        split.raise_errors(limits)
        query = ListQuery(
            filters=tuple(filters), combine=self.combine, search=search, forced_filters=tuple(forced_filters)
        )
        return FacetQuery(query, facets, limit or limits.default_facet_limit, mode)

    def _split(
        self, params: Iterable[tuple[str, str]] | QueryString, reserved_names: Sequence[str], *, joined: Sequence[str]
    ) -> _Split:
        """Sort the parameters read into the reserved ones (``reserved_names``) and the filters.

        A name of ``joined`` given again adds its value after a comma (a list of terms: the form
        OpenAPI's default array style gives, which generated clients send); any other reserved
        name given twice is a problem. Past ``limits.max_parameters`` the pairs are counted only.
        """
        limits = self.limits
        read = params if isinstance(params, QueryString) else QueryString.of(params, limits)
        split = _Split(_Hints(limits.max_suggestions))
        reserved, position, errors = split.reserved, split.position, split.errors
        for key, value in read.pairs:
            if key not in position:
                position[key] = len(position)
                if len(key) > limits.max_name_length:
                    shown = _shown_name(key, limits)
                    position.setdefault(shown, position[key])
                    message = f"is {len(key)} characters long; parameter names have at most {limits.max_name_length}"
                    errors.append(ParameterError(shown, message))
            if len(key) > limits.max_name_length:
                continue
            if key in joined and key in reserved:
                reserved[key] = f"{reserved[key]},{value}"
            elif key in reserved_names:
                if key in reserved:
                    errors.append(ParameterError(key, "must be given at most once"))
                reserved.setdefault(key, value)
            else:
                split.filters.append((key, value))

        if read.unread:
            unread = "was not read" if read.unread == 1 else f"and the {read.unread - 1} after it were not read"
            message = (
                f"{unread}: a request is read up to {limits.max_parameters} parameters and "
                f"{limits.max_query_length} characters of query string"
            )
            errors.append(ParameterError(read.first_unread, message))
        return split

    def _continue(self, query: ListQuery, reserved: dict[str, str], errors: list[ParameterError]) -> ListQuery:
        """``query`` continued after a cursor: its window and ``after`` values from the token."""
        try:
            token = CursorToken.decode(reserved[CURSOR_PARAMETER])
        except CursorError as error:
            errors.append(ParameterError(CURSOR_PARAMETER, f"expected {error}"))
            return query
        if "page" in reserved:
            errors.append(ParameterError("page", "give either page or cursor: a cursor says which page it leads to"))
            return query
        if "count" in reserved and query.window.count != token.count:
            message = f"this cursor was made for pages of {token.count} items; send count={token.count} or no count"
            errors.append(ParameterError("count", message))
            return query
        if token.fingerprint != fingerprint(query) or len(token.values) != len(query.order):
            message = "a cursor of this list: the filters, search or order changed since it was made; start from page=1"
            errors.append(ParameterError(CURSOR_PARAMETER, message))
            return query
        if token.count > self.limits.max_count or (token.page - 1) * token.count > MAX_OFFSET:
            errors.append(ParameterError(CURSOR_PARAMETER, "expected a cursor within this resource's page bounds"))
            return query
        after: list[object] = []
        for term, text in zip(query.order, token.values, strict=True):
            if text is None:
                after.append(None)
                continue
            try:
                value = coerce(self.field_map.field_at(term.path).field, text)
            except CoercionError:
                errors.append(ParameterError(CURSOR_PARAMETER, "expected a cursor whose values fit the order fields"))
                return query
            after.append(_as_text(value) if term.path.key is not None else value)
        return replace(query, window=Window(token.page, token.count), after=tuple(after))

    def _window(self, reserved: dict[str, str], errors: list[ParameterError]) -> Window:
        limits = self.limits
        page = _bounded_int(reserved.get("page"), "page", 1, None, 1, errors)
        count = _bounded_int(reserved.get("count"), "count", 1, limits.max_count, limits.default_count, errors)
        if page is None or count is None:
            return Window()
        if page > MAX_OFFSET:
            errors.append(
                ParameterError("page", f"expected an integer from 1 to {MAX_OFFSET}, a signed 64-bit integer")
            )
            return Window()
        if (page - 1) * count > MAX_OFFSET:
            errors.append(ParameterError("page", f"page * count must stay within a 64-bit row offset ({MAX_OFFSET})"))
            return Window()
        return Window(page, count)

    def _search(self, text: str, errors: list[ParameterError]) -> Search | None:
        if not text:
            return None
        if not self.field_map.searchable:
            errors.append(ParameterError("search", "this resource has no searchable fields"))
            return None
        if len(text) > self.limits.max_search_length or "\x00" in text:
            message = f"expected at most {self.limits.max_search_length} characters, without NUL characters"
            errors.append(ParameterError("search", message))
            return None
        return Search(text, tuple(exposed.path for exposed in self.field_map.searchable))

    def _order(self, text: str, errors: list[ParameterError], hints: _Hints) -> tuple[OrderTerm, ...]:
        if not text:
            return self.field_map.default_order
        limit = self.limits.max_order_terms
        count = text.count(",") + 1
        if count > limit:
            message = f"expected at most {limit} terms, not {count}. Write [-]field[,[-]field...]."
            errors.append(ParameterError("order_by", message))
            return ()
        terms: list[OrderTerm] = []
        seen: set[str] = set()
        orderable = self.field_map.orderable
        for raw in text.split(","):
            name = raw.removeprefix("-")
            exposed = orderable.get(name)
            if exposed is None:
                relation = self.field_map.to_many_prefix(name)
                if relation is not None:
                    message = (
                        f"{_short(raw)} cannot be ordered on: {relation!r} is a to-many relation, so a row has"
                        " several values there; only fields of the listed model and of its to-one relations can be"
                    )
                    errors.append(ParameterError("order_by", message + " ordered on."))
                    continue
                message = f"{_short(raw)} is not an orderable field" + hints.did_you_mean(self._order_names, name)
                errors.append(ParameterError("order_by", message + " Write [-]field[,[-]field...]."))
            elif name in seen:
                errors.append(ParameterError("order_by", f"{name!r} is listed more than once"))
            else:
                seen.add(name)
                terms.append(OrderTerm(exposed.path, descending=raw.startswith("-")))
        return tuple(terms)

    def _facets(self, text: str, errors: list[ParameterError], hints: _Hints) -> tuple[Facet, ...]:
        facetable = self.field_map.facetable
        if not facetable:
            errors.append(ParameterError("facet", "this resource has no facets"))
            return ()
        if not text:
            errors.append(ParameterError("facet", f"expected one or more of: {', '.join(facetable)}"))
            return ()
        limit = self.limits.max_facets
        count = text.count(",") + 1
        if count > limit:
            errors.append(ParameterError("facet", f"expected at most {limit} facets, not {count}"))
            return ()
        facets: dict[str, Facet] = {}
        for name in text.split(","):
            exposed = facetable.get(name)
            if exposed is None:
                hint = hints.did_you_mean(self._facet_names, name)
                errors.append(ParameterError("facet", f"{_short(name)} is not a facet of this resource{hint}"))
            elif name in facets:
                errors.append(ParameterError("facet", f"{name!r} is listed more than once"))
            else:
                facets[name] = Facet(exposed.path, exposed.part, many=exposed.to_many or exposed.field.many)
        return tuple(facets.values())

    def _filters(
        self, params: list[tuple[str, str]], forced_keys: set[str], errors: list[ParameterError], hints: _Hints
    ) -> list[Filter | RawFilter]:
        if len(params) > self.limits.max_filters:
            key = params[self.limits.max_filters][0]
            errors.append(ParameterError(key, f"at most {self.limits.max_filters} filter parameters per request"))
            return []
        groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
        targets: dict[tuple[str, str], tuple[ExposedField, Operator]] = {}
        raw: dict[str, list[str]] = {}
        document = self.syntax is FilterSyntax.DOCUMENT
        for key, value in params:
            name, holder = filter_object_entry(key)
            if document and is_raw_key(name):
                if name in self.raw_keys and holder in (None, FILTERS):
                    raw.setdefault(name, []).append(value)
                elif not self.ignore_unknown:
                    errors.append(ParameterError(key, "is not a filter of this resource."))
                continue
            resolve = self._resolve_document_key if document else self._resolve_key
            resolved = resolve(key, name, errors, hints)
            if resolved is None:
                continue
            exposed, operator = resolved
            if holder is not None:
                # Sent as a property of a filter object: of the object that holds it, or not at all.
                expected = FILTERS if document else filter_group(exposed.path)
                if holder != expected:
                    errors.append(
                        ParameterError(key, f"is not a filter of this resource; did you mean '{expected}[{name}]'?")
                    )
                    continue
            group = (exposed.name, operator.name)
            if operator.name == "eq" and exposed.name in forced_keys:
                continue
            groups.setdefault(group, []).append((key, value))
            targets[group] = resolved
        filters: list[Filter | RawFilter] = []
        for group, items in groups.items():
            exposed, operator = targets[group]
            built = self._build(exposed, operator, items, errors)
            if built is not None:
                filters.append(built)
        for key, values in raw.items():
            if len(values) > self.limits.max_in_values:
                errors.append(ParameterError(key, f"at most {self.limits.max_in_values} values"))
            elif any("\x00" in value for value in values):
                errors.append(ParameterError(key, "expected text without NUL characters"))
            else:
                filters.append(RawFilter(key, tuple(dict.fromkeys(values))))
        return filters

    def _unknown(self, key: str, name: str, errors: list[ParameterError], hints: _Hints) -> None:
        if not self.ignore_unknown:
            hint = hints.did_you_mean(self._filter_names, name)
            errors.append(ParameterError(key, "is not a filter of this resource" + hint))

    def _resolve_document_key(
        self, key: str, name: str, errors: list[ParameterError], hints: _Hints
    ) -> tuple[ExposedField, Operator] | None:
        """The filter parameter ``name`` (sent as ``key``): a field, or a reference by its name or ``<field>_id``.

        By equality only: the document-store rules (docs: query language, "Document-store resources").
        """
        exposed = self.field_map.filterable.get(name)
        if exposed is None:
            relation = self.field_map.graph.root_entity.relations.get(name)
            if relation is not None and relation.key_field is not None:
                exposed = self.field_map.filterable.get(relation.key_field)
        if exposed is None:
            self._unknown(key, name, errors, hints)
            return None
        return exposed, OPERATORS["eq"]

    def _resolve_key(
        self, key: str, written: str, errors: list[ParameterError], hints: _Hints
    ) -> tuple[ExposedField, Operator] | None:
        """The filter parameter ``written`` (sent as ``key``): ``path[__operator]``."""
        head, sep, tail = written.rpartition(LOOKUP_SEP)
        operator = self.operators.get(tail) if sep else None
        name = head if operator is not None else written
        operator = operator or self.operators["eq"]
        exposed = self.field_map.filterable.get(name)
        if exposed is None:
            self._unknown(key, name, errors, hints)
            return None
        info = exposed.field
        if not operator.applies_to(info.type, many=info.many):
            usable = [op.name for op in self.operators.values() if op.applies_to(info.type, many=info.many)]
            message = (
                f"operator {operator.name!r} does not apply to {exposed.name!r} ({exposed.field.type.value}); "
                f"use one of: {', '.join(usable)}"
            )
            errors.append(ParameterError(key, message))
            return None
        return exposed, operator

    def _build(
        self,
        exposed: ExposedField,
        operator: Operator,
        items: list[tuple[str, str]],
        errors: list[ParameterError],
    ) -> Filter | None:
        key = items[0][0]
        # Commas split the values of the kind the client wrote: ``f=a,b&f=c`` (``eq`` repeated) is
        # ``in`` over ``a,b`` and ``c``.
        split = not operator.kind.arity.single
        if len(items) > 1:
            if operator.repeated_as is None:
                errors.append(ParameterError(key, "may be given only once; only eq, ne, in and nin may repeat"))
                return None
            operator = self.operators[operator.repeated_as]
        try:
            value = _read_value(operator.kind, exposed.field, [raw for _, raw in items], self.limits, split=split)
        except CoercionError as error:
            errors.append(ParameterError(key, f"expected {error.expected}"))
            return None
        except ValueError as error:
            errors.append(ParameterError(key, str(error)))
            return None
        key_type = exposed.path.key.type if exposed.path.key is not None else None
        if key_type is ValueType.DATE and exposed.part is None:
            value = _as_text(value)  # a JSON document holds a date as its ISO text
        return Filter(exposed.path, operator, value, key=key, part=exposed.part)


def _as_text(value: object) -> object:
    """Dates (one, or a tuple of them) as ``YYYY-MM-DD`` text; anything else as it is."""
    if isinstance(value, tuple):
        return tuple(_as_text(one) for one in value)
    return value.isoformat() if isinstance(value, datetime.date) else value


def _read_element(element: Element, info: FieldInfo, raw: str, limits: Limits) -> object:
    """One element of an operator's value (``ValueKind.element``), coerced.

    Raises:
        CoercionError: ``raw`` is not a value of the element's type.
        ValueError: text or a pattern longer than ``limits.max_pattern_length``.
    """
    if element is Element.FIELD:
        return coerce(info, raw)
    if element is Element.FLAG:
        return coerce_bool(raw)
    if len(raw) > limits.max_pattern_length:
        msg = f"expected at most {limits.max_pattern_length} characters"
        raise ValueError(msg)
    text = coerce_text(raw)
    return parse_like(text) if element is Element.PATTERN else text


def _read_value(kind: ValueKind, info: FieldInfo, raws: Sequence[str], limits: Limits, *, split: bool) -> object:
    """The value of one filter from its raw texts (one per repetition), by the kind's arity.

    Returns one element (``ONE``), a tuple of distinct elements (``count`` None), or a tuple of
    exactly ``count`` elements.

    Raises:
        CoercionError, ValueError: with the 400 message (docs: query language, "Errors").
    """
    arity = kind.arity
    if arity.single:
        return _read_element(kind.element, info, raws[0], limits)
    if arity.count is None:
        # Counted before splitting: a megabyte of commas is refused without a list of its parts.
        if sum(raw.count(",") + 1 if split else 1 for raw in raws) > limits.max_in_values:
            msg = f"at most {limits.max_in_values} values"
            raise ValueError(msg)
        parts = [part for raw in raws for part in (raw.split(",") if split else [raw])]
        return tuple(dict.fromkeys(_read_element(kind.element, info, part, limits) for part in parts))
    parts = raws[0].split(",", arity.count)
    if len(parts) != arity.count:
        raise ValueError(arity.count_message)
    values = tuple(_read_element(kind.element, info, part, limits) for part in parts)
    if arity.ascending and any(low > high for low, high in itertools.pairwise(values)):  # type: ignore[operator]
        raise ValueError(arity.order_message)
    return values


def _did_you_mean(names: list[str]) -> str:
    return "; did you mean " + " or ".join(repr(name) for name in names) + "?" if names else "."


@dataclass(slots=True)
class _Split:
    """The parameters of one request sorted (``QueryParser._split``), and the problems found so far."""

    hints: _Hints
    reserved: dict[str, str] = field(default_factory=dict)
    filters: list[tuple[str, str]] = field(default_factory=list)
    errors: list[ParameterError] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)
    """Where each name was first written: the problems are reported in that order."""

    def raise_errors(self, limits: Limits) -> None:
        """Raise the problems found, if any, in the order the client wrote the parameters.

        Raises:
            InvalidQueryError: At most ``limits.max_problems`` of them (``_listed``).
        """
        if self.errors:
            position = self.position
            ordered = sorted(self.errors, key=lambda error: position.get(error.key, len(position)))
            raise InvalidQueryError(_listed(ordered, limits))


@dataclass(slots=True)
class _Hints:
    """The "did you mean" endings of one request's messages.

    Each distinct name is looked up once, and at most ``budget`` names are; past the budget a name
    gets the plain ending.
    """

    budget: int
    found: dict[tuple[int, str], str] = field(default_factory=dict)

    def did_you_mean(self, index: NameIndex, name: str) -> str:
        key = (id(index), name)
        if key not in self.found:
            if len(self.found) >= self.budget:
                return "."
            self.found[key] = _did_you_mean(index.closest(name))
        return self.found[key]


def _shown_name(key: str, limits: Limits) -> str:
    """A parameter name as an error shows it: its first characters when it is past the length limit."""
    return key if len(key) <= limits.max_name_length else key[:_SHOWN_NAME] + "…"


def _json_size(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode())


def _listed(errors: list[ParameterError], limits: Limits) -> list[ParameterError]:
    """``errors`` as a 400 lists them.

    The first ``max_problems`` that fit in ``PROBLEMS_SIZE`` bytes, then one entry counting the rest,
    on the key of the first one left out.
    """
    listed: list[ParameterError] = []
    size = 0
    for error in errors:
        # The key appears twice in the body: in its entry and in the detail's list of keys.
        size += 2 * _json_size(error.key) + _json_size(error.message) + len('{"key":,"message":,"source":"query"},, ')
        if len(listed) == limits.max_problems or size > PROBLEMS_SIZE:
            break
        listed.append(error)
    rest = errors[len(listed) :]
    if rest:
        message = (
            f"and {len(rest)} more problems from this parameter on, not listed: a 400 lists at most "
            f"{limits.max_problems}; fix these and send the request again"
        )
        listed.append(ParameterError(rest[0].key, message))
    return listed


def _bounded_int(
    text: str | None, key: str, low: int, high: int | None, default: int, errors: list[ParameterError]
) -> int | None:
    if text is None:
        return default
    expected = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
    if not _POSITIVE.fullmatch(text):
        errors.append(ParameterError(key, f"expected {expected}"))
        return None
    value = int(text)
    if value < low or (high is not None and value > high):
        errors.append(ParameterError(key, f"expected {expected}"))
        return None
    return value


def forced_filter(field_map: FieldMap, name: str, value: object) -> Filter:
    """A server-side equality (or membership, for a list/tuple/set) filter on any existing path.

    The path need not be exposed to clients. Values are compared as given (no coercion). None
    matches nothing, as equality never matches NULL (docs: design, "NULL"): a user without a company
    sees no row of a tenant-scoped list, not the rows whose company is NULL.

    Raises:
        ConfigurationError: The path does not exist.
    """
    return equality_filter(field_map.field_at(FieldPath.parse(name)).path, value, key=name)


def equality_filter(path: FieldPath, value: object, *, key: str = "") -> Filter:
    """The server-side filter ``path = value``: membership for a list/tuple/set, none for None.

    The one rule of forced filters and row policies: values are compared as given, None and None
    members match nothing (docs: design, "NULL").
    """
    if value is None or isinstance(value, (list, tuple, set, frozenset)):
        values = () if value is None else tuple(item for item in value if item is not None)
        return Filter(path, OPERATORS["in"], values, key=key)
    return Filter(path, OPERATORS["eq"], value, key=key)
