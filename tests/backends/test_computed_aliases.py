"""Computed values through aliases of a policed model on every SQL backend x database (docs/guide/computed.md).

A self-reference (``reports``: a listed user's visible direct reports) and the same model twice
(``owner_reports``: the visible users a visible owner manages) under the User policies of three
tenants, a user without a company and the administrator, listed and ordered by; expectations by
hand (``tests/conformance/aliases.py``). And what cannot be policed is refused when the backend is
built: ``allowed`` of the listed model unaliased, which would police the listed row, not the
counted ones.
"""

from __future__ import annotations

import pytest
from piccolo.columns import Integer
from piccolo.querystring import QueryString
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from litestar_listing import Computed
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.piccolo import policy_condition as piccolo_policy_condition
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.backends.sqlalchemy import policy_condition as sqlalchemy_policy_condition
from litestar_listing.core.errors import ConfigurationError
from tests.conformance import aliases, piccolo_tables
from tests.conformance.aliases import VIEWERS, by_value, expected_owner_reports, expected_reports, listed
from tests.conformance.models import Thing, User
from tests.conformance.targets import Target, target_fixture
from tests.matrix import Store, selected

DATABASE = "litestar_listing_aliases"


target = target_fixture(selected(store=Store.SQL), DATABASE)


@pytest.mark.parametrize("viewer", VIEWERS, ids=str)
async def test_a_self_reference_counts_the_visible_children(target: Target, viewer: int | str | None) -> None:
    backends = aliases.BACKENDS[target.id.split(":")[0]]()
    expected = expected_reports(viewer)
    page = [("order_by", "id"), ("count", "100")]
    assert await listed(target, backends.users, "reports", page, viewer) == sorted(expected.items())
    ordered = [("order_by", "-reports"), ("count", "100")]
    assert await listed(target, backends.users, "reports", ordered, viewer) == by_value(expected)
    second = [("order_by", "reports"), ("count", "2"), ("page", "2")]
    assert (
        await listed(target, backends.users, "reports", second, viewer)
        == sorted(expected.items(), key=lambda pair: (pair[1], pair[0]))[2:4]
    )


@pytest.mark.parametrize("viewer", VIEWERS, ids=str)
async def test_the_same_model_twice_counts_under_both_policies(target: Target, viewer: int | str | None) -> None:
    backends = aliases.BACKENDS[target.id.split(":")[0]]()
    expected = expected_owner_reports(viewer)
    page = [("order_by", "id"), ("count", "100")]
    assert await listed(target, backends.things, "owner_reports", page, viewer) == sorted(expected.items())
    ordered = [("order_by", "-owner_reports"), ("count", "5")]
    assert await listed(target, backends.things, "owner_reports", ordered, viewer) == by_value(expected)[:5]


def test_the_expectations_by_hand() -> None:
    """Hand counts from the fixture's manager chains, and the leaks the values must not have."""
    assert expected_reports(1) == {1: 2, 2: 1, 3: 0, 8: 0}  # Carol's report Frank has no company
    assert expected_reports(2) == {4: 1, 5: 0}  # Dave's report Zoë is Initech's
    assert expected_reports(3) == {7: 0}
    assert expected_reports(None) == {}
    assert expected_reports("administrator") == {1: 2, 2: 1, 3: 1, 4: 2, 5: 0, 6: 0, 7: 0, 8: 0}
    # Things 4 and 12 are Dave's: Globex sees Eve, Initech sees Zoë but not Dave, so nothing.
    assert [expected_owner_reports(viewer)[4] for viewer in VIEWERS] == [0, 1, 0, 0, 2]
    assert [expected_owner_reports(viewer)[1] for viewer in VIEWERS] == [2, 0, 0, 0, 2]  # Alice's
    assert [expected_owner_reports(viewer)[18] for viewer in VIEWERS] == [0, 0, 0, 0, 1]  # Carol's
    assert expected_owner_reports(1)[13] == 0  # no owner


# ---------------------------------------------------------------- refused at start
def test_sqlalchemy_refuses_the_listed_model_unaliased() -> None:
    report = aliased(User)
    leaky = Computed(
        lambda allowed: (
            select(func.count(report.id))
            .where(report.manager_id == User.id, allowed(User))
            .correlate(User)
            .scalar_subquery()
        ),
        reads=(User,),
    )
    message = (
        r"the computed value 'reports': allowed\(User\) is over the table 'users', which the listed rows are read "
        r"from: .* not about the rows the value counts\. Count them through an alias and pass it: "
        r"child = aliased\(User\), allowed\(child\)"
    )
    with pytest.raises(ConfigurationError, match=message):
        SQLAlchemyBackend(User, computed={"reports": leaky})


def test_sqlalchemy_refuses_a_table_the_base_statement_joins_unaliased() -> None:
    owners = Computed(lambda allowed: select(func.count(User.id)).where(allowed(User)).scalar_subquery(), reads=(User,))
    with pytest.raises(ConfigurationError, match=r"allowed\(User\) is over the table 'users'"):
        SQLAlchemyBackend(Thing, statement=lambda statement: statement.join(Thing.owner), computed={"owners": owners})
    # Listing Thing alone, an unaliased User is the subquery's own table: accepted.
    SQLAlchemyBackend(Thing, computed={"owners": owners})


def test_sqlalchemy_takes_the_alias_in_place_of_the_model() -> None:
    report = aliased(User)
    both = Computed(lambda allowed: allowed(User, report), reads=(User,))
    with pytest.raises(ConfigurationError, match=r"pass the aliased entity itself, allowed\(child\)"):
        SQLAlchemyBackend(User, computed={"reports": both})


def test_sqlalchemys_policy_condition_reads_an_alias() -> None:
    policy = aliases.policies(1)[0]
    report = aliased(User, name="report")
    condition = sqlalchemy_policy_condition(report, policy)
    assert condition is not None
    sql = condition.compile(compile_kwargs={"literal_binds": True})
    assert str(sql) == "report.company_id = 1"


def _piccolo_reports(alias: str | None) -> Computed[type[piccolo_tables.User], QueryString]:
    user = piccolo_tables.User
    return Computed(
        lambda allowed: QueryString(
            '(SELECT COUNT(*) FROM "users" AS "report" WHERE "report"."manager_id" = {} AND {})',
            user.id,
            allowed(user, alias),
        ),
        reads=(user,),
    )


@pytest.mark.parametrize("alias", [None, "users"])
def test_piccolo_refuses_the_listed_table_under_its_own_name(alias: str | None) -> None:
    message = (
        r"the computed value 'reports': allowed\(User.*\) is over \"users\", the name the listed rows are read "
        r"under: .* Read them under an alias and pass it: FROM users AS \"child\" and allowed\(User, \"child\"\)"
    )
    with pytest.raises(ConfigurationError, match=message):
        PiccoloBackend(piccolo_tables.User, computed={"reports": (_piccolo_reports(alias), Integer())})


@pytest.mark.parametrize("alias", ["", "child; DROP TABLE users", 'a"b', "{}", "things$owner"])
def test_piccolo_refuses_an_alias_that_is_no_identifier(alias: str) -> None:
    with pytest.raises(ConfigurationError, match="is not an SQL identifier"):
        PiccoloBackend(piccolo_tables.Thing, computed={"reports": (_piccolo_reports(alias), Integer())})


def test_piccolos_policy_condition_reads_an_alias() -> None:
    policy = aliases.policies(2)[0]
    condition = piccolo_policy_condition(piccolo_tables.User, policy, "postgres", alias="report")
    assert condition is not None
    assert condition.compile_string(engine_type="postgres") == ('"report"."company_id" = $1', [2])
    plain = piccolo_policy_condition(piccolo_tables.User, policy, "sqlite")
    assert plain is not None
    assert plain.compile_string(engine_type="sqlite") == ('"users"."company_id" = ?', [2])


def test_sqlalchemy_refuses_what_is_no_mapped_entity() -> None:
    table = Computed(lambda allowed: allowed(User.__table__), reads=(User,))
    with pytest.raises(ConfigurationError, match=r"'owners': allowed\(\) takes a mapped class or an aliased"):
        SQLAlchemyBackend(Thing, computed={"owners": table})
