"""Computed values that read a policed model through aliases, on every backend, and their answers by hand.

Two values over the conformance data (``tests/conformance/fixture.py``), each a ``Computed`` reading
User, whose row policy lets a tenant see its company's users (``company_id = c``):

* ``reports`` on a list of **users**: how many of the listed user's direct reports (users whose
  ``manager_id`` is the listed user) the request may see. A self-reference: the listed model is
  counted through an alias of itself, and the listed rows are under the same policy.
* ``owner_reports`` on a list of **things** (public here: things carry no policy): how many users
  the thing's owner manages, counting the visible ones only, and 0 when the owner is not visible.
  The same model twice in one expression: two aliases of User, each under the User policy.

The expectations (``expected_reports``, ``expected_owner_reports``) are plain Python over the
fixture tuples, never a backend. The data has the rows that tell a leak apart: Carol (Acme)
manages Frank, who has no company; Dave (Globex) manages Eve (Globex) and Zoë (Initech); Dave owns
things 4 and 12. A value compiled against the listed row instead of the counted one would count
Frank for Acme, Zoë for Globex and Zoë again, through Dave, for Initech.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from piccolo.columns import Integer
from piccolo.querystring import QueryString
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from litestar_listing import Computed, ListingBackend, Resource
from litestar_listing.backends.beanie import BeanieBackend, link_id
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph
from litestar_listing.core.query import Policy
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from tests.conformance import beanie_documents, piccolo_tables
from tests.conformance.fixture import THINGS, USERS
from tests.conformance.models import Thing, User
from tests.conformance.targets import Target

__all__ = (
    "ADMINISTRATOR",
    "BACKENDS",
    "VIEWERS",
    "AliasBackends",
    "by_value",
    "expected_owner_reports",
    "expected_reports",
    "listed",
    "piccolo_values",
    "policies",
    "sqlalchemy_values",
)

ADMINISTRATOR = "administrator"
"""The viewer without policies: every user is visible."""
VIEWERS: tuple[int | str | None, ...] = (1, 2, 3, None, ADMINISTRATOR)
"""Tenants of companies 1 to 3, a user without a company (no user is visible) and the administrator."""

_GRAPH = model_graph(Thing)


@dataclasses.dataclass(frozen=True)
class AliasBackends:
    """One backend's lists: ``users`` with ``reports``, ``things`` with ``owner_reports``."""

    users: ListingBackend
    things: ListingBackend


def _visible(viewer: int | str | None, company_id: int | None) -> bool:
    """The User policy by hand: the administrator sees every user, a tenant those of its company."""
    return viewer == ADMINISTRATOR or (viewer is not None and company_id == viewer)


def _users() -> list[dict[str, Any]]:
    return [{"id": row[0], "company_id": row[3], "manager_id": row[5]} for row in USERS]


def _visible_reports(viewer: int | str | None, manager: int | None) -> int:
    return sum(1 for user in _users() if user["manager_id"] == manager and _visible(viewer, user["company_id"]))


def expected_reports(viewer: int | str | None) -> dict[int, int]:
    """User id -> ``reports``, for the users ``viewer`` may list."""
    return {
        user["id"]: _visible_reports(viewer, user["id"]) for user in _users() if _visible(viewer, user["company_id"])
    }


def expected_owner_reports(viewer: int | str | None) -> dict[int, int]:
    """Thing id -> ``owner_reports``, for every thing (things have no policy here)."""
    companies = {user["id"]: user["company_id"] for user in _users()}
    expected: dict[int, int] = {}
    for row in THINGS:
        thing_id, owner = row[0], row[11]
        seen = owner is not None and _visible(viewer, companies[owner])
        expected[thing_id] = _visible_reports(viewer, owner) if seen else 0
    return expected


def by_value(expected: dict[int, int]) -> list[tuple[int, int]]:
    """``expected`` as ``order_by=-<value>`` lists it: the largest first, ties by id (the final term)."""
    return sorted(expected.items(), key=lambda pair: (-pair[1], pair[0]))


def policies(viewer: int | str | None) -> tuple[Policy, ...]:
    """The request's policies: none for the administrator, else the User policy of the viewer's company."""
    if viewer == ADMINISTRATOR:
        return ()
    return (resolved_policy(_GRAPH.entities["User"], {"company_id": viewer}),)


# ---------------------------------------------------------------- the values on each backend
def sqlalchemy_values() -> tuple[Computed[Any, Any], Computed[Any, Any]]:
    """SQLAlchemy's ``reports`` (on User) and ``owner_reports`` (on Thing): ``allowed`` of each ``aliased(User)``."""
    report = aliased(User)
    reports = Computed(
        lambda allowed: (
            select(func.count(report.id))
            .where(report.manager_id == User.id, allowed(report))
            .correlate(User)
            .scalar_subquery()
        ),
        reads=(User,),
    )
    owner, managed = aliased(User), aliased(User)
    owner_reports = Computed(
        lambda allowed: (
            select(func.count(managed.id))
            .select_from(managed)
            .join(owner, managed.manager_id == owner.id)
            .where(owner.id == Thing.owner_id, allowed(owner), allowed(managed))
            .correlate(Thing)
            .scalar_subquery()
        ),
        reads=(User,),
    )
    return reports, owner_reports


def sqlalchemy_backends() -> AliasBackends:
    """SQLAlchemy: ``allowed`` of each ``aliased(User)`` the subquery counts or joins."""
    reports, owner_reports = sqlalchemy_values()
    return AliasBackends(
        SQLAlchemyBackend(User, computed={"reports": reports}),
        SQLAlchemyBackend(Thing, computed={"owner_reports": owner_reports}),
    )


def piccolo_values() -> tuple[Computed[Any, Any], Computed[Any, Any]]:
    """Piccolo's ``reports`` and ``owner_reports``: ``allowed(User, "<alias>")`` for each ``"users" AS "<alias>"``."""
    user, thing = piccolo_tables.User, piccolo_tables.Thing
    reports = Computed(
        lambda allowed: QueryString(
            '(SELECT COUNT(*) FROM "users" AS "report" WHERE "report"."manager_id" = {} AND {})',
            user.id,
            allowed(user, "report"),
        ),
        reads=(user,),
    )
    owner_reports = Computed(
        lambda allowed: QueryString(
            '(SELECT COUNT(*) FROM "users" AS "managed" JOIN "users" AS "owner"'
            ' ON "managed"."manager_id" = "owner"."id" WHERE "owner"."id" = {} AND {} AND {})',
            thing.owner,
            allowed(user, "owner"),
            allowed(user, "managed"),
        ),
        reads=(user,),
    )
    return reports, owner_reports


def piccolo_backends() -> AliasBackends:
    """Piccolo: ``allowed(User, "<alias>")`` for each ``"users" AS "<alias>"`` of the statement."""
    reports, owner_reports = piccolo_values()
    return AliasBackends(
        PiccoloBackend(piccolo_tables.User, computed={"reports": (reports, Integer())}),
        PiccoloBackend(piccolo_tables.Thing, computed={"owner_reports": (owner_reports, Integer())}),
    )


def beanie_backends() -> AliasBackends:
    """Beanie: ``allowed(User, "<as>")`` for each ``$filter`` or ``$map`` over looked-up users."""
    user = beanie_documents.User
    reports = Computed(
        lambda allowed: {
            "$size": {"$filter": {"input": "$report_docs", "as": "report", "cond": allowed(user, "report")}}
        },
        reads=(user,),
    )

    def per_owner(allowed: Callable[..., Any]) -> dict[str, Any]:
        # Per owner (none or one): its visible managed users, or 0 when the owner is not visible. A
        # thing without an owner looks up the users without a manager as ``managed_docs``, and has
        # no count to sum.
        managed = {"$filter": {"input": "$managed_docs", "as": "managed", "cond": allowed(user, "managed")}}
        counted = {"$cond": [allowed(user, "owner"), {"$size": managed}, 0]}
        return {"$map": {"input": "$owner_docs", "as": "owner", "in": counted}}

    # Summed through a variable: ``$sum`` of an array read from a path adds its elements.
    owner_reports = Computed(
        lambda allowed: {"$let": {"vars": {"counts": per_owner(allowed)}, "in": {"$sum": "$$counts"}}},
        reads=(user,),
    )
    owner, manager = link_id("$owner"), link_id("$manager")
    return AliasBackends(
        BeanieBackend(
            user,
            pipeline=[_lookup("$_id", manager, "report_docs")],
            computed={"reports": (reports, int)},
        ),
        BeanieBackend(
            beanie_documents.Thing,
            pipeline=[_lookup(owner, "$_id", "owner_docs"), _lookup(owner, manager, "managed_docs")],
            computed={"owner_reports": (owner_reports, int)},
        ),
    )


def _lookup(local: object, foreign: object, into: str) -> dict[str, Any]:
    """The users whose ``foreign`` equals the listed document's ``local`` (null equals null, as with localField).

    A link's identifier is read with ``link_id``: MongoDB's documentation refuses ``manager.$id`` as a field path.
    """
    match = {"$expr": {"$eq": [foreign, "$$key"]}}
    return {"$lookup": {"from": "users", "let": {"key": local}, "pipeline": [{"$match": match}], "as": into}}


BACKENDS: Mapping[str, Callable[[], AliasBackends]] = {
    "sqlalchemy": sqlalchemy_backends,
    "piccolo": piccolo_backends,
    "beanie": beanie_backends,
}
"""Backend name (``tests/matrix.py``) -> its lists of the two values."""


async def listed(
    target: Target, backend: ListingBackend, value: str, params: Sequence[tuple[str, str]], viewer: int | str | None
) -> list[tuple[int, int]]:
    """``(id, value)`` of each item of the page ``params`` ask for, under ``viewer``'s policies."""
    resource = Resource(value, backend)
    query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=policies(viewer))
    async with target.context() as context:
        page = await backend.fetch(query, context)
    return [(item["id"], item[value]) for item in page.items]
