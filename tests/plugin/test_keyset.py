"""Keyset continuation through the plugin, on the memory backend: headers, cursor errors, OpenAPI.

The ordering semantics of a cursor walk are checked on every backend by ``tests/conformance/test_keyset.py``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing import ListingPlugin, MemoryBackend, Resource
from litestar_listing.core.cursor import CursorToken
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.plugin.prepared import prepare
from tests.unit.graph import GRAPH

# 25 rows; ``small`` repeats (0, 1, 2), so ordering by it needs the id tie-breaker.
ROWS = [{"id": i, "name": f"thing {i:02d}", "small": i % 3, "owner_id": 1, "owner": None} for i in range(1, 26)]


def make_app(*, keyset: bool = True) -> Litestar:
    things = Resource(
        "things", MemoryBackend(GRAPH, ROWS), default_order=("id",), search_fields=("name",), keyset=keyset
    )
    return Litestar(plugins=[ListingPlugin([things])])


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(make_app()) as test_client:
        yield test_client


def keys(response: object) -> list[str]:
    return [error["key"] for error in response.json()["extra"]]  # type: ignore[attr-defined]


def test_pages_follow_the_link_header_to_the_end(client: TestClient[Litestar]) -> None:
    url = "/api/v1/things/?order_by=-small&count=4&search=thing"
    seen: list[int] = []
    pages = []
    while True:
        response = client.get(url)
        assert response.status_code == 200
        body = response.json()
        pages.append(body["pagination"]["page"])
        assert body["pagination"]["total"] == 25
        seen.extend(item["id"] for item in body["data"])
        if "link" not in response.headers:
            assert "x-next-cursor" not in response.headers
            break
        link = response.headers["link"]
        assert link.endswith('>; rel="next"')
        url = link[1 : link.index(">")]
        assert urlsplit(url).path == "/api/v1/things/"  # as the client wrote it
        query = parse_qs(urlsplit(url).query)
        assert query["cursor"] == [response.headers["x-next-cursor"]]
        assert "page" not in query
        assert query["order_by"] == ["-small"]
    # small descending (2, 1, 0), ids ascending within each: computed by hand from ROWS.
    expected = [i for small in (2, 1, 0) for i in range(1, 26) if i % 3 == small]
    assert seen == expected
    assert pages == [1, 2, 3, 4, 5, 6, 7]


def test_an_offset_page_carries_the_cursor_of_the_next(client: TestClient[Litestar]) -> None:
    third = client.get("/api/v1/things/?page=3&count=5")
    fourth = client.get("/api/v1/things/", params={"cursor": third.headers["x-next-cursor"]})
    assert [item["id"] for item in fourth.json()["data"]] == [16, 17, 18, 19, 20]
    assert fourth.json()["pagination"] == {"page": 4, "count": 5, "total": 25, "total_pages": 5}


def test_the_last_full_page_has_no_cursor(client: TestClient[Litestar]) -> None:
    response = client.get("/api/v1/things/?page=5&count=5")
    assert [item["id"] for item in response.json()["data"]] == [21, 22, 23, 24, 25]
    assert "x-next-cursor" not in response.headers


def cursor_of(client: TestClient[Litestar], query: str) -> str:
    return client.get(f"/api/v1/things/?{query}").headers["x-next-cursor"]


@pytest.mark.parametrize(
    ("query", "expected_keys"),
    [
        ("order_by=name", ["cursor"]),  # another order
        ("small=1", ["cursor"]),  # a filter added
        ("search=thing", ["cursor"]),  # a search added
        ("page=2", ["page"]),  # a cursor says its page
        ("count=7", ["count"]),  # made for pages of 5
    ],
)
def test_a_cursor_only_continues_its_own_list(
    client: TestClient[Litestar], query: str, expected_keys: list[str]
) -> None:
    cursor = cursor_of(client, "count=5")
    response = client.get(f"/api/v1/things/?{query}&cursor={cursor}")
    assert response.status_code == 400
    assert keys(response) == expected_keys


def test_the_same_count_may_be_repeated(client: TestClient[Litestar]) -> None:
    cursor = cursor_of(client, "count=5")
    response = client.get(f"/api/v1/things/?count=5&cursor={cursor}")
    assert [item["id"] for item in response.json()["data"]] == [6, 7, 8, 9, 10]


def forged(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not base64 !",
        "%00",
        "x" * 5000,
        forged({"page": 2}),
        forged([2, 2, 5, "0" * 16, ["5"]]),  # unknown version
        forged([1, 0, 5, "0" * 16, ["5"]]),  # page 0
        forged([1, 2, True, "0" * 16, ["5"]]),  # count not an integer
        forged([1, 2, 500, "0" * 16, ["5"]]),  # count past the limit
        forged([1, 2**62, 100, "0" * 16, ["5"]]),  # offset past 64 bits
        forged([1, 2, 5, "0" * 16, [5]]),  # values are text
    ],
)
def test_a_malformed_or_forged_cursor_is_a_400(client: TestClient[Litestar], cursor: str) -> None:
    response = client.get("/api/v1/things/", params={"cursor": cursor})
    assert response.status_code == 400
    assert keys(response) == ["cursor"] or keys(response) == ["count"]


def test_values_that_do_not_fit_the_order_fields_are_a_400(client: TestClient[Litestar]) -> None:
    token = CursorToken.decode(cursor_of(client, "count=5"))
    bad = CursorToken(token.page, token.count, token.fingerprint, ("five",)).encode()
    response = client.get("/api/v1/things/", params={"cursor": bad})
    assert response.status_code == 400
    assert keys(response) == ["cursor"]
    # The same token with a value that fits is a valid starting point, however it was made.
    moved = CursorToken(token.page, token.count, token.fingerprint, ("20",)).encode()
    assert [item["id"] for item in client.get("/api/v1/things/", params={"cursor": moved}).json()["data"]] == [
        21,
        22,
        23,
        24,
        25,
    ]


def test_without_keyset_cursor_is_a_filter_name() -> None:
    with TestClient(make_app(keyset=False)) as client:
        response = client.get("/api/v1/things/?count=5")
        assert "x-next-cursor" not in response.headers
        response = client.get("/api/v1/things/?cursor=abc")
        assert response.status_code == 400
        assert keys(response) == ["cursor"]
        assert "not a filter" in response.json()["extra"][0]["message"] or "unknown" in response.text.lower()


def test_openapi_documents_the_cursor_and_headers(client: TestClient[Litestar]) -> None:
    operation = client.get("/schema/openapi.json").json()["paths"]["/api/v1/things"]["get"]
    parameters = {parameter["name"]: parameter for parameter in operation["parameters"]}
    assert parameters["cursor"]["schema"]["type"] == "string"
    assert set(operation["responses"]["200"]["headers"]) == {"X-Next-Cursor", "Link"}


def test_a_backend_without_keyset_fails_at_start() -> None:
    class NoKeyset(MemoryBackend):
        capabilities = MemoryBackend.capabilities.__class__()

    with pytest.raises(ConfigurationError, match="keyset"):
        prepare(Resource("things", NoKeyset(GRAPH, ROWS), keyset=True))
