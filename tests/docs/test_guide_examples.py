"""The guide pages (``docs/guide/``) and their examples (``docs/examples/guide/``), run.

Every example module builds a Litestar ``app`` (the Beanie one a ``create_app(database)``, run here
on the in-memory document store of ``tests/document_store/mongomock_adapter.py``). The tests below
send requests through Litestar's test client and assert what each page claims.

The pages also quote whole exchanges, in ``console`` blocks after a ``% app: <example>`` comment::

    $ curl -s -H 'Authorization: Bearer ann' 'http://127.0.0.1:8000/api/v1/tickets/' | jq -c '[.data[].id]'
    [1,2,5]

``test_quoted_exchanges_are_real`` replays each one against the named example and compares every
output line (JSON, compared as values; ``jq -c`` takes the paths ``.a.b``, ``.a[0]`` and ``[.a[].b]``).
``python -m tests.docs.test_guide_examples --write`` rewrites the output lines from the apps' answers
(then review the diff: the pages show them).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import re
import shlex
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import TestClient
from sqlalchemy import func, select

from litestar_listing import Computed, ConfigurationError, ListingPlugin, Resource, parse_query
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.plugin import ListingRouteHandler
from litestar_listing.plugin.binding import binding_of
from litestar_listing.plugin.prepared import prepare
from tests.openapi_parameters import sent_parameters
from tests.schema_check import problems

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDE = DOCS / "guide"
PAGES = sorted(GUIDE.glob("*.md"))
AA_GUIDE_VERSION = (1, 12)
"""The advanced-alchemy the guide "Coming from advanced-alchemy" is written against: its providers,
pagination and filters as that version has them. Older versions, down to this project's floor (the
floors session), differ there (and use parts of Litestar's DI that Litestar deprecated), so the
guide's example and its checks run from this version on."""
ADVANCED_ALCHEMY_GUIDE = tuple(int(part) for part in version("advanced-alchemy").split(".")[:2]) >= AA_GUIDE_VERSION
_OLD_ADVANCED_ALCHEMY = f"the guide is written against advanced-alchemy {'.'.join(map(str, AA_GUIDE_VERSION))} or later"
SQL_EXAMPLES = (
    "resources",
    "backends",
    "sqlite_datetime",
    "piccolo_relations",
    "scoping",
    "inherited_policies",
    "jwt",
    "soft_delete",
    "computed",
    "computed_aliases",
    "enrichment",
    "eager_loading",
    "facets",
    "security",
    "fairness",
    "admission",
    "extensions",
    "versions",
    "problem_details",
    "own_handlers",
    "indexes",
    *(("from_advanced_alchemy",) if ADVANCED_ALCHEMY_GUIDE else ()),
)
BEANIE_EXAMPLE = "beanie_notes"
BASE_URL = "http://127.0.0.1:8000"

Clients = dict[str, TestClient[Litestar]]


def example(name: str) -> ModuleType:
    """The example module ``docs/examples/guide/<name>.py``."""
    return importlib.import_module(f"docs.examples.guide.{name}")


def beanie_app() -> Litestar:
    """The Beanie example's app on a fresh in-memory document store."""
    pytest.importorskip("beanie")
    pytest.importorskip("mongomock_motor")
    from tests.document_store.mongomock_adapter import check_versions, mongomock_client

    check_versions()
    app = example(BEANIE_EXAMPLE).create_app(mongomock_client()["docs_guide"])
    assert isinstance(app, Litestar)
    return app


def open_clients(stack: ExitStack, names: tuple[str, ...]) -> Clients:
    clients: Clients = {}
    for name in names:
        app = beanie_app() if name == BEANIE_EXAMPLE else example(name).app
        assert isinstance(app, Litestar)
        clients[name] = stack.enter_context(TestClient(app, raise_server_exceptions=True))
    return clients


@pytest.fixture(scope="module")
def clients() -> Iterator[Clients]:
    """One client per example app, open for the whole module (each app seeds its store at start-up)."""
    with ExitStack() as stack:
        yield open_clients(stack, (*SQL_EXAMPLES, BEANIE_EXAMPLE))


def get(client: TestClient[Litestar], url: str, user: str | None = None, status: int = 200) -> Any:
    headers = {"Authorization": f"Bearer {user}"} if user else {}
    response = client.get(url, headers=headers)
    assert response.status_code == status, response.text
    return response.json()


def ids(body: Any) -> list[Any]:
    return [item["id"] for item in body["data"]]


def error_keys(body: Any) -> list[str]:
    return [entry["key"] for entry in body["extra"]]


# ---------------------------------------------------------------- quoted exchanges
@dataclass
class Exchange:
    """One ``$ curl`` line of a page, its expected output lines, and where they are."""

    page: Path
    app: str
    command: str
    outputs: list[str]
    line: int  # index of the command line in the page

    @property
    def id(self) -> str:
        return f"{self.page.stem}:{self.line + 1}"


_CURL = re.compile(r"^\$ (curl .+)$")
_APP = re.compile(r"^% app: (\w+)\s*$")


def exchanges(page: Path) -> list[Exchange]:
    """Every quoted exchange of ``page``."""
    found: list[Exchange] = []
    app = ""
    in_console = False
    current: Exchange | None = None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines()):
        if not in_console:
            marker = _APP.match(line)
            if marker:
                app = marker.group(1)
            in_console = line.strip() == "```console"
            continue
        if line.strip() == "```":
            in_console, current = False, None
            continue
        command = _CURL.match(line)
        if command:
            assert app, f"{page.name}:{number + 1}: no '% app: <example>' line before this exchange"
            current = Exchange(page, app, command.group(1), [], number)
            found.append(current)
        elif current is not None:
            current.outputs.append(line)
    return found


def _parse_command(command: str) -> tuple[str, dict[str, str], list[str]]:
    """``curl -s [-H 'k: v']... 'url' [| jq -c 'expr']`` -> (path and query, headers, jq expressions)."""
    curl, _, jq = command.partition(" | ")
    words = shlex.split(curl)
    assert words[:2] == ["curl", "-s"], command
    headers: dict[str, str] = {}
    rest = words[2:]
    while rest[0] == "-H":
        name, _, value = rest[1].partition(": ")
        headers[name] = value
        rest = rest[2:]
    assert len(rest) == 1, command
    assert rest[0].startswith(BASE_URL), command
    expressions: list[str] = []
    if jq:
        jq_words = shlex.split(jq)
        assert jq_words[:2] == ["jq", "-c"], command
        assert len(jq_words) == 3, command
        expressions = _split_top_level(jq_words[2])
    return rest[0].removeprefix(BASE_URL), headers, expressions


def _split_top_level(expression: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for position, char in enumerate(expression):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(expression[start:position].strip())
            start = position + 1
    parts.append(expression[start:].strip())
    return parts


_STEP = re.compile(r"\.(\w+)|\[(\d*)\]")


def jq(expression: str, document: Any) -> Any:
    """The tiny part of jq the pages use: ``.a.b``, ``.a[0]``, ``.a[].b`` and ``[...]`` around one."""
    collect = expression.startswith("[") and expression.endswith("]")
    path = expression[1:-1] if collect else expression
    values = [document]
    position = 0
    while position < len(path):
        step = _STEP.match(path, position)
        assert step is not None, f"unsupported jq path {expression!r}"
        key, index = step.groups()
        if key is not None:
            values = [value[key] for value in values]
        elif index:
            values = [value[int(index)] for value in values]
        else:
            values = [item for value in values for item in value]
        position = step.end()
    if collect:
        return values
    assert len(values) == 1, f"{expression!r} yields {len(values)} values; wrap it in [...]"
    return values[0]


def answer(client: TestClient[Litestar], command: str) -> list[Any]:
    """The output values of a quoted command, from the app."""
    target, headers, expressions = _parse_command(command)
    body = client.get(target, headers=headers).json()
    return [jq(expression, body) for expression in expressions] if expressions else [body]


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


ALL_EXCHANGES = [exchange for page in PAGES for exchange in exchanges(page)]


def test_every_page_quotes_exchanges() -> None:
    quoting = {exchange.page.name for exchange in ALL_EXCHANGES}
    assert quoting == {page.name for page in PAGES}
    assert len(ALL_EXCHANGES) >= 20


@pytest.mark.parametrize("exchange", ALL_EXCHANGES, ids=[exchange.id for exchange in ALL_EXCHANGES])
def test_quoted_exchanges_are_real(exchange: Exchange, clients: Clients) -> None:
    if exchange.app == "from_advanced_alchemy" and not ADVANCED_ALCHEMY_GUIDE:
        pytest.skip(_OLD_ADVANCED_ALCHEMY)
    expected = [json.loads(line) for line in exchange.outputs if line.strip()]
    assert answer(clients[exchange.app], exchange.command) == expected


def test_every_example_is_included_by_a_page() -> None:
    text = "".join(page.read_text(encoding="utf-8") for page in PAGES)
    for name in (*SQL_EXAMPLES, BEANIE_EXAMPLE):
        assert f"../examples/guide/{name}.py" in text, name


def write() -> None:
    """Rewrite every quoted exchange's output lines from the apps' answers."""
    names = tuple(sorted({exchange.app for exchange in ALL_EXCHANGES}))
    with ExitStack() as stack:
        clients = open_clients(stack, names)
        for page in PAGES:
            lines = page.read_text(encoding="utf-8").splitlines()
            for exchange in reversed(exchanges(page)):
                outputs = [_dump(value) for value in answer(clients[exchange.app], exchange.command)]
                start = exchange.line + 1
                lines[start : start + len(exchange.outputs)] = outputs
            page.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- resources.md
def test_resource_options(clients: Clients) -> None:
    client = clients["resources"]
    body = get(client, "/api/v1/books/")
    assert body["pagination"]["count"] == 5  # Limits(default_count=5)
    assert ids(body) == [5, 4, 2, 1, 6]  # default_order -year
    assert body["message"] == "Listed books."
    assert ids(get(client, "/api/v1/books/?search=LE%20GUIN&order_by=year")) == [6, 1, 2]
    assert ids(get(client, "/api/v1/books/?author__name=Frank%20Herbert")) == [3]
    assert error_keys(get(client, "/api/v1/books/?count=51", status=400)) == ["count"]
    # OR endpoint; unknown names are dropped there, and so are paths it does not expose.
    assert ids(get(client, "/api/v1/books-any/?year=1969&title=Dune&order_by=year")) == [3, 1]
    assert get(client, "/api/v1/books-any/?colour=red&author__id=1")["pagination"]["total"] == 6
    assert get(client, "/api/v1/books-any/")["pagination"]["count"] == 10


def test_private_fields_answer_as_missing_ones(clients: Clients) -> None:
    client = clients["resources"]
    private = get(client, "/api/v1/books/?author__email=x", status=400)["extra"][0]["message"]
    missing = get(client, "/api/v1/books/?author__emial=x", status=400)["extra"][0]["message"]
    assert private.startswith("is not a filter of this resource")
    assert missing.startswith("is not a filter of this resource")
    assert "email" not in private
    assert "email" not in json.dumps(get(client, "/api/v1/books/?count=50"))


def test_bad_declarations_stop_the_start() -> None:
    resources = example("resources")
    backend = SQLAlchemyBackend(resources.Book)
    with pytest.raises(ConfigurationError, match="private"):
        prepare(Resource("a", backend, filter_fields=("author__email",)))
    with pytest.raises(ConfigurationError, match="no field 'titel'"):
        prepare(Resource("b", backend, search_fields=("titel",)))
    with pytest.raises(ConfigurationError, match="limit is 0"):
        prepare(Resource("c", backend, filter_fields=("author__name",), max_depth=0))
    with pytest.raises(ConfigurationError, match="combine"):
        prepare(Resource("d", backend, combine="xor"))
    with pytest.raises(ConfigurationError, match="wildcards"):
        prepare(Resource("e", backend, search_fields=("*",)))
    with pytest.raises(ConfigurationError, match="raw_filters"):
        prepare(Resource("f", backend, raw_filters=("meta.color",)))


def test_resource_defaults() -> None:
    resource = Resource("x", SQLAlchemyBackend(example("resources").Book))
    assert (resource.filter_fields, resource.order_fields, resource.search_fields) == (("*",), ("*",), ())
    assert (resource.combine, resource.timeout, resource.max_depth, resource.ignore_unknown_filters) == (
        "and",
        5.0,
        3,
        None,
    )
    limits = resource.limits
    assert (limits.default_count, limits.max_count, limits.max_in_values) == (10, 100, 500)
    assert (limits.max_search_length, limits.max_pattern_length, limits.max_filters) == (256, 256, 50)


def _table_rows(page: Path, heading: str) -> dict[str, tuple[str, str]]:
    """The table rows ``| `name` | type | default | meaning |`` under ``heading``: name -> (type, default)."""
    text = page.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    rows: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        if rows and not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[2].strip("`"))
    return rows


def test_the_option_tables_name_every_parameter_with_its_default() -> None:
    # resources.md documents every field of Resource and every argument of ListingPlugin, with its default.
    page = GUIDE / "resources.md"
    fields = {field.name: field for field in dataclasses.fields(Resource)}
    documented = _table_rows(page, "## `Resource` options")
    assert list(documented) == list(fields)
    for name, (_, default) in documented.items():
        field = fields[name]
        if field.default is not dataclasses.MISSING:
            assert default in _spellings(field.default), name
        elif field.default_factory is not dataclasses.MISSING:
            assert default in _spellings(field.default_factory()), name
        else:
            assert default == "required", name
    parameters = {
        name: parameter
        for name, parameter in inspect.signature(ListingPlugin.__init__).parameters.items()
        if name != "self"
    }
    documented = _table_rows(page, "## `ListingPlugin`")
    assert sorted(documented) == sorted(parameters)
    for name, (_, default) in documented.items():
        expected = parameters[name].default
        assert default in ({"required"} if expected is inspect.Parameter.empty else _spellings(expected)), name


def _spellings(value: object) -> set[str]:
    """How a page may write the default ``value``: its repr in double quotes (an enumeration's value's), ``1_000``."""
    spelt = {repr(getattr(value, "value", value)).replace("'", '"')}
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and value == type(value)():
        spelt.add(f"{type(value).__name__}()")
    if isinstance(value, int) and not isinstance(value, bool):
        spelt.add(f"{value:_}")
    if inspect.isfunction(value):
        spelt.add(value.__name__)
    return spelt


# ---------------------------------------------------------------- backends.md
@pytest.mark.parametrize(
    "query",
    [
        "name__istartswith=%C3%81",
        "order_by=city",
        "order_by=-city",
        "search=M",
        "name__like=%25a",
        "city__ne=Madrid",
        "name__iendswith=A&order_by=-name",
    ],
)
def test_three_backends_give_the_same_answers(clients: Clients, query: str) -> None:
    client = clients["backends"]
    answers = [get(client, f"/api/v1/{kind}-contacts/?{query}") for kind in ("sql", "piccolo", "memory")]
    assert answers[0]["data"] == answers[1]["data"] == answers[2]["data"]
    assert answers[0]["pagination"] == answers[1]["pagination"] == answers[2]["pagination"]


def test_to_item_shapes_items(clients: Clients) -> None:
    body = get(clients["backends"], "/api/v1/contact-cards/?count=2")
    assert body["data"] == [{"id": 1, "label": "Ángela (Madrid)"}, {"id": 2, "label": "bob (no city)"}]
    schema = get(clients["backends"], "/schema/openapi.json")
    assert set(schema["components"]["schemas"]["ContactCard"]["properties"]) == {"id", "label"}


def test_beanie_document_rules(clients: Clients) -> None:
    client = clients[BEANIE_EXAMPLE]
    body = get(client, "/api/v1/notes/")
    assert [item["title"] for item in body["data"]] == ["Groceries", "Holiday ideas", "Meeting notes"]
    assert body["data"][0]["author"] == {"id": f"{1:024x}", "name": "Ann"}  # load=("author",)
    assert ids(get(client, "/api/v1/notes/?order_by=-label_count")) == [f"{n:024x}" for n in (12, 11, 14)]
    assert ids(get(client, "/api/v1/notes/?meta.color=red")) == [f"{11:024x}"]
    # operator suffixes and unknown names are ignored; a bad ObjectId is a 400
    assert get(client, "/api/v1/notes/?words__gte=100&nope=1")["pagination"]["total"] == 3
    assert error_keys(get(client, "/api/v1/notes/?author=nope", status=400)) == ["author"]
    assert ids(get(client, f"/api/v1/notes/?author_id={2:024x}")) == [f"{12:024x}"]


def test_a_document_store_refuses_operator_keys_at_start() -> None:
    pytest.importorskip("beanie")
    from litestar_listing.backends.beanie import BeanieBackend

    note = example(BEANIE_EXAMPLE).Note
    for key in ("$where", "meta.$where", "meta.$expr"):
        with pytest.raises(ConfigurationError, match="store operator"):
            prepare(Resource("bad", BeanieBackend(note), raw_filters=(key,)))
    with pytest.raises(ConfigurationError, match="crosses a relation"):
        prepare(Resource("bad", BeanieBackend(note), filter_fields=("author__name",)))


def test_sqlite_datetime_storage_format(clients: Clients) -> None:
    client = clients["sqlite_datetime"]
    # Stored: 1 '2023-12-31 23:59:59', 2 '2024-01-01 00:00:00', 3 '2024-01-01 09:30:00', 4 '2024-02-01 00:00:00'.
    expected = {
        "invoice_date__gte=2024-01-01": ([3, 4], [2, 3, 4]),
        "invoice_date=2024-02-01": ([], [4]),
        "invoice_date__lt=2024-01-01T09:30:00": ([1, 2, 3], [1, 2]),
        "invoice_date__lt=2024-02-01": ([1, 2, 3, 4], [1, 2, 3]),
    }
    for query, (trap, fixed) in expected.items():
        assert ids(get(client, f"/api/v1/invoices/?{query}")) == trap, query
        assert ids(get(client, f"/api/v1/invoices-fixed/?{query}")) == fixed, query
    # Read back alike: the fix changes how values are bound, not what is listed.
    assert get(client, "/api/v1/invoices-fixed/")["data"] == get(client, "/api/v1/invoices/")["data"]


def test_piccolo_relations(clients: Clients) -> None:
    client = clients["piccolo_relations"]
    # Albums 1 (AC/DC; tracks 1, 2), 2 (Aerosmith; track 3), 3 (AC/DC; track 4). Playlist 1: tracks
    # 1, 4; playlist 2: track 3. Employees: Andrew (1) manages Nancy (2) and Michael (3), who manage
    # Jane (4) and Robert (5).
    assert ids(get(client, "/api/v1/albums/?tracks__name=Whole%20Lotta%20Rosie")) == [1]  # reverse=
    assert ids(get(client, "/api/v1/albums/?artist__name=AC/DC")) == [1, 3]
    assert ids(get(client, "/api/v1/albums/?search=water")) == [2]
    assert get(client, "/api/v1/albums/?count=1")["data"][0]["tracks"] == [
        {"id": 1, "name": "Go Down", "album_id": 1},
        {"id": 2, "name": "Whole Lotta Rosie", "album_id": 1},
    ]
    assert ids(get(client, "/api/v1/playlists/?tracks__name=Hells%20Bells")) == [1]  # M2M
    assert ids(get(client, "/api/v1/playlists/?tracks__name__in=Go%20Down,Walk%20On%20Water")) == [1, 2]
    assert ids(get(client, "/api/v1/employees/?manager__name=Andrew")) == [2, 3]  # ForeignKey("self")
    assert ids(get(client, "/api/v1/employees/?reports__name__in=Jane,Nancy")) == [1, 2]  # its reverse side
    assert ids(get(client, "/api/v1/employees/?reports__name__isnull=false")) == [1, 2, 3]
    assert ids(get(client, "/api/v1/employees/?order_by=-manager__name,id")) == [4, 5, 2, 3, 1]  # NULLs last
    body = get(client, "/api/v1/employees/?order_by=reports__name", status=400)
    assert error_keys(body) == ["order_by"]
    assert "'reports' is a to-many relation" in body["extra"][0]["message"]


# ---------------------------------------------------------------- scoping.md
def test_tenant_scope(clients: Clients) -> None:
    client = clients["scoping"]
    assert ids(get(client, "/api/v1/tickets/", "ann")) == [1, 2, 5]
    assert ids(get(client, "/api/v1/tickets/?company_id=2", "ann")) == [1, 2, 5]  # dropped
    assert ids(get(client, "/api/v1/tickets/?company_id__ne=1", "ann")) == []  # only narrows
    assert ids(get(client, "/api/v1/tickets/?status__in=closed", "ann")) == [2]
    assert ids(get(client, "/api/v1/tickets/", "bob")) == [3]  # company 2, open only
    assert get(client, "/api/v1/tickets/", "root")["pagination"]["total"] == 5
    assert get(client, "/api/v1/tickets/", "newcomer")["pagination"]["total"] == 0  # company None
    assert get(client, "/api/v1/tickets/", status=401)["status_code"] == 401


def test_owner_scope_and_or_endpoints(clients: Clients) -> None:
    client = clients["scoping"]
    assert ids(get(client, "/api/v1/my-tickets/?owner_id=2", "ann")) == [1, 5]
    assert get(client, "/api/v1/my-tickets/", status=401)["status_code"] == 401
    # ORed client filters stay inside the tenant: ticket 4 (company 2) matches title but is not listed.
    assert ids(get(client, "/api/v1/tickets-any/?title=New%20laptop&status=closed", "ann")) == [2]
    assert ids(get(client, "/api/v1/tickets-any/?title=New%20laptop&status=closed", "bob")) == [4]


def test_scoped_resource_cannot_list_without_its_request() -> None:
    scoping = example("scoping")
    with pytest.raises(ConfigurationError, match="forced filters"):
        parse_query(scoping.tickets, [], None, app=scoping.app)
    with pytest.raises(ConfigurationError, match="without a request or an application"):
        parse_query(scoping.tickets, [], None)


def test_invoices_and_their_lines_inherit_their_customers_policy(clients: Clients) -> None:
    client = clients["inherited_policies"]
    # Jane looks after customers 1 and 3 (invoices 1, 3, 5; lines 1, 2, 4, 6), Margaret after 2
    # (invoice 2, line 3); customer 4 has no representative; root sees everything.
    assert ids(get(client, "/api/v1/invoices/", "jane")) == [1, 3, 5]
    assert ids(get(client, "/api/v1/invoices/", "margaret")) == [2]
    assert ids(get(client, "/api/v1/invoices/", "root")) == [1, 2, 3, 4, 5]
    assert ids(get(client, "/api/v1/invoice-lines/", "jane")) == [1, 2, 4, 6]
    assert ids(get(client, "/api/v1/invoice-lines/", "margaret")) == [3]
    assert ids(get(client, "/api/v1/invoice-lines/", "root")) == [1, 2, 3, 4, 5, 6]
    assert ids(get(client, "/api/v1/invoices/?order_by=-total", "jane")) == [3, 5, 1]
    assert ids(get(client, "/api/v1/invoice-lines/?order_by=-invoice__total,id", "jane")) == [4, 6, 1, 2]
    # Another representative's customer reads as a missing one through every path.
    hidden = "/api/v1/invoice-lines/?invoice__customer__name=Leonie%20K%C3%B6hler"
    assert get(client, hidden, "jane")["pagination"]["total"] == 0
    assert ids(get(client, hidden, "margaret")) == [3]
    assert get(client, "/api/v1/invoices/")["pagination"]["total"] == 0  # anonymous: no customer, no invoice


def test_scopes_read_the_claims_of_litestar_jwt_auth(clients: Clients) -> None:
    client = clients["jwt"]
    jwt_auth = example("jwt").jwt_auth

    def token(subject: int, **claims: Any) -> str:
        issued = jwt_auth.create_token(identifier=str(subject), token_extras=claims)
        assert isinstance(issued, str)
        return issued

    ann, bob = token(1, company_id=1), token(2, company_id=2)
    admin = token(9, company_id=3, is_platform_admin=True)
    assert ids(get(client, "/api/v1/tickets/", ann)) == [1, 2]
    assert ids(get(client, "/api/v1/tickets/?company_id=2", bob)) == [3, 4]
    assert ids(get(client, "/api/v1/tickets/", admin)) == [1, 2, 3, 4]
    assert ids(get(client, "/api/v1/my-tickets/", ann)) == [1]  # owner_id = int(sub)
    assert ids(get(client, "/api/v1/my-tickets/", admin)) == [1, 2, 3, 4]  # the same admin bypass
    assert ids(get(client, "/api/v1/tickets-by-claims/", bob)) == [3, 4]  # request.auth.extras
    # A token without the claim: 403 naming it, never a 500; the owner scope still works.
    stranger = token(3)
    for path in ("tickets", "tickets-by-claims"):
        body = get(client, f"/api/v1/{path}/", stranger, status=403)
        assert body["detail"] == "the authenticated user has no 'company_id' to scope this list by"
    assert ids(get(client, "/api/v1/my-tickets/", stranger)) == [2]
    # JWTAuth itself answers requests without a valid token.
    assert get(client, "/api/v1/tickets/", status=401)["status_code"] == 401
    assert get(client, "/api/v1/tickets/", "not-a-token", status=401)["status_code"] == 401


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        (None, 'Bearer realm="tickets"'),
        ("Bearer not-a-token", 'Bearer realm="tickets", error="invalid_token"'),
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/tickets/", "/api/v1/my-tickets/"])
@pytest.mark.parametrize("example", ["jwt", "scoping"])
def test_401s_carry_a_bearer_challenge(
    clients: Clients, example: str, path: str, authorization: str | None, challenge: str
) -> None:
    client = clients[example]
    headers = {"Authorization": authorization} if authorization else {}
    got, head = client.get(path, headers=headers), client.head(path, headers=headers)
    assert (got.status_code, head.status_code) == (401, 401)
    assert got.headers.get_list("www-authenticate") == head.headers.get_list("www-authenticate") == [challenge]
    assert head.content == b""
    assert sorted(head.headers.multi_items()) == sorted(got.headers.multi_items())


# ---------------------------------------------------------------- soft-delete.md
def test_soft_deleted_rows_are_never_listed(clients: Clients) -> None:
    client = clients["soft_delete"]
    for name in ("notes", "piccolo-notes"):
        body = get(client, f"/api/v1/{name}/")
        assert ids(body) == [1, 3]
        assert body["pagination"]["total"] == 2
        assert ids(get(client, f"/api/v1/{name}/?deleted_at__isnull=false")) == []
        assert ids(get(client, f"/api/v1/{name}/?id__in=2,3,4")) == [3]
    beanie = clients[BEANIE_EXAMPLE]
    assert get(beanie, f"/api/v1/notes/?id={13:024x}")["pagination"]["total"] == 0  # deleted
    assert get(beanie, f"/api/v1/notes/?id={11:024x}")["pagination"]["total"] == 1


# ---------------------------------------------------------------- computed.md
def test_computed_columns_are_listed_and_orderable(clients: Clients) -> None:
    client = clients["computed"]
    for name in ("projects", "piccolo-projects"):
        body = get(client, f"/api/v1/{name}/")
        assert [(item["id"], item["open_tasks"]) for item in body["data"]] == [(2, 3), (1, 1), (3, 0)]
        assert ids(get(client, f"/api/v1/{name}/?order_by=open_tasks")) == [3, 1, 2]
        assert error_keys(get(client, f"/api/v1/{name}/?open_tasks=1", status=400)) == ["open_tasks"]


SUB_PROJECTS = {
    # Acme's Website has two sub-projects, one of them Globex's: Ann sees one.
    "ann": [(1, 1), (3, 0), (7, 0)],
    "bob": [(2, 2), (4, 0), (5, 0), (6, 0)],
    "root": [(1, 2), (2, 2), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0)],
}
"""``(id, sub_projects)`` by ``order_by=-sub_projects`` per user, counted by hand from the example's ``PROJECTS``."""


def _sub_projects(client: TestClient[Litestar], name: str, user: str) -> list[tuple[int, int]]:
    body = get(client, f"/api/v1/{name}/?order_by=-sub_projects", user)
    return [(item["id"], item["sub_projects"]) for item in body["data"]]


@pytest.mark.parametrize("user", sorted(SUB_PROJECTS))
def test_a_self_reference_counts_the_visible_children_only(clients: Clients, user: str) -> None:
    for name in ("projects", "piccolo-projects"):
        assert _sub_projects(clients["computed_aliases"], name, user) == SUB_PROJECTS[user]


def test_a_self_reference_on_beanie_counts_the_visible_children_only() -> None:
    pytest.importorskip("mongomock_motor")
    from tests.document_store.mongomock_adapter import check_versions, mongomock_client

    check_versions()
    app = example("computed_aliases").create_beanie_app(mongomock_client()["docs_guide_aliases"])
    with TestClient(app, raise_server_exceptions=True) as client:
        for user, expected in SUB_PROJECTS.items():
            assert _sub_projects(client, "mongo-projects", user) == expected


def test_the_listed_model_unaliased_is_refused_at_start() -> None:
    aliases = example("computed_aliases")
    project = aliases.Project
    leaky = Computed(
        lambda allowed: (
            select(func.count(aliases.child.id))
            .where(aliases.child.parent_id == project.id, allowed(project))
            .correlate(project)
            .scalar_subquery()
        ),
        reads=(project,),
    )
    with pytest.raises(ConfigurationError, match=r"pass it: child = aliased\(Project\), allowed\(child\)"):
        SQLAlchemyBackend(project, computed={"sub_projects": leaky})


# ---------------------------------------------------------------- enrichment.md
def test_enrichment_adds_fields_to_the_page_only(clients: Clients) -> None:
    client = clients["enrichment"]
    body = get(client, "/api/v1/projects/?count=2&page=2")
    assert body["data"] == [{"id": 3, "name": "Billing", "task_count": 0}]
    assert body["pagination"]["total"] == 3
    schema = get(client, "/schema/openapi.json")
    # Two resources list Project here, so Litestar names each item type after its resource too.
    assert schema["components"]["schemas"]["projects_Project"]["properties"]["task_count"] == {"type": "integer"}
    assert get(client, "/api/v1/broken-projects/", status=500)["status_code"] == 500


# ---------------------------------------------------------------- eager-loading.md
def test_eager_loading(clients: Clients) -> None:
    client = clients["eager_loading"]
    task = get(client, "/api/v1/tasks/?count=1")["data"][0]
    assert task["project"] == {"id": 1, "name": "Website", "company_id": 1, "company": {"id": 1, "name": "Acme"}}
    projects = get(client, "/api/v1/projects/")["data"]
    assert [[child["id"] for child in project["tasks"]] for project in projects] == [[1, 2], [3]]
    assert "company" not in projects[0]
    report = get(client, "/reports/projects?name=Website")["data"]
    assert report == [{"id": 1, "name": "Website", "company_id": 1, "company": {"id": 1, "name": "Acme"}}]
    # Loading a relation exposes nothing: its paths are still not filters.
    assert error_keys(get(client, "/api/v1/tasks/?project__name=Website", status=400)) == ["project__name"]


# ---------------------------------------------------------------- indexes.md
@pytest.mark.parametrize("database", ["postgresql", "sqlite"])
def test_the_index_advisor_prints_the_page_s_statements(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    from litestar_listing.demo.cli import main

    command = f"indexes docs.examples.guide.indexes:app --offline --database {database}"
    assert f"$ litestar-listing {command}\n" in (GUIDE / "indexes.md").read_text(encoding="utf-8")
    assert main(command.split()) == 0
    out = capsys.readouterr().out
    printed = (DOCS / "examples" / "guide" / f"indexes_{database}.txt").read_text(encoding="utf-8")
    if database == "sqlite":
        # The example's own database: its first line names the file, a new one each run; the page shows the rest.
        first, out = out.split("\n", 1)
        assert first.startswith("-- sqlite (sqlite+aiosqlite:///")
        assert first.endswith("): 6 indexes, the database not read")
    assert out == printed


def test_the_example_s_indexes_are_missing_until_made() -> None:
    # The example's database has no index of its own: every advised one is missing.
    from litestar_listing.plugin.indexes import advise

    articles = example("indexes").articles
    advice = asyncio.run(advise([articles], release=True))
    assert [item.need.name for item in advice if item.missing] == [
        "ix_articles_published_on_desc_id",
        "ix_articles_company_id_published_on_desc_id",
        "ix_articles_views_desc_id",
        "ix_articles_author_id",
        "ix_articles_title_trgm",
        "ix_authors_name_trgm",
    ]


# ---------------------------------------------------------------- security.md
def test_limits_and_literal_text(clients: Clients) -> None:
    client = clients["security"]
    assert ids(get(client, "/api/v1/accounts/?discount__ilike=50%25")) == [1]
    assert ids(get(client, "/api/v1/accounts/?search=_")) == [3]
    assert ids(get(client, "/api/v1/accounts/?name__like=%25a")) == [1, 2]
    body = get(client, "/api/v1/accounts/?a=1&b=2&c=3&d=4&e=5&f=6", status=400)
    assert error_keys(body) == ["f"]
    private = get(client, "/api/v1/accounts/?password_hash=x", status=400)["extra"]
    missing = get(client, "/api/v1/accounts/?pasword_hash=x", status=400)["extra"]
    assert [entry["message"] for entry in private] == [entry["message"] for entry in missing]
    assert all("password_hash" not in item for item in get(client, "/api/v1/accounts/")["data"])


def test_rate_limit_per_client_next_to_admission(clients: Clients) -> None:
    client = clients["fairness"]
    statuses = [client.get("/api/v1/articles/?count=1").status_code for _ in range(31)]
    assert statuses == [200] * 30 + [429]
    refused = client.get("/api/v1/articles/")
    assert refused.status_code == 429
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert client.get("/schema/openapi.json").status_code == 200  # excluded
    fairness = example("fairness")
    admission = binding_of(fairness.articles, None, fairness.app, used_by="a test").admission
    assert admission is not None
    assert admission.limit == 8


# ---------------------------------------------------------------- admission.md
def test_each_list_is_priced_admitted_in_its_lane_and_charged_to_its_client(clients: Clients) -> None:
    # Priced by hand with the example's weights (search_field 4, the others the defaults).
    client = clients["admission"]
    cheap = client.get("/api/v1/books/?year__gte=1980&count=2")
    assert cheap.status_code == 200
    # base 1, an indexed range 0, the key's order 0, two rows 0.01.
    assert (cheap.headers["x-listing-cost"], cheap.headers["x-listing-lane"]) == ("1.0", "cheap")
    # title 4 + author__name 4 + its join 3; a sort of two terms 8 + 2; base 1; ten rows 0.05: 22.05, over 15.
    searched = client.get("/api/v1/books/?search=the&order_by=author__name")
    assert (searched.headers["x-listing-cost"], searched.headers["x-listing-lane"]) == ("22.1", "expensive")
    assert int(cheap.headers["ratelimit-remaining"]) - int(searched.headers["ratelimit-remaining"]) in {22, 23}
    document = client.get("/schema/openapi.json").json()
    operation = document["paths"]["/api/v1/books"]["get"]
    assert "cost more than 30 units" in operation["responses"]["400"]["description"]
    assert "at most 30 units" in operation["description"]
    assert set(operation["responses"]["429"]["headers"]) >= {"Retry-After", "RateLimit-Remaining"}
    assert set(operation["responses"]["200"]["headers"]) >= {"X-Listing-Cost", "RateLimit-Policy"}


def test_a_client_past_its_budget_is_refused_and_another_is_not() -> None:
    module = example("admission")
    with TestClient(Litestar(plugins=[module.plugin])) as client:  # a store of its own: a fresh budget
        spent = [client.get("/api/v1/books/?search=the&order_by=author__name").status_code for _ in range(14)]
        assert spent == [200] * 13 + [429]  # 13 x 22.05 = 286.65 of 300; a 14th would pass 300
        refused = client.get("/api/v1/books/?search=the&order_by=author__name")
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert client.get("/api/v1/books/?search=the").status_code == 200  # 12.05 of the 13.35 left still fit


def test_timeouts_answer_503_and_the_app_recovers(clients: Clients) -> None:
    client = clients["security"]
    response = client.get("/api/v1/reports/")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert get(client, "/api/v1/accounts/")["pagination"]["total"] == 3


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print("usage: python -m tests.docs.test_guide_examples --write")  # noqa: T201
        return 2
    write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


# ---------------------------------------------------------------- extensions.md
def test_cursor_walk_and_total_mode(clients: Clients) -> None:
    client = clients["extensions"]
    url: str | None = "/api/v1/events/?kind=alert&order_by=-severity&count=3"
    seen: list[int] = []
    while url is not None:
        response = client.get(url)
        assert response.status_code == 200, response.text
        assert response.headers["X-Total-Mode"] == "exact"  # SQLite has no planner estimate
        assert response.json()["pagination"]["total"] == 9
        seen.extend(ids(response.json()))
        link = response.headers.get("Link")
        url = None if link is None else link[1 : link.index(">")].removeprefix("http://testserver.local")
    # Alerts are ids 1, 4, ..., 25; severity is id % 5, NULL for multiples of 4: worst first, NULLs last, ties by id.
    assert seen == [19, 13, 7, 22, 1, 10, 25, 4, 16]
    first = client.get("/api/v1/events/?count=4")
    cursor = first.headers["X-Next-Cursor"]
    assert error_keys(get(client, f"/api/v1/events/?page=2&cursor={cursor}", status=400)) == ["page"]
    assert error_keys(get(client, f"/api/v1/events/?count=5&cursor={cursor}", status=400)) == ["count"]
    assert error_keys(get(client, f"/api/v1/events/?kind=alert&cursor={cursor}", status=400)) == ["cursor"]


# ---------------------------------------------------------------- routes.md
def _documented_errors(client: TestClient[Litestar], path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The OpenAPI document and the error responses of the list operation at ``path``."""
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    document = response.json()
    responses = document["paths"][path]["get"]["responses"]
    return document, {status: body for status, body in responses.items() if status != "200"}


def _check_documented(document: dict[str, Any], documented: dict[str, Any], response: Any) -> None:
    """``response`` has a documented status, the documented media type, and a body the documented schema accepts."""
    entry = documented[str(response.status_code)]
    (media_type, content), *others = entry["content"].items()
    assert not others
    assert response.headers["content-type"] == media_type
    assert problems(document, content["schema"], response.json()) == []


def test_one_resource_under_two_versions(clients: Clients) -> None:
    client = clients["versions"]
    document = client.get("/schema/openapi.json").json()  # 200: no duplicate operation id
    operations = {path: item["get"] for path, item in document["paths"].items()}
    assert set(operations) == {"/api/v1/books", "/api/v2/catalogue"}  # /api/v2/changes: include_in_schema=False
    v1, v2 = operations["/api/v1/books"], operations["/api/v2/catalogue"]
    assert (v1["operationId"], v2["operationId"]) == ("list_books", "list_books_api_v2")
    assert (v1["tags"], v2["tags"]) == (["books"], ["catalogue"])
    assert "security" not in v1
    assert v2["security"] == [{"ApiKey": []}]
    assert document["components"]["securitySchemes"]["ApiKey"]["in"] == "header"  # the app's components kept
    schemas = document["components"]["schemas"]
    assert {"ListingInvalidQuery", "Book", "BooksList"} <= set(schemas)
    assert not {"Change", "ChangesList", "ListingPermissionDenied"} & set(schemas)  # only the hidden route's
    assert (
        ids(get(client, "/api/v1/books/?search=dune")) == ids(get(client, "/api/v2/catalogue/?search=dune")) == [1, 3]
    )
    assert client.get("/api/v2/books/").status_code == 404  # v2 serves books at its own path
    # The guard refuses, on GET and HEAD alike, and reads the route's opt.
    assert get(client, "/api/v2/changes/", status=403) == {"status_code": 403, "detail": "staff only"}
    assert client.head("/api/v2/changes/").status_code == 403
    assert ids(get_with(client, "/api/v2/changes/", {"X-Staff": "yes"})) == [3, 2, 1]
    assert client.head("/api/v2/changes/", headers={"X-Staff": "yes"}).status_code == 200
    handler = client.app.route_handler_method_map["/api/v2/changes"]["GET"]
    assert handler.opt["staff_marker"] == "yes"
    assert client.app.route_reverse("listing:books") == "/api/v1/books"
    assert client.app.route_reverse("listing:books_api_v2") == "/api/v2/catalogue"


def get_with(client: TestClient[Litestar], url: str, headers: dict[str, str]) -> Any:
    response = client.get(url, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_default_error_bodies_match_openapi(clients: Clients) -> None:
    client = clients["versions"]
    document, documented = _documented_errors(client, "/api/v1/books")
    assert set(documented) == {"400", "503"}
    response = client.get("/api/v1/books/?year=x&titel=Dune")
    assert response.status_code == 400
    _check_documented(document, documented, response)
    assert response.json()["status_code"] == 400


def test_problem_details_bodies_match_openapi(clients: Clients) -> None:
    client = clients["problem_details"]
    document, documented = _documented_errors(client, "/api/v1/tickets")
    assert set(documented) == {"400", "401", "403", "503"}
    for entry in documented.values():
        assert set(entry["content"]) == {"application/problem+json"}
    answers = {
        400: client.get("/api/v1/tickets/?id=x&bogus=1", headers={"X-User": "ann"}),
        401: client.get("/api/v1/tickets/"),  # anonymous
        403: client.get("/api/v1/tickets/", headers={"X-User": "guest"}),  # no company_id
    }
    for status, response in answers.items():
        assert response.status_code == status, response.text
        _check_documented(document, documented, response)
    assert [entry["key"] for entry in answers[400].json()["extra"]] == ["id", "bogus"]
    # The schema is not vacuous: Litestar's default body would break it.
    default_body = {"status_code": 400, "detail": "Invalid query parameters: id", "extra": []}
    assert problems(document, documented["400"]["content"]["application/problem+json"]["schema"], default_body)


# ---------------------------------------------------------------- in-your-app.md
def _operation(document: Any, path: str) -> Any:
    return document["paths"][path]["get"]


def test_a_controller_with_a_guard_serves_a_list_at_its_own_path(clients: Clients) -> None:
    client = clients["own_handlers"]
    assert client.get("/staff/archive/").status_code == 401
    staff = {"X-Staff": "yes"}
    body = client.get("/staff/archive/?status=open&count=2", headers=staff).json()
    assert ids(body) == [5, 2]  # default_order -id
    assert body["pagination"] == {"page": 1, "count": 2, "total": 3, "total_pages": 2}
    bad = client.get("/staff/archive/?nope=1", headers=staff)
    assert (bad.status_code, error_keys(bad.json())) == (400, ["nope"])
    operation = _operation(get(client, "/schema/openapi.json"), "/staff/archive")
    assert (operation["operationId"], operation["tags"]) == ("list_staff_archive", ["staff"])
    handler = next(
        handler
        for route in example("own_handlers").app.routes
        if route.path == "/staff/archive" and isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        if isinstance(handler, ListingRouteHandler)
    )
    assert handler.opt["audit"] is True  # the route's own options, kept


def test_an_unmounted_resource_answers_search_and_ilike_on_sqlite(clients: Clients) -> None:
    """The resource is used only by own handlers; its SQLite functions were registered at start."""
    import sqlite3

    client = clients["own_handlers"]
    staff = {"X-Staff": "yes"}
    with sqlite3.connect(example("own_handlers").DATABASE) as connection:
        rows = connection.execute("SELECT id, name FROM projects ORDER BY id DESC").fetchall()
        # SQLite's LIKE ignores the case of ASCII letters, enough for 'baco'.
        matching = connection.execute("SELECT id FROM projects WHERE name LIKE '%baco%' ORDER BY id DESC")
        like = [row[0] for row in matching]
    assert like == [5, 1]
    assert ids(client.get("/staff/archive/?name__ilike=BaCo", headers=staff).json()) == like
    searched = [id_ for id_, name in rows if "ábaco" in name.lower()]  # counted by hand: Ábaco, ÁBACO 2
    assert searched == [5, 1]
    assert ids(client.get("/staff/archive/?search=%C3%81BACO", headers=staff).json()) == searched
    csv_text = client.get("/archive.csv?search=abac").text  # "abacus port" only: no accent folding
    assert csv_text == "id,name,status\n3,abacus port,closed\n"
    # The handler calls resource.list itself: the plugin's exception handlers answer its errors.
    assert error_keys(get(client, "/archive.csv?nope=1&count=0", status=400)) == ["nope", "count"]


def test_a_handler_builds_its_own_model_from_the_page(clients: Clients) -> None:
    client = clients["own_handlers"]
    assert get(client, "/project-cards?status=open&count=2") == {
        "cards": [{"id": 1, "title": "ÁBACO"}, {"id": 2, "title": "WEBSITE"}],
        "shown": 2,
        "total": 3,
        "more": True,
    }
    assert error_keys(get(client, "/project-cards?count=0", status=400)) == ["count"]
    assert get(client, "/archive/query?name__ilike=x&page=3") == {"filters": ["name__ilike"], "search": None, "page": 3}
    assert error_keys(get(client, "/archive/query?order_by=nope", status=400)) == ["order_by"]
    schema = get(client, "/schema/openapi.json")
    success = _operation(schema, "/project-cards")["responses"]["200"]["content"]["application/json"]["schema"]
    assert success == {"$ref": "#/components/schemas/ProjectCards"}


@pytest.mark.parametrize(
    ("own", "automatic"),
    [
        ("/api/v2/projects", "/api/v1/projects"),  # listing_route in a Router
        ("/project-cards", "/api/v1/projects"),  # provide_page
        ("/archive/query", "/staff/archive"),  # provide_query, and a Controller's listing_route
        ("/archive.csv", "/staff/archive"),  # listing_operation
    ],
)
def test_own_handlers_document_what_the_mounted_route_documents(clients: Clients, own: str, automatic: str) -> None:
    schema = get(clients["own_handlers"], "/schema/openapi.json")
    mine, mounted = _operation(schema, own), _operation(schema, automatic)
    assert len(sent_parameters(schema, mounted)) > 20  # the reserved ones and every filter property
    assert mine["parameters"] == mounted["parameters"]
    assert {code: mine["responses"][code] for code in ("400", "503")} == {
        code: mounted["responses"][code] for code in ("400", "503")
    }
    assert set(mine["responses"]) == set(mounted["responses"])
    assert mine["description"].endswith(mounted["description"].rsplit("\n\n", 1)[-1])
    if own == "/api/v2/projects":
        assert mine["responses"]["200"] == mounted["responses"]["200"]  # the same envelope type


# ---------------------------------------------------------------- from-advanced-alchemy.md
SAME_QUESTIONS = [
    ("", ""),  # the defaults: the most recently published first, 20 a page
    ("currentPage=2&pageSize=2&orderBy=id&sortOrder=asc", "page=2&count=2&order_by=id"),
    ("ids=1&ids=3&orderBy=id&sortOrder=asc", "id=1&id=3&order_by=id"),
    ("ids=1&ids=3&orderBy=id&sortOrder=asc", "id__in=1,3&order_by=id"),
    ("createdBefore=2024-05-03T12:00:00Z&orderBy=id&sortOrder=asc", "created_at__lt=2024-05-03T12:00:00Z&order_by=id"),
    ("createdAfter=2024-05-03T12:00:00Z&orderBy=id&sortOrder=asc", "created_at__gt=2024-05-03T12:00:00Z&order_by=id"),
    ("genreIn=sf&genreIn=essays&orderBy=id&sortOrder=asc", "genre__in=sf,essays&order_by=id"),
    ("searchString=WIZARD&searchIgnoreCase=true", "search=WIZARD"),
    ("orderBy=published&sortOrder=desc&pageSize=3", "order_by=-published&count=3"),
]


@pytest.mark.skipif(not ADVANCED_ALCHEMY_GUIDE, reason=_OLD_ADVANCED_ALCHEMY)
@pytest.mark.parametrize(("before", "after"), SAME_QUESTIONS)
def test_the_resource_answers_what_advanced_alchemys_endpoint_answered(
    clients: Clients, before: str, after: str
) -> None:
    client = clients["from_advanced_alchemy"]
    old = get(client, f"/aa/books?{before}")
    new = get(client, f"/api/v1/books/?{after}")
    assert [item["id"] for item in old["items"]] == ids(new)
    assert old["total"] == new["pagination"]["total"]
    # The OffsetPagination body kept by provide_page: the resource's items, advanced-alchemy's shape.
    kept = get(client, f"/books?{after}")
    assert (kept["items"], kept["total"]) == (new["data"], new["pagination"]["total"])
    assert (kept["limit"], kept["offset"]) == (old["limit"], old["offset"])


@pytest.mark.skipif(not ADVANCED_ALCHEMY_GUIDE, reason=_OLD_ADVANCED_ALCHEMY)
def test_what_the_page_says_of_advanced_alchemy_holds(clients: Clients) -> None:
    # Claims about the library one migrates from, checked against the installed version.
    from advanced_alchemy.filters import operators_map
    from sqlalchemy import column

    client = clients["from_advanced_alchemy"]
    shown = get(client, "/aa/books?orderBy=author_id&sortOrder=asc")  # a column its items do not show
    assert [item["id"] for item in shown["items"]] == [1, 2, 4, 3, 5, 6, 7]
    assert "author_id" not in shown["items"][0]
    assert get(client, "/aa/books?pageSize=1000")["limit"] == 1000  # no upper bound
    assert client.get("/aa/books?orderBy=nope").status_code == 500  # a name that is no attribute
    ends = operators_map["iendswith"](column("title"), "x").compile(compile_kwargs={"literal_binds": True})
    assert str(ends) == "lower(title) LIKE lower('x%')"  # a starts-with
