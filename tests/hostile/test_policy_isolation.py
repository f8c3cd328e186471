"""Row policies as a property: no answer depends on a row outside the user's policies (docs: scoping, "Row policies").

Targets: every selected backend x database, with the conformance data (``tests/conformance/fixture.py``).
Five models carry a policy per company ``c``, linked every way a relation can be:

* ``Thing`` (the listed model): ``company_id = c``;
* ``User``: ``company_id = c``; reached to-one (``owner``, ``reviewer``) and through its
  self-reference (``owner__manager``, ``owner__manager__manager``);
* ``Company``: ``id = c``; reached to-one (``company``, ``owner__company``, ``parts__supplier``);
* ``Part``: ``supplier_id = c``; reached one-to-many (``parts``);
* ``Tag``: ``id`` in the company's share of the tags (``id % 3 == c % 3``); reached many-to-many (``tags``).

Users: companies 1 to 4, a user without a company (whose policies admit no row) and the platform
administrator (no policy). The queries are what ``hostile_queries`` draws over every exposed path of
the ``things`` resource (filters, search and order through every relation) plus eager loading of
every relation, nested. Property, per query and user: the target's answer under the policies (the
page's ids in order, the total, each item's computed ``part_count``, and the ids of every loaded
relation) equals the answer over the same data with every row outside the policies deleted, computed
by the memory backend without any policy from rows pruned here by hand (a deleted to-one row leaves
its key and reads as missing; a deleted to-many row is gone; ``part_count`` counts the parts that
remain). Order by ``part_count`` is drawn too: on every target it is a ``Computed`` value, built per
list from the Part policy.

Hypothesis settings: ``LISTING_HYPOTHESIS_PROFILE`` (``ci``: 200 examples per target, or ``nightly``:
10,000, ``nox -s "tests(<target>)" -- --nightly``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import given

from litestar_listing import ListContext, MemoryBackend, Resource
from litestar_listing.backends.sqlalchemy import model_graph
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.core.query import FilterSyntax, ListQuery, Policy
from litestar_listing.core.schema import ModelGraph
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from tests.conformance.fixture import memory_rows
from tests.conformance.models import Thing
from tests.conformance.targets import PART_COUNT, Target
from tests.differential.strategies import Domain
from tests.hostile import Opened, Tally, pruned, request, scoped_query
from tests.hostile.strategies import hostile_queries, profile

Row = Mapping[str, Any]
GRAPH: ModelGraph = model_graph(Thing)
COMPANIES: tuple[int | None, ...] = (1, 2, 3, 4, None)
"""The scoped users' companies; None: a user without a company. The administrator has no policy."""
LOAD = ("owner__manager", "reviewer", "company", "tags", "parts__supplier")


def _tags_of(company: int) -> tuple[int, ...]:
    return tuple(tag for tag in range(1, 7) if tag % 3 == company % 3)


def visible(company: int | None) -> dict[str, Callable[[Row], bool]]:
    """Each policed model's rule for a user of ``company``, on a plain row (the hand-written reference)."""
    if company is None:
        return dict.fromkeys(("Thing", "User", "Company", "Part", "Tag"), lambda row: False)
    return {
        "Thing": lambda row: row["company_id"] == company,
        "User": lambda row: row["company_id"] == company,
        "Company": lambda row: row["id"] == company,
        "Part": lambda row: row["supplier_id"] == company,
        "Tag": lambda row: row["id"] in _tags_of(company),
    }


def policies(company: int | None) -> tuple[Policy, ...]:
    """The same rules as ``visible``, as the request's ``ListQuery.policies``."""
    values: dict[str, dict[str, object]] = {
        "Thing": {"company_id": company},
        "User": {"company_id": company},
        "Company": {"id": company},
        "Part": {"supplier_id": company},
        "Tag": {"id": None if company is None else _tags_of(company)},
    }
    return tuple(resolved_policy(GRAPH.entities[name], value) for name, value in values.items())


def shape(item: Mapping[str, Any], tree: Mapping[str, Any]) -> object:
    """The ids of ``item`` and of its loaded relations (``tree``), nested: what an answer is compared on."""
    nested: list[object] = [item["id"]]
    for name, subtree in sorted(tree.items()):
        value = item.get(name)
        if isinstance(value, list):
            nested.append((name, tuple(shape(child, subtree) for child in value)))
        else:
            nested.append((name, None if value is None else shape(value, subtree)))
    return tuple(nested)


def _tree(load: tuple[str, ...]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in load:
        node = tree
        for step in path.split("__"):
            node = node.setdefault(step, {})
    return tree


@dataclasses.dataclass
class Scene:
    """One target's ``things`` resource, its references per user, and the tally."""

    target: Target
    resource: Resource
    load: tuple[str, ...]
    references: dict[int | None, MemoryBackend]
    everything: MemoryBackend
    tally: Tally = dataclasses.field(default_factory=Tally)

    @classmethod
    def of(cls, target: Target) -> Scene:
        rows = memory_rows()
        references = {}
        for company in COMPANIES:
            rules = visible(company)
            kept = (pruned(row, "Thing", rules) for row in rows)
            references[company] = MemoryBackend(
                GRAPH, [row for row in kept if row is not None], computed={"part_count": PART_COUNT}
            )
        resource = target.resources["things"]
        everything = MemoryBackend(GRAPH, rows, computed={"part_count": PART_COUNT})
        return cls(target, resource, LOAD, references, everything)

    async def answer(self, query: ListQuery, backend: Any, context: ListContext) -> tuple[int, tuple[object, ...]]:
        page = await backend.fetch(query, dataclasses.replace(context, load=self.load))
        tree = _tree(self.load)
        return page.total, tuple((item["part_count"], shape(item, tree)) for item in page.items)

    async def check(self, query_string: str) -> None:
        self.tally.queries += 1
        connection = request(query_string, None)
        try:
            query = scoped_query(self.resource, connection)
        except InvalidQueryError:
            self.tally.rejected += 1
            return
        runs: list[tuple[str, ListQuery, MemoryBackend]] = [
            (f"company {company}", dataclasses.replace(query, policies=policies(company)), self.references[company])
            for company in COMPANIES
        ]
        runs.append(("the administrator", query, self.everything))
        for who, asked, reference in runs:
            where = f"{self.target.id}: things?{query_string} for {who}"
            async with self.target.context() as context:
                got = await self.answer(asked, self.resource.backend, context)
            expected = await self.answer(query, reference, ListContext())
            self.tally.answers += 1
            assert got == expected, f"{where}: answered {got}, with the invisible rows deleted {expected}"
            self.tally.rows_seen += len(got[1])


def test_no_answer_depends_on_rows_outside_the_policies(opened: Opened) -> None:
    scene = Scene.of(opened.target)
    if not scene.resource.backend.capabilities.row_policies:
        return
    document = scene.resource.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT
    domain = Domain.of(prepare(scene.resource).field_map, memory_rows())
    loop = opened.loop

    @profile()
    @given(query=hostile_queries(domain, document=document))
    def isolated(query: str) -> None:
        loop.run_until_complete(scene.check(query))

    isolated()
    tally = scene.tally
    summary = tally.summary(scene.target, queries=f" ({tally.rejected} rejected)")
    assert tally.answers >= tally.queries, summary
    assert tally.rows_seen > tally.queries, summary


def test_the_reference_hides_what_each_policy_names() -> None:
    """Hand counts on the reference itself: Acme's things, and what of them a tenant still sees."""
    rows = [row for row in (pruned(row, "Thing", visible(1)) for row in memory_rows()) if row is not None]
    assert sorted(row["id"] for row in rows) == [1, 2, 3, 7, 8, 9, 13, 14, 17, 18, 21, 25, 28, 29]
    nine = next(row for row in rows if row["id"] == 9)  # owner Frank (no company), reviewer Alice
    assert (nine["owner"], nine["reviewer"]["name"], nine["tags"], nine["parts"]) == (None, "Alice", [], [])
    twenty_one = next(row for row in rows if row["id"] == 21)  # parts 14 (supplier Acme) and 15-17 (others)
    assert [part["id"] for part in twenty_one["parts"]] == [14]
    assert [tag["id"] for tag in twenty_one["tags"]] == [1, 4]
    assert twenty_one["part_count"] == 1
    assert all(pruned(row, "Thing", visible(None)) is None for row in memory_rows())
