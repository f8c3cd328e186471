"""Parsing work is bounded by ``Limits``, not by the query string, on every target (docs: security, "Bounds").

Each hostile request below goes through the real list action of the conformance ``things``
resource and must answer a 400 naming the right key, with a body of at most 16 KiB, after a
bounded amount of work. The work is counted, not timed: calls of ``NameIndex.closest`` (one per
"did you mean" lookup) and of ``difflib.SequenceMatcher.ratio`` (the matching inside a lookup),
and the backend's ``fetch`` calls for cursors. The body is encoded as Litestar encodes a 400
(``status_code``, ``detail``, ``extra``); one test checks that against a served app.

A forged keyset cursor whose page number does not fit the list's count is a 400 on ``cursor``;
a genuine one still continues, with the total the first page counted.
"""

from __future__ import annotations

import base64
import difflib
import json
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote, urlencode

import msgspec
import pytest
from litestar.exceptions import ValidationException

from litestar_listing import Resource, list_resource, parse_query
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.core.names import NameIndex
from litestar_listing.core.parsing import Limits, QueryString
from litestar_listing.plugin.exceptions import bad_request
from tests.apps import served as app_serving
from tests.conformance.targets import BEANIE_OPTIONS, THINGS_OPTIONS, memory_target
from tests.hostile import Opened, request
from tests.hostile.test_cost_guards import served
from tests.matrix import selected

BODY_LIMIT = 16 * 1024
"""Bytes a 400 body may take at most, whatever the request."""
LIMITS = Limits()
TOTAL = 31
"""Things in the conformance fixture (``tests/conformance/fixture.py``)."""


@dataclass
class Work:
    """What one request cost, counted by spies."""

    lookups: int = 0
    matches: int = 0
    fetches: int = 0


@dataclass(frozen=True)
class Answer:
    """The status, the 400's ``extra`` entries and its encoded size, or the 200's pagination and headers."""

    status: int
    extra: tuple[dict[str, str], ...] = ()
    size: int = 0
    pagination: dict[str, int] | None = None
    headers: dict[str, str] | None = None

    @property
    def keys(self) -> list[str]:
        return [item["key"] for item in self.extra]


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    """Counts of the did-you-mean lookups and of the matching they do, for the test's requests."""
    counted = Work()
    closest = NameIndex.closest
    ratio = difflib.SequenceMatcher.ratio

    def spy_closest(self: NameIndex, name: str, limit: int = 3) -> list[str]:
        counted.lookups += 1
        return closest(self, name, limit)

    def spy_ratio(self: difflib.SequenceMatcher[str]) -> float:
        counted.matches += 1
        return ratio(self)

    monkeypatch.setattr(NameIndex, "closest", spy_closest)
    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", spy_ratio)
    return counted


def body_size(error: ValidationException) -> int:
    """The bytes of the JSON body Litestar sends for ``error`` (``test_served_body_matches`` checks it)."""
    return len(msgspec.json.encode({"status_code": error.status_code, "detail": error.detail, "extra": error.extra}))


def resource_of(opened: Opened, *, keyset: bool = False) -> Resource:
    """The conformance ``things`` resource, or the same over the same backend with keyset continuation."""
    things = opened.target.resources["things"]
    if not keyset:
        return things
    document = "syntax:document" in opened.target.capabilities
    return Resource("things_keyset", things.backend, keyset=True, **(BEANIE_OPTIONS if document else THINGS_OPTIONS))


def ask(opened: Opened, query: str, resource: Resource | None = None) -> Answer:
    """``list_resource`` of ``resource`` (default: ``things``) for an anonymous request with ``query``."""
    listed = resource or resource_of(opened)

    async def run() -> Answer:
        try:
            async with opened.target.context() as context:
                connection = request(query, None, app_serving(listed))
                result = await list_resource(listed, connection, session=context.session)
        except InvalidQueryError as invalid:
            error = bad_request(invalid)  # the 400 the plugin's exception handler answers
            extra = cast("list[dict[str, str]]", error.extra)
            return Answer(error.status_code, tuple(extra), body_size(error))
        return Answer(200, pagination=msgspec.to_builtins(result.envelope)["pagination"], headers=dict(result.headers))

    return opened.loop.run_until_complete(run())


def bad(answer: Answer, keys: list[str]) -> None:
    """``answer`` is a 400 listing ``keys`` in order, within the body limit."""
    assert answer.status == 400, answer
    assert answer.keys == keys
    assert answer.size <= BODY_LIMIT


# ------------------------------------------------------------------------------------------ order_by


@pytest.mark.parametrize(
    "value",
    [",".join(["dest_airport__nam"] * 7080), ",".join(["dy"] * 20_000)],
    ids=["7080-terms-127-kB", "repeated-term-60-kB"],
)
def test_an_order_by_past_the_query_length_is_not_read(opened: Opened, work: Work, value: str) -> None:
    assert len(value) > LIMITS.max_query_length
    answer = ask(opened, "order_by=" + value)
    bad(answer, ["order_by"])
    assert answer.extra[0]["message"].startswith("was not read: a request is read up to 64 parameters")
    assert (work.lookups, work.matches) == (0, 0)


def test_order_by_terms_are_counted_before_any_is_read(opened: Opened, work: Work) -> None:
    answer = ask(opened, "order_by=" + ",".join(["dest_airport__nam"] * 450))  # 8 kB, within the query length
    bad(answer, ["order_by"])
    assert answer.extra[0]["message"].startswith("expected at most 8 terms, not 450.")
    assert (work.lookups, work.matches) == (0, 0)


def test_a_repeated_misspelt_term_is_looked_up_once(opened: Opened, work: Work) -> None:
    answer = ask(opened, "order_by=" + ",".join(["nme"] * LIMITS.max_order_terms))
    bad(answer, ["order_by"] * LIMITS.max_order_terms)
    assert all("did you mean 'name'" in item["message"] for item in answer.extra)
    assert work.lookups == 1


def test_at_most_three_names_get_a_hint(opened: Opened, work: Work) -> None:
    terms = ["nme", "nam", "nmae", "stauts", "quantty", "wieght", "prise", "activ"]
    answer = ask(opened, "order_by=" + ",".join(terms))
    bad(answer, ["order_by"] * len(terms))
    hinted = [item for item in answer.extra if "did you mean" in item["message"]]
    assert work.lookups == LIMITS.max_suggestions == len(hinted)
    assert [item["message"] for item in answer.extra[LIMITS.max_suggestions :]] == [
        f"{term!r} is not an orderable field. Write [-]field[,[-]field...]." for term in terms[3:]
    ]


# ------------------------------------------------------------------------------------------ names


def test_10000_distinct_unknown_names_are_read_up_to_the_limit(opened: Opened, work: Work) -> None:
    answer = ask(opened, "&".join(f"f{number}=v" for number in range(10_000)))
    max_filters, max_names = LIMITS.max_filters, LIMITS.max_parameters
    bad(answer, [f"f{max_filters}", f"f{max_names}"])
    assert answer.extra[0]["message"] == f"at most {max_filters} filter parameters per request"
    assert answer.extra[1]["message"].startswith(f"and the {10_000 - max_names - 1} after it were not read")
    assert (work.lookups, work.matches) == (0, 0)


def test_50_misspelt_names_list_20_problems_and_a_count(opened: Opened, work: Work) -> None:
    names = [f"nme{number}" for number in range(LIMITS.max_filters)]
    answer = ask(opened, "&".join(f"{name}=v" for name in names))
    shown = LIMITS.max_problems
    bad(answer, [*names[:shown], names[shown]])
    assert answer.extra[-1]["message"].startswith(f"and {len(names) - shown} more problems from this parameter on")
    assert work.lookups == LIMITS.max_suggestions


def test_names_of_20000_characters_are_not_read(opened: Opened, work: Work) -> None:
    names = [letter * 20_000 for letter in "nqs"]
    answer = ask(opened, "&".join(f"{name}=1" for name in names) + "&order_by=" + "n" * 20_000)
    bad(answer, [names[0][:40] + "…"])
    assert answer.extra[0]["message"].startswith("and the 3 after it were not read")
    assert (work.lookups, work.matches) == (0, 0)


def test_names_past_the_length_limit_are_shown_cut_and_never_matched(opened: Opened, work: Work) -> None:
    names = [letter * 2_000 for letter in "nqs"]
    answer = ask(opened, "&".join(f"{name}=1" for name in names) + "&order_by=" + "n" * 2_000)
    bad(answer, [*(name[:40] + "…" for name in names), "order_by"])
    assert answer.extra[0]["message"] == "is 2000 characters long; parameter names have at most 128"
    assert work.matches == 0
    assert work.lookups <= 1


def test_a_400_of_the_worst_names_stays_under_16_kib(opened: Opened, work: Work) -> None:
    # Names at the length limit made of control characters: 6 bytes each in JSON, twice per entry.
    names = ["\x01" * (LIMITS.max_name_length - 2) + f"{number:02}" for number in range(LIMITS.max_filters)]
    answer = ask(opened, urlencode([(name, "v") for name in names]))
    assert answer.status == 400
    assert answer.size <= BODY_LIMIT
    assert 2 <= len(answer.extra) <= LIMITS.max_problems + 1
    assert answer.extra[-1]["message"].startswith("and ")
    assert work.lookups <= LIMITS.max_suggestions


# ------------------------------------------------------------------------------------------ cursor


def forged(token: str, page: int) -> str:
    """``token`` with its page number replaced by ``page`` (a cursor is not signed: anyone can)."""
    payload = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    payload[1] = page
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()


@pytest.fixture
def fetches(opened: Opened, monkeypatch: pytest.MonkeyPatch) -> Work:
    """Counts the backend's ``fetch`` calls."""
    counted = Work()
    backend = resource_of(opened).backend
    fetch = type(backend).fetch

    async def spy(self: Any, *arguments: Any) -> Any:
        counted.fetches += 1
        return await fetch(self, *arguments)

    monkeypatch.setattr(type(backend), "fetch", spy)
    return counted


@pytest.mark.parametrize("page", [92233720368547758, 5, 4], ids=["page-9.2e16", "page-5", "page-4"])
def test_a_forged_cursor_page_is_refused(opened: Opened, fetches: Work, page: int) -> None:
    if "keyset" not in opened.target.capabilities:
        pytest.skip(f"{opened.target.id} has no keyset continuation")
    keyset = resource_of(opened, keyset=True)
    first = ask(opened, "order_by=id&count=10", keyset)
    assert first.pagination == {"page": 1, "count": 10, "total": TOTAL, "total_pages": 4}
    assert first.headers is not None
    token = first.headers["X-Next-Cursor"]
    fetches.fetches = 0
    # Page 4 holds 1 item (31 = 3 * 10 + 1): page 4 after page 1's last item would hold 10.
    answer = ask(opened, f"order_by=id&count=10&cursor={quote(forged(token, page))}", keyset)
    bad(answer, ["cursor"])
    assert f"past the {TOTAL} items" in answer.extra[0]["message"]
    assert fetches.fetches == 1
    genuine = ask(opened, f"order_by=id&count=10&cursor={quote(token)}", keyset)
    assert genuine.pagination == {"page": 2, "count": 10, "total": TOTAL, "total_pages": 4}


# ------------------------------------------------------------------------------------------ served


@pytest.mark.skipif(not selected(backend="memory"), reason="the served app lists the memory backend")
@pytest.mark.parametrize(
    "query",
    [
        "order_by=" + ",".join(["dest_airport__nam"] * 7080),
        "&".join(f"f{number}=v" for number in range(10_000)),
        urlencode([("\x01" * 126 + f"{number:02}", "v") for number in range(50)]),
    ],
    ids=["order-by-7080", "names-10000", "control-names"],
)
async def test_served_body_matches(query: str) -> None:
    """The size ``body_size`` computes is the size of the body a served app sends (on one backend: the memory one)."""
    status, body = await served(query)
    assert status == 400
    things = memory_target().resources["things"]
    app = app_serving(things)
    with pytest.raises(InvalidQueryError) as raised:
        parse_query(things, QueryString.read(query, LIMITS), app=app)
    assert body_size(bad_request(raised.value)) == len(body) <= BODY_LIMIT
