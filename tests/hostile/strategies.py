"""Hypothesis strategies of hostile list query strings, and the hypothesis profiles of ``tests/hostile``.

Profiles, chosen by the environment variable ``LISTING_HYPOTHESIS_PROFILE``:

* ``ci`` (the default): ``CI_EXAMPLES`` (200) examples per target and property, derandomized (the
  same examples on every run), no deadline, no example database.
* ``nightly``: ``NIGHTLY_EXAMPLES`` (10,000) examples per target and property, a fresh random seed
  on every run, no deadline, no example database; a failure prints the ``@reproduce_failure`` blob.
* ``versions``: ``VERSIONS_EXAMPLES`` (50) examples, otherwise as ``ci``: the profile of the sessions
  that run the tests again on the other Pythons and on the dependency floors (``nox -s pythons``,
  ``nox -s floors``). What they look for is code that a version breaks, which any example reaches;
  the search for a hostile query is the ``ci`` profile's, on every target, in ``nox -s tests``.

The profiles are registered here and applied with ``@profile()`` to the tests of this folder only;
they are never loaded globally, so other hypothesis tests keep their own settings.

``hostile_queries`` writes what a client trying to leave its tenant would send: the forced field
under every name, operator and spelling (``company_id``, ``company_id__ne``, ``__in`` lists,
``__isnull``, comparisons, repeated values, empty values), relation paths leading back to the tenant
(``company__id``, ``owner__company_id``, ``parts__supplier__name``...), the document-store forms of
a reference (``company``, ``company.$id``, ``company[$ne]``), mixed with ordinary filters drawn from
the data (``tests/differential/strategies.py``), search text, ``order_by`` (tenant paths included),
huge and broken windows, random names, and raw tails appended to the encoded string
(``%63ompany_id=2`` decodes to ``company_id=2``). Any answer is acceptable except a foreign row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from litestar_listing.core.parsing import MAX_OFFSET
from tests.differential.strategies import Domain, field_value, filter_params, fragment, one_in, order_by, pick, window

__all__ = (
    "CI_EXAMPLES",
    "NIGHTLY_EXAMPLES",
    "PROFILE_VARIABLE",
    "VERSIONS_EXAMPLES",
    "hostile_queries",
    "profile",
    "profile_name",
)

PROFILE_VARIABLE = "LISTING_HYPOTHESIS_PROFILE"
"""The environment variable naming the hypothesis profile: ``ci`` (default), ``nightly`` or ``versions``."""
CI_EXAMPLES = 200
NIGHTLY_EXAMPLES = 10_000
VERSIONS_EXAMPLES = 50

_COMMON: Mapping[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("ci", max_examples=CI_EXAMPLES, derandomize=True, print_blob=False, **_COMMON)
settings.register_profile("nightly", max_examples=NIGHTLY_EXAMPLES, derandomize=False, print_blob=True, **_COMMON)
settings.register_profile("versions", max_examples=VERSIONS_EXAMPLES, derandomize=True, print_blob=False, **_COMMON)


def profile_name() -> str:
    """The selected profile's name (``ci`` unless ``LISTING_HYPOTHESIS_PROFILE`` says otherwise)."""
    return os.environ.get(PROFILE_VARIABLE, "") or "ci"


def profile() -> settings:
    """The selected profile, as a ``@settings`` decorator.

    Raises:
        hypothesis.errors.InvalidArgument: ``LISTING_HYPOTHESIS_PROFILE`` names no registered profile.
    """
    return settings(settings.get_profile(profile_name()))


# ------------------------------------------------------------------------------------------ tenant names

TENANT_PATHS: tuple[str, ...] = (
    "company_id",
    "company",
    "company__id",
    "company__name",
    "company_id__company",
    "owner__company_id",
    "owner__company__id",
    "owner__company__name",
    "owner__manager__company_id",
    "owner__manager__manager__company_id",
    "reviewer__company_id",
    "reviewer__company__name",
    "parts__supplier__name",
    "parts__supplier__id",
    "parts__supplier_id",
    "tags__company_id",
)
"""Relation paths to the tenant a client may try; some are exposed, some are not."""

TENANT_SUFFIXES: tuple[str, ...] = (
    "",
    "",
    "",
    "__eq",
    "__ne",
    "__in",
    "__nin",
    "__isnull",
    "__gt",
    "__gte",
    "__lt",
    "__lte",
    "__like",
    "__ilike",
    "__startswith",
    "__istartswith",
    "__endswith",
    "__iendswith",
    "__exact",
    "__regex",
    "__",
    "__eq__ne",
    "__in__nin",
    "__ne__eq",
)
"""Operators (and things that look like operators) after a tenant path."""

DOCUMENT_KEYS: tuple[str, ...] = (
    "company",
    "company",
    "company_id",
    "company_id",
    "company.$id",
    "company.$ref",
    "company.$db",
    "company.id",
    "company._id",
    "company.name",
    "company[$ne]",
    "company[$nin][]",
    "company[$gt]",
    "company_id[$ne]",
    "company.$id[$ne]",
    "company.$id.$ne",
    "company_id.$ne",
    "$where",
    "$or",
    "$and",
    "$expr",
    "$match",
    "_id",
    "owner",
    "owner_id",
    "owner.company.$id",
    "_listing_company.name",
    "_listing_company._id",
    "company ",
    " company_id",
    "Company",
    "COMPANY_ID",
)
"""The forms a document-store client might try: reference names, raw-looking keys, operators."""

TENANT_VALUES: tuple[str, ...] = (
    "1",
    "2",
    "3",
    "4",
    "0",
    "-1",
    "",
    "1,2,3",
    "1,2,3,4",
    "2,3",
    ",",
    "2,",
    ",2",
    " 2",
    "2 ",
    "+2",
    "02",
    "2.0",
    "2e0",
    "0x2",
    "\u0662",  # ARABIC-INDIC DIGIT TWO: int() reads it as 2
    "\uff12",  # FULLWIDTH DIGIT TWO
    "true",
    "false",
    "null",
    "None",
    "NULL",
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "acme",
    "%",
    "_",
    "*",
    ".*",
    "' OR '1'='1",
    "1 OR 1=1",
    "2) OR (1=1",
    '{"$ne": 1}',
    '{"$gt": 0}',
    "[1,2]",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "2\x00",
    "507f1f77bcf86cd799439011",
    "DBRef('companies', 2)",
)
"""Values for a tenant parameter: other tenants, lists, empties, injections, odd numerals."""

HOSTILE_ORDER: tuple[str, ...] = (
    "company_id",
    "-company_id",
    "company__name",
    "-company__name",
    "company__id",
    "company",
    "owner__company_id",
    "company.$id",
    "part_count",
    "-part_count",
    "id",
    "-",
    "",
    "company_id,company_id",
    "$natural",
)
"""``order_by`` terms around the tenant: orderable, unorderable, duplicated, raw."""

HOSTILE_WINDOWS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("page", str(10**12)), ("count", "100")),
    (("page", str(10**12)), ("count", "1")),
    (("page", str(MAX_OFFSET // 100 + 1)), ("count", "100")),
    (("page", str(MAX_OFFSET // 100 + 2)), ("count", "100")),
    (("page", str(2**63)),),
    (("page", str(2**64)), ("count", "100")),
    (("count", "100"),),
    (("page", "0"),),
    (("page", "-1"),),
    (("count", "0"),),
    (("count", "101"),),
    (("count", "1e2"),),
    (("page", ""),),
    (("page", "1"), ("page", "2")),
    (("count", "100"), ("count", "1")),
)
"""Windows a client might use to read past the scope: huge pages, bad and repeated bounds."""

RAW_TAILS: tuple[str, ...] = (
    "company_id",
    "company_id=",
    "=2",
    "&",
    "&&company_id=2",
    "company_id=2&company_id=3",
    "%63ompany_id=2",
    "company%5fid=2",
    "company%5Fid__ne=1",
    "company_id%00=2",
    "company_id=2%00",
    "company[$ne]=1",
    "company%5B%24ne%5D=1",
    "company.$id=2",
    "company.%24id=2",
    "company_id[]=2",
    "company_id=2;company_id=3",
    "company_id%3D2",
    "company_id=%2C",
    "company_id=%E2%80%8B2",
    "company_id=%FF",
    "c%C3%B6mpany_id=2",
    "company_id==2",
    "company_id=2=3",
    "+company_id=2",
    "company_id+=2",
    "company_id=+2",
    "company_id=2#fragment",
    "company__id__ne=1&company_id__in=2,3",
    "page=1&page=2",
)
"""Raw (not url-encoded) text appended to a query string, decoded by the request's parser."""

_KEY_CHARACTERS = st.sampled_from((*"company_id$.[]_ -+%=,&", "__", "owner", "ne", "in", "id"))


@st.composite
def _random_key(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(_KEY_CHARACTERS, min_size=1, max_size=8)))


_RANDOM_VALUE = st.text(st.characters(codec="utf-8"), max_size=12)


def _case_variant(draw: st.DrawFn, key: str) -> str:
    return pick(draw, (key.upper(), key.title(), key.replace("_", "-"), key + " ", key.replace("o", "\u043e")))


INTEGER_TENANT_PATHS: tuple[str, ...] = (
    "company_id",
    "company__id",
    "owner__company_id",
    "owner__manager__company_id",
    "reviewer__company_id",
)
"""Exposed integer paths to a company (``company_id`` itself is the forced field)."""
TEXT_TENANT_PATHS: tuple[str, ...] = ("company__name", "parts__supplier__name")
"""Exposed text paths to a company's name."""
INTEGER_OPERATORS: tuple[str, ...] = ("", "eq", "ne", "in", "nin", "isnull", "gt", "gte", "lt", "lte")
TEXT_OPERATORS: tuple[str, ...] = (
    *INTEGER_OPERATORS,
    "like",
    "ilike",
    "startswith",
    "istartswith",
    "endswith",
    "iendswith",
)
COMPANY_IDS: tuple[str, ...] = ("1", "2", "3", "4", "0", "-1", "+2", "02", "2147483647")
COMPANY_NAMES: tuple[str, ...] = ("Acme", "Globex", "Initech", "Umbrella", "acme", "GLOBEX", "Glo", "ex", "%", "_", "")
DOCUMENT_TENANT_KEYS: tuple[str, ...] = ("company", "company_id", "owner", "owner_id", "reviewer", "reviewer_id")
"""Document-store filters a client may send on references (a reference by its name or ``<name>_id``)."""


def well_formed_tenant_params(draw: st.DrawFn, *, document: bool) -> list[tuple[str, str]]:
    """An attack the resource accepts: an exposed path to the tenant, an operator and values of its type."""
    if document:
        key = pick(draw, DOCUMENT_TENANT_KEYS)
        return [(key, pick(draw, COMPANY_IDS)) for _ in range(pick(draw, (1, 1, 2, 3)))]
    text = draw(one_in(3))
    path = pick(draw, TEXT_TENANT_PATHS if text else INTEGER_TENANT_PATHS)
    operator = pick(draw, TEXT_OPERATORS if text else INTEGER_OPERATORS)
    key = f"{path}__{operator}" if operator else path
    values = COMPANY_NAMES if text else COMPANY_IDS
    if operator == "isnull":
        return [(key, pick(draw, ("true", "false", "1", "0")))]
    if operator in {"in", "nin"}:
        return [
            (key, ",".join(pick(draw, values) for _ in range(pick(draw, (1, 2, 3, 4)))))
            for _ in range(pick(draw, (1, 1, 2)))
        ]
    repeats = pick(draw, (1, 1, 1, 2, 3)) if operator in {"", "eq", "ne"} else 1
    return [(key, pick(draw, values)) for _ in range(repeats)]


def tenant_params(draw: st.DrawFn, *, document: bool) -> list[tuple[str, str]]:
    """One attack on the tenant: mostly well formed (accepted), else any name, operator and value."""
    if not draw(one_in(3)):
        return well_formed_tenant_params(draw, document=document)
    if document and not draw(one_in(4)):
        key = pick(draw, DOCUMENT_KEYS)
    else:
        key = pick(draw, TENANT_PATHS) + pick(draw, TENANT_SUFFIXES)
    if draw(one_in(20)):
        key = _case_variant(draw, key)
    keys = [key] * pick(draw, (1, 1, 1, 2, 3))
    if draw(one_in(8)):
        keys.append(pick(draw, ("company_id", "company_id__eq", "company", "company__id", "company_id__in")))
    values: list[str] = []
    for _ in keys:
        if draw(one_in(5)):
            values.append(",".join(pick(draw, TENANT_VALUES[:8]) for _ in range(pick(draw, (2, 3, 4)))))
        else:
            values.append(pick(draw, TENANT_VALUES))
    return list(zip(keys, values, strict=True))


def ordinary_params(
    draw: st.DrawFn, domain: Domain, anchor: Mapping[str, Any], *, document: bool
) -> list[tuple[str, str]]:
    """An ordinary filter on an exposed path, its value mostly from the data (so that it finds rows)."""
    path = pick(draw, domain.filter_paths)
    if document:
        # Document-store syntax: equality by name, repeated for membership (docs: query language,
        # "Document-store resources").
        return [(path, field_value(draw, domain, path, anchor)) for _ in range(pick(draw, (1, 1, 1, 2)))]
    info = domain.field_map.filterable[path].field
    operator = pick(draw, domain.operators[info.type, info.many])
    return filter_params(draw, domain, path, operator, anchor)


def hostile_order(draw: st.DrawFn, domain: Domain) -> str:
    """Ordinary orderable terms mixed with terms around the tenant."""
    terms = [] if draw(one_in(3)) else [order_by(draw, domain)]
    if not terms or draw(one_in(4)):
        terms += [pick(draw, HOSTILE_ORDER) for _ in range(pick(draw, (1, 1, 2)))]
    return ",".join(terms)


@st.composite
def hostile_queries(draw: st.DrawFn, domain: Domain, *, document: bool) -> str:
    """A whole query string written to leave the tenant (see the module docstring).

    Args:
        draw: Hypothesis' draw.
        domain: The resource's exposure and rows, for the ordinary filters, search and order.
        document: Whether the resource reads filters with the document-store syntax; its tenant
            attacks are then mostly reference forms and raw-looking keys.

    Returns:
        The raw query string (url-encoded parameters, maybe a raw tail).
    """
    anchor = pick(draw, domain.rows)
    params: list[tuple[str, str]] = []
    for _ in range(pick(draw, (0, 1, 1, 1, 2, 2, 3))):
        params += tenant_params(draw, document=document)
    for _ in range(pick(draw, (0, 0, 1, 1, 2))):
        params += ordinary_params(draw, domain, anchor, document=document)
    if draw(one_in(3)):
        pool = domain.search_values if draw(st.booleans()) else ("Acme", "Globex", "Initech", "Umbrella", "hash")
        params.append(("search", fragment(draw, pool)))
    if draw(st.booleans()):
        params.append(("order_by", hostile_order(draw, domain)))
    if draw(one_in(6)):
        params += pick(draw, HOSTILE_WINDOWS)
    else:
        params += window(draw, domain)
    if draw(one_in(10)):
        params.append((draw(_random_key()), draw(_RANDOM_VALUE)))
    if draw(one_in(3)):
        params = draw(st.permutations(params))
    query = urlencode(params)
    if draw(one_in(6)):
        tail = pick(draw, RAW_TAILS)
        query = f"{query}&{tail}" if query and draw(st.booleans()) else f"{tail}&{query}"
    return query
