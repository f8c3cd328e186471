"""The demo's API explorer without a browser: an offline page, its files served, the bearer scheme in the schema.

Runs on each selected backend (SQLAlchemy, Piccolo) x database (SQLite, PostgreSQL), over the demo
database ``tests/demo/test_demo_api.py`` loads once per test session. ``tests/browser`` runs the same
page in Chromium.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing.demo.data import DEMO_USERS
from litestar_listing.demo.explorer import (
    ASSETS_PATH,
    EXPLORER_PATH,
    SCHEMA_PATH,
    SECURITY_SCHEME,
    swagger_ui_assets,
)

# The demo app per backend x database on the loaded data, shared with the API tests.
from tests.demo.test_demo_api import DEMO_BACKENDS, client

__all__ = ("client",)  # the demo app per backend x database, the same fixture as the API tests

pytestmark = pytest.mark.skipif(not DEMO_BACKENDS, reason="the demo runs on the SQLAlchemy and Piccolo backends")

CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


class _References(HTMLParser):
    """Every ``src`` and ``href`` of a page, and the text of its inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls.extend(value for name, value in attrs if name in {"src", "href"} and value is not None)
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.scripts.append(data)


def references(client: TestClient[Litestar], path: str) -> _References:
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    parser = _References()
    parser.feed(response.text)
    return parser


@pytest.mark.parametrize("path", [SCHEMA_PATH, EXPLORER_PATH])
def test_the_explorer_page_references_only_files_of_this_server(client: TestClient[Litestar], path: str) -> None:
    page = client.get(path).text
    assert re.search(r"https?://", page) is None
    found = references(client, path)
    files = ("favicon-32x32.png", "swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js")
    assert sorted(found.urls) == sorted(f"{ASSETS_PATH}/{name}" for name in files)
    # Litestar's own page (SwaggerRenderPlugin), the document inline: its one script is Litestar's.
    (script,) = found.scripts
    assert script.lstrip().startswith("const ui = SwaggerUIBundle({")
    assert '"operationId":"list_flights"' in script
    assert "wrapSelectors" not in script  # no patch of Swagger UI's own code


def test_every_file_the_page_references_is_served_from_the_installed_package(client: TestClient[Litestar]) -> None:
    folder = swagger_ui_assets()
    for url in references(client, EXPLORER_PATH).urls:
        response = client.get(url)
        assert response.status_code == 200, url
        suffix = url[url.rindex(".") :]
        assert response.headers["content-type"].startswith(CONTENT_TYPES[suffix]), url
        assert response.content == (folder / url.rsplit("/", 1)[1]).read_bytes()
    assert b"SwaggerUIBundle" in client.get(f"{ASSETS_PATH}/swagger-ui-bundle.js").content
    assert client.get(f"{ASSETS_PATH}/no-such-file.js").status_code == 404


def test_the_explorer_and_its_files_need_no_token_while_the_api_still_checks_tokens(
    client: TestClient[Litestar],
) -> None:
    # The demo's middleware answers 401 to an unknown token: not on the explorer's paths.
    bad = {"Authorization": "Bearer not-a-demo-token"}
    for path in (EXPLORER_PATH, f"{ASSETS_PATH}/swagger-ui.css", f"{SCHEMA_PATH}/openapi.json"):
        assert client.get(path, headers=bad).status_code == 200, path
    assert client.get("/api/v1/airlines/", headers=bad).status_code == 401


def test_the_schema_is_served_with_the_optional_bearer_scheme(client: TestClient[Litestar]) -> None:
    schema: dict[str, Any] = client.get(f"{SCHEMA_PATH}/openapi.json").json()
    assert schema["openapi"].startswith("3.1")
    assert schema["components"]["securitySchemes"][SECURITY_SCHEME] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"][SECURITY_SCHEME]["description"],
    }
    assert schema["security"] == [{}, {SECURITY_SCHEME: []}]
    description = schema["components"]["securitySchemes"][SECURITY_SCHEME]["description"]
    assert all(user.token in description for user in DEMO_USERS)
    assert "/api/v1/flights" in schema["paths"]
    yaml = client.get(f"{SCHEMA_PATH}/openapi.yaml")
    assert yaml.status_code == 200
    assert f"{SECURITY_SCHEME}:" in yaml.text
    # The CDN-based pages Litestar serves by default are gone: the explorer is the one page.
    for page in ("redoc", "rapidoc", "elements"):
        assert client.get(f"{SCHEMA_PATH}/{page}").status_code == 404


def test_the_scheme_signs_a_request_in_as_a_demo_user(client: TestClient[Litestar]) -> None:
    # What the explorer sends once authorized with the scheme: the user's tenant scope applies.
    anonymous = client.get("/api/v1/flights/?count=5").json()
    signed_in = client.get("/api/v1/flights/?count=5", headers={"Authorization": "Bearer demo-ua"}).json()
    assert {item["carrier"] for item in signed_in["data"]} == {"UA"}
    assert signed_in["pagination"]["total"] < anonymous["pagination"]["total"]
