"""The quick start and the query-language page, run: every request they show, and every answer.

Each example directory (``docs/examples/quickstart``, ``docs/examples/query``) holds an ``app.py``
building a Litestar ``app`` and an ``exchanges/`` folder of ``<name>.http`` (the request line) and
``<name>.json`` (the response body) that the page includes verbatim. The tests send each request
through Litestar's test client and compare the whole body, and check that the page includes every
exchange. The query-language page's tables of requests (first cell a query string, last cell the
ids listed, in order) are read from the page itself and run too.

``python -m tests.docs.test_query_examples --write`` rewrites the ``.json`` files from the apps'
answers (then review the diff: the pages show them).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing import OPERATORS

DOCS = Path(__file__).resolve().parents[2] / "docs"


@dataclass(frozen=True)
class Example:
    """One example directory and the page that shows it."""

    name: str
    page: str
    resource_path: str

    @property
    def module(self) -> str:
        return f"docs.examples.{self.name}.app"

    @property
    def exchanges(self) -> list[Path]:
        return sorted((DOCS / "examples" / self.name / "exchanges").glob("*.http"))


EXAMPLES = [
    Example("quickstart", "quickstart.md", "/api/v1/tasks/"),
    Example("query", "query-language.md", "/api/v1/books/"),
]
QUERY = EXAMPLES[1]


def request_target(http_file: Path) -> str:
    """The path and query of a ``GET <target> HTTP/1.1`` file."""
    method, target, protocol = http_file.read_text(encoding="utf-8").strip().split(" ")
    assert (method, protocol) == ("GET", "HTTP/1.1"), http_file
    return target


def app_of(example: Example) -> Litestar:
    module = importlib.import_module(example.module)
    config = getattr(module, "config", None)
    if isinstance(config, SQLAlchemyAsyncConfig):
        # advanced-alchemy gives every config after the first in a process a new state key, and then
        # does not dispose its engine when the app stops; with the keys aligned it does.
        config.engine_dependency_key = config.engine_app_state_key
    app = module.app
    assert isinstance(app, Litestar)
    return app


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.name for example in EXAMPLES])
def test_every_exchange_answers_as_documented(example: Example) -> None:
    assert example.exchanges, f"no exchanges in docs/examples/{example.name}/exchanges"
    with TestClient(app_of(example)) as client:
        for http_file in example.exchanges:
            documented = json.loads(http_file.with_suffix(".json").read_text(encoding="utf-8"))
            response = client.get(request_target(http_file))
            assert response.json() == documented, http_file.name
            assert response.status_code == documented.get("status_code", 200), http_file.name


def test_the_page_includes_every_exchange_and_its_answer() -> None:
    for example in EXAMPLES:
        page = (DOCS / example.page).read_text(encoding="utf-8")
        for http_file in example.exchanges:
            for suffix in (".http", ".json"):
                included = f"examples/{example.name}/exchanges/{http_file.stem}{suffix}"
                assert f"```{{literalinclude}} {included}\n" in page, f"{example.page} does not show {included}"
        assert f"```{{literalinclude}} examples/{example.name}/app.py\n" in page


# A row of a Markdown table whose first cell is a query string and whose last cell is the ids listed.
_ROW = re.compile(r"^\| `(?P<query>\?[^`]*)` \|.*\| (?P<ids>none|\d+(?:, \d+)*) \|$")


@dataclass(frozen=True)
class Row:
    query: str
    ids: list[int]


def query_rows() -> list[Row]:
    """Every request of the query-language page's tables, with the ids the page says it lists."""
    rows = []
    for line in (DOCS / QUERY.page).read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            ids = [] if match["ids"] == "none" else [int(number) for number in match["ids"].split(", ")]
            rows.append(Row(match["query"], ids))
    return rows


def test_the_tables_list_what_the_page_says() -> None:
    rows = query_rows()
    assert len(rows) >= 30
    with TestClient(app_of(QUERY)) as books:
        for row in rows:
            response = books.get(QUERY.resource_path + row.query)
            assert response.status_code == 200, (row.query, response.text)
            body: dict[str, Any] = response.json()
            assert [item["id"] for item in body["data"]] == row.ids, row.query
            if "page=" not in row.query and "count=" not in row.query:
                assert body["pagination"]["total"] == len(row.ids), row.query


def test_the_data_table_shows_the_apps_rows() -> None:
    module = importlib.import_module(QUERY.module)
    page = " ".join((DOCS / QUERY.page).read_text(encoding="utf-8").split())
    authors = ", ".join(f"{author_id} {name} ({country})" for author_id, name, country in module.AUTHORS)
    assert f"Authors (`author`, to-one): {authors}." in page
    tagged = "; ".join(
        f"{name} on books {', '.join(str(book[0]) for book in module.BOOKS if tag_id in book[8])}"
        for tag_id, name in module.TAGS
    )
    untagged = [book[0] for book in module.BOOKS if not book[8]]
    assert f"Tags (`tags`, many-to-many): {tagged}; book {untagged[0]} has none." in page
    lines = [
        "| id | title | author_id | pages | price | published | in_print | rating |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for book_id, title, pages, price, published, in_print, rating, author_id, _ in module.BOOKS:
        cells = [book_id, title, author_id, pages, price, published, str(in_print).lower()]
        cells.append("NULL" if rating is None else rating)
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    assert " ".join(lines) in page


def test_every_operator_and_reserved_parameter_has_an_example() -> None:
    queries = [row.query for row in query_rows()]
    queries += [request_target(path) for path in QUERY.exchanges]
    for name in OPERATORS:
        assert any(re.search(rf"__{name}=", query) for query in queries), f"no example of {name}"
    for reserved in ("page", "count", "search", "order_by"):
        assert any(re.search(rf"[?&]{reserved}=", query) for query in queries), f"no example of {reserved}"
    # Repetition: a parameter given twice in one request.
    assert any(len(names := re.findall(r"[?&]([^=&]+)=", query)) > len(set(names)) for query in queries)


def test_the_reference_documents_the_public_api() -> None:
    import litestar_listing

    reference = (DOCS / "reference.rst").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\.\. auto(?:class|function|exception|data):: (\w+)$", reference, re.MULTILINE))
    assert documented == set(litestar_listing.__all__)
    for backend in ("sqlalchemy", "piccolo", "beanie"):
        assert f".. automodule:: litestar_listing.backends.{backend}\n   :members:" in reference


def write_answers() -> None:
    """Rewrite every ``<name>.json`` from the example apps' answers."""
    for example in EXAMPLES:
        with TestClient(app_of(example)) as client:
            for http_file in example.exchanges:
                body = client.get(request_target(http_file)).json()
                text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
                http_file.with_suffix(".json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m tests.docs.test_query_examples --write")
    write_answers()
