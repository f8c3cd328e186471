"""Exposure: a private field can be neither filtered, ordered, searched nor listed, nor told apart from a missing one.

The private field is the conformance ``User.password_hash`` (``info={"private": True}`` on
SQLAlchemy, a ``Secret`` column on Piccolo, a ``SecretStr`` on Beanie), reachable from a thing as
``owner__password_hash``, ``reviewer__password_hash``, ``owner__manager__password_hash``,
``owner__manager__manager__password_hash`` and ``reviewer__manager__password_hash`` (and, on Beanie,
by raw-looking keys such as ``owner.password_hash``). On every selected target, through the real list
action of the conformance resources (``things``, ``things_or``, ``things_live``) and of a lenient one
that ignores unknown filter names (``things_lenient``):

* filters: every operator suffix (and none, and a bogus one), single, repeated, as ``__in`` lists,
  empty, and next to valid parameters; ``order_by``: the path, descending, inside a list of terms.
  Strict resources answer 400 naming exactly the parameter; the lenient one ignores it (its answer is
  the answer without it). Search fields are server configuration: a ``Resource`` declaring a private
  path to search, filter, order, order by default or force fails at start with ``ConfigurationError``,
  and no wildcard (``owner__*``, ``owner__manager__manager__*``) ever expands to a private field.
* listing: no item carries a private value, with every relation loaded.

What "no oracle" means here, precisely: the answer to a request is a function of the request and of
what the resource exposes, and nothing else. Two checks pin it:

1. The shadow world. ``WithoutPrivateFields`` wraps a target's backend and removes every private
   field from its model graph, as if ``password_hash`` had never been declared; the same resource over
   it must give the SAME full answer (status, ``detail``, every ``extra`` entry, or the whole 200
   body) to every request: the fixed probes above and the random keys of ``probe_queries``. A
   message that differs for a private field (``"... is private"``), a hint naming it, or a different
   status would show here.
2. Renaming. The answer for the private path ``P``, with ``P`` replaced by a missing path ``M``
   (``owner__passwordhash``, ``owner__nosuchfield``) in every string, equals the answer for ``M``,
   once the ``did you mean`` hints are cut out of both: hints depend on the spelling a client typed,
   so they may differ between two names, but they may only name exposed paths (checked).

Over HTTP, the demo app (SQLAlchemy and Piccolo, on a demo database holding the schema only: a 400 is
decided before any statement) answers ``watched-flights`` requests on ``user__password_hash``
(``DemoUser.password_hash``) with the same status and the same body, byte for byte apart from the key,
as on ``user__passwordhash`` and ``user__nosuchfield``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast
from urllib.parse import urlencode

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy.ext.asyncio import create_async_engine

from litestar_listing import ListContext, ListingBackend, Resource, list_resource
from litestar_listing.backends.base import Capabilities, Page
from litestar_listing.core.errors import ConfigurationError, InvalidQueryError, UnavailableError
from litestar_listing.core.operators import OPERATORS
from litestar_listing.core.query import FilterSyntax, ListQuery
from litestar_listing.core.schema import FieldInfo, ModelGraph
from litestar_listing.demo.app import create_app
from litestar_listing.demo.models import DemoBase
from litestar_listing.plugin.exceptions import bad_request
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.scoping import ScopeRule
from tests.apps import served
from tests.conformance.targets import BEANIE_OPTIONS, THINGS_OPTIONS, Target, server_target_url
from tests.conftest import async_url
from tests.hostile import HOSTILE_DATABASE, Opened, request
from tests.hostile.strategies import profile
from tests.matrix import Store, selected

PRIVATE_PATHS: tuple[str, ...] = (
    "owner__password_hash",
    "reviewer__password_hash",
    "owner__manager__password_hash",
    "owner__manager__manager__password_hash",
    "reviewer__manager__password_hash",
)
RAW_PRIVATE_KEYS: tuple[str, ...] = ("owner.password_hash", "reviewer.manager.password_hash", "password_hash")
"""Document-store spellings of the private field (raw keys and an own-field name)."""
MISSING_NAMES: tuple[str, ...] = ("passwordhash", "nosuchfield")
"""Stand-ins for ``password_hash`` naming no field anywhere."""
SUFFIXES: tuple[str, ...] = ("", *(f"__{name}" for name in OPERATORS), "__nosuchop")
SECRETS: tuple[bytes, ...] = (b"hash-", b"password_hash")
"""Every conformance password hash starts with ``hash-``."""
RESOURCE_NAMES = ("things", "things_or", "things_live", "things_lenient")
HINT = re.compile(r"; did you mean ((?:'[^']*'(?: or )?)+)\?")
HINTED_NAME = re.compile(r"'([^']*)'")


# ------------------------------------------------------------------------------------------ the shadow world


def without_private_fields(graph: ModelGraph) -> ModelGraph:
    """``graph`` with every private field removed from every entity."""
    entities = {
        name: dataclasses.replace(
            entity, fields=MappingProxyType({key: info for key, info in entity.fields.items() if not info.private})
        )
        for name, entity in graph.entities.items()
    }
    return ModelGraph(graph.root, MappingProxyType(entities))


class WithoutPrivateFields:
    """A backend whose models have no private field at all; fetching is left to the wrapped backend."""

    def __init__(self, inner: ListingBackend) -> None:
        self.inner = inner
        self.capabilities: Capabilities = inner.capabilities
        # The inner backend compiles the operators (the start-up contract check looks there).
        self.visitor: type = inner.visitor
        self.type_encoders = inner.type_encoders
        self.narrows_rows = inner.narrows_rows
        self._graph = without_private_fields(inner.model_graph())

    def model_graph(self) -> ModelGraph:
        return self._graph

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        return self.inner.computed_fields()

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        return await self.inner.fetch(query, context)

    def prepare(self) -> None:
        self.inner.prepare()

    def check_started(self, app: Any, *, routed: bool) -> None:
        self.inner.check_started(app, routed=routed)

    def unavailable(self, error: BaseException) -> UnavailableError | None:
        return self.inner.unavailable(error)


def is_document(backend: ListingBackend) -> bool:
    return backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT


def options_for(backend: ListingBackend, *, lenient: bool = False) -> dict[str, Any]:
    """The conformance exposure of ``backend``'s kind; ``lenient`` ignores unknown filter names."""
    options: dict[str, Any] = dict(BEANIE_OPTIONS if is_document(backend) else THINGS_OPTIONS)
    if lenient:
        options["ignore_unknown_filters"] = None if is_document(backend) else True
    return options


@dataclasses.dataclass(frozen=True)
class Pair:
    """A resource of a target and the same resource in the shadow world."""

    real: Resource
    shadow: Resource


def pairs(target: Target) -> dict[str, Pair]:
    """``RESOURCE_NAMES`` over ``target``'s backends, each with its shadow."""
    made: dict[str, Pair] = {}
    for name in RESOURCE_NAMES:
        source = target.resources["things" if name == "things_lenient" else name]
        options = options_for(source.backend, lenient=name == "things_lenient")
        options["combine"] = source.combine
        made[name] = Pair(
            Resource(name, source.backend, **options),
            Resource(name, WithoutPrivateFields(source.backend), **options),
        )
    return made


# ------------------------------------------------------------------------------------------ answers


@dataclasses.dataclass(frozen=True)
class Response:
    """A full answer: the status and, for a 400, ``detail`` and ``extra``; for a 200, the encoded body."""

    status: int
    detail: str = ""
    extra: tuple[tuple[tuple[str, str], ...], ...] = ()
    body: bytes = b""

    def renamed(self, old: str, new: str) -> Response:
        """This answer with ``old`` replaced by ``new`` in every string."""
        return Response(
            self.status,
            self.detail.replace(old, new),
            tuple(tuple((key, value.replace(old, new)) for key, value in item) for item in self.extra),
            self.body.replace(old.encode(), new.encode()),
        )

    def without_hints(self, exposed: Callable[[str], Sequence[str]]) -> Response:
        """This answer with every ``did you mean`` hint replaced by ``.``; each hint must name exposed paths.

        Args:
            exposed: The error key -> the paths its hints may name (filterable, or orderable for
                ``order_by``).
        """
        items: list[tuple[tuple[str, str], ...]] = []
        for item in self.extra:
            fields = dict(item)
            for hint in HINT.findall(fields["message"]):
                named = HINTED_NAME.findall(hint)
                allowed = exposed(fields["key"])
                assert set(named) <= set(allowed), f"a hint names what is not exposed: {named}"
            fields["message"] = HINT.sub(".", fields["message"])
            items.append(tuple(sorted(fields.items())))
        return dataclasses.replace(self, extra=tuple(items))


async def respond(target: Target, resource: Resource, query: str) -> Response:
    """``resource.list`` of an anonymous request (the resources here have no forced filter)."""
    connection = request(query, None, served(resource))
    try:
        async with target.context() as context:
            envelope = (await list_resource(resource, connection, session=context.session)).envelope
    except InvalidQueryError as invalid:
        error = bad_request(invalid)  # the 400 the plugin's exception handler answers
        extra = cast("list[dict[str, str]]", error.extra)
        return Response(
            error.status_code,
            error.detail,
            tuple(tuple(sorted((key, str(value)) for key, value in item.items())) for item in extra),
        )
    return Response(200, body=msgspec.json.encode(envelope))


def exposed_for(resource: Resource) -> Callable[[str], Sequence[str]]:
    field_map = prepare(resource).field_map
    return lambda key: tuple(field_map.orderable if key == "order_by" else field_map.filterable)


# ------------------------------------------------------------------------------------------ probes


def filter_probes(key: str) -> Iterator[list[tuple[str, str]]]:
    """Requests filtering on ``key``: single, empty, repeated, as an ``in`` list, among valid parameters."""
    yield [(key, "h")]
    yield [(key, "hash-alice")]
    yield [(key, "")]
    yield [(key, "hash-alice"), (key, "hash-bob")]
    yield [(key, "hash-alice,hash-bob,h")]
    yield [("name", "Widget"), (key, "hash-alice"), ("count", "5"), ("order_by", "-id")]


ORDER_PROBES: tuple[str, ...] = ("{p}", "-{p}", "name,{p}", "{p},-name", "-created_at,-{p},id", "{p},{p}")


def filter_keys(document: bool) -> Iterator[tuple[str, str]]:
    """(private key, the ``password_hash`` path or key it contains) for every path and operator suffix."""
    for path in PRIVATE_PATHS:
        for suffix in SUFFIXES:
            yield path + suffix, path
    if document:
        for key in RAW_PRIVATE_KEYS:
            yield key, key


def check_like_missing(
    target: Target,
    pair: Pair,
    private: str,
    query: str,
    run: Callable[[Resource, str], Response],
    *,
    renames: bool = True,
) -> Response:
    """The checks 1 and 2 of the module docstring for ``query`` (which names ``private``); the real answer."""
    where = f"{target.id}: {pair.real.name}?{query}"
    answer = run(pair.real, query)
    assert answer == run(pair.shadow, query), f"{where}: the answer differs from the world without private fields"
    for missing_name in MISSING_NAMES if renames else ():
        missing = private.replace("password_hash", missing_name)
        other = run(pair.real, query.replace(private, missing))
        exposed = exposed_for(pair.real)
        assert answer.renamed(private, missing).without_hints(exposed) == other.without_hints(exposed), (
            f"{where}: answers unlike the missing {missing!r}"
        )
    return answer


def runner(opened: Opened) -> Callable[[Resource, str], Response]:
    """``respond`` on ``opened``'s loop, remembering answers (the same request is asked again and again)."""
    answers: dict[tuple[int, str], Response] = {}

    def run(resource: Resource, query: str) -> Response:
        key = (id(resource), query)
        if key not in answers:
            answers[key] = opened.loop.run_until_complete(respond(opened.target, resource, query))
        return answers[key]

    return run


# ------------------------------------------------------------------------------------------ the tests


def test_private_filters_answer_like_missing_ones(opened: Opened) -> None:
    run = runner(opened)
    probes = 0
    for name, pair in pairs(opened.target).items():
        document = is_document(pair.real.backend)
        lenient = name == "things_lenient"
        for key, private in filter_keys(document):
            # The lenient resource answers 200 (statements each time): the first and the last forms only.
            forms = list(filter_probes(key))
            for params in [forms[0], forms[-1]] if lenient else forms:
                query = urlencode(params)
                renames = not lenient or key.endswith(("password_hash", "__in"))
                answer = check_like_missing(opened.target, pair, private, query, run, renames=renames)
                probes += 1
                if lenient:
                    # Ignored, not applied: the answer to the same request without the parameter.
                    rest = urlencode([(k, v) for k, v in params if k != key])
                    assert answer == run(pair.real, rest), f"{opened.target.id}: {name}?{query} was not ignored"
                else:
                    assert answer.status == 400, f"{opened.target.id}: {name}?{query} answered {answer.status}"
                    assert {dict(item)["key"] for item in answer.extra} == {key}, answer
    assert probes >= (len(RESOURCE_NAMES) - 1) * len(PRIVATE_PATHS) * len(SUFFIXES) * 6


def test_private_order_answers_like_missing_order(opened: Opened) -> None:
    run = runner(opened)
    for pair in pairs(opened.target).values():
        for path in PRIVATE_PATHS:
            for probe in ORDER_PROBES:
                query = urlencode({"order_by": probe.format(p=path)})
                answer = check_like_missing(opened.target, pair, path, query, run)
                assert answer.status == 400, f"{opened.target.id}: {pair.real.name}?{query} answered {answer.status}"
                assert [dict(item)["key"] for item in answer.extra] in (["order_by"], ["order_by", "order_by"])


def test_many_private_parameters_are_all_reported_like_missing_ones(opened: Opened) -> None:
    run = runner(opened)
    for pair in pairs(opened.target).values():
        params = [(path + "__startswith", "h") for path in PRIVATE_PATHS]
        params += [("order_by", f"-{PRIVATE_PATHS[0]},name,{PRIVATE_PATHS[2]}")]
        query = urlencode(params)
        answer = run(pair.real, query)
        assert answer == run(pair.shadow, query), f"{opened.target.id}: {pair.real.name}?{query}"
        renamed_query = query.replace("password_hash", "passwordhash")
        exposed = exposed_for(pair.real)
        missing = run(pair.real, renamed_query)
        assert answer.renamed("password_hash", "passwordhash").without_hints(exposed) == missing.without_hints(exposed)


PROBE_SEGMENTS = st.sampled_from(
    (
        "owner",
        "reviewer",
        "manager",
        "company",
        "role",
        "tags",
        "parts",
        "supplier",
        "password_hash",
        "password_hash",
        "password_hash",
        "passwordhash",
        "password",
        "hash",
        "PASSWORD_HASH",
        "name",
        "id",
        "company_id",
        "",
        "$id",
    )
)


@st.composite
def probe_queries(draw: st.DrawFn) -> str:
    """Random keys from relation, field and operator names around ``password_hash``, as filters or order terms."""
    params: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 3))):
        segments = draw(st.lists(PROBE_SEGMENTS, min_size=1, max_size=5))
        joiner = draw(st.sampled_from(("__", "__", "__", ".", "_")))
        key = joiner.join(segments)
        if draw(st.booleans()):
            key += "__" + draw(st.sampled_from((*OPERATORS, "nosuchop")))
        if draw(st.integers(0, 3)) == 0:
            params.append(("order_by", draw(st.sampled_from(("", "-"))) + key))
        else:
            value = draw(st.sampled_from(("h", "hash-alice", "", "hash-alice,hash-bob", "true", "1")))
            params += [(key, value)] * draw(st.integers(1, 2))
    return urlencode(params)


def test_no_query_tells_a_private_field_from_a_missing_one(opened: Opened) -> None:
    run = runner(opened)
    made = pairs(opened.target)
    answered: list[int] = []

    @profile()
    @given(name=st.sampled_from(RESOURCE_NAMES), query=probe_queries())
    def alike(name: str, query: str) -> None:
        pair = made[name]
        answer = run(pair.real, query)
        assert answer == run(pair.shadow, query), f"{opened.target.id}: {name}?{query}"
        answered.append(answer.status)

    alike()
    assert len(answered) >= profile().max_examples
    assert 200 in answered, "the probes never reached the lenient resource's 200"


@pytest.mark.parametrize("setting", ["search_fields", "filter_fields", "order_fields", "default_order", "forced"])
def test_declaring_a_private_path_fails_at_start(opened: Opened, setting: str) -> None:
    backend = opened.target.resources["things"].backend
    for path in PRIVATE_PATHS:
        options = options_for(backend)
        if setting == "forced":
            options["scopes"] = (ScopeRule((path,), lambda _connection: {}),)
        elif setting == "default_order":
            options["default_order"] = (f"-{path}",)
        else:
            options[setting] = (*options[setting], path)
        with pytest.raises(ConfigurationError):
            prepare(Resource("things", backend, **options))


WILDCARDS = ("owner__*", "reviewer__*", "owner__manager__*", "owner__manager__manager__*", "reviewer__manager__*")


def test_no_wildcard_exposes_a_private_field(opened: Opened) -> None:
    backend = opened.target.resources["things"].backend
    graph = backend.model_graph()
    assert graph.entities["User"].fields["password_hash"].private, "the fixture's private field is not private"
    # Document stores filter own fields only (docs: query language, "Document-store resources"): their
    # wildcards go to order_fields alone.
    filters = ("*",) if is_document(backend) else ("*", *WILDCARDS)
    resource = Resource("things", backend, filter_fields=filters, order_fields=("*", *WILDCARDS))
    field_map = prepare(resource).field_map
    for exposed in (*field_map.filterable.values(), *field_map.orderable.values(), *field_map.searchable):
        assert not exposed.field.private, f"{opened.target.id}: {exposed.path.name} exposes a private field"
    names = [*field_map.filterable, *field_map.orderable]
    assert not [name for name in names if "password" in name]
    for pair in pairs(opened.target).values():
        shown = [*prepare(pair.real).field_map.filterable, *prepare(pair.real).field_map.orderable]
        shown += [exposed.path.name for exposed in prepare(pair.real).field_map.searchable]
        assert not [name for name in shown if "password" in name]


LOAD_ALL = ("owner__manager__manager", "reviewer__manager", "company", "parts__supplier", "tags")


def test_no_item_carries_a_private_value(opened: Opened) -> None:
    """Items hold no private field, even with every relation loaded (``FieldInfo.private``: never listed)."""
    target = opened.target
    resource = target.resources["things"]

    async def body() -> bytes:
        async with target.context() as context:
            result = await list_resource(
                resource, None, [("count", "100")], app=target.app, load=LOAD_ALL, session=context.session
            )
        return msgspec.json.encode(result.envelope)

    encoded = opened.loop.run_until_complete(body())
    leaked = [secret.decode() for secret in SECRETS if secret in encoded]
    assert not leaked, f"{target.id}: the listed items carry {leaked}"


# ------------------------------------------------------------------------------------------ the demo over HTTP

DEMO_TARGETS = selected(store=Store.SQL)
DEMO_PRIVATE = "user__password_hash"
DEMO_MISSING = ("user__passwordhash", "user__nosuchfield")
needs_demo = pytest.mark.skipif(
    not DEMO_TARGETS, reason="the demo runs on SQLAlchemy or Piccolo, on SQLite, PostgreSQL or (SQLAlchemy) MariaDB"
)
DEMO_QUERIES = ("{p}=x", "{p}__startswith=h", "{p}__in=a,b", "{p}=a&{p}=b", "{p}__isnull=true", "order_by={p}")


def schema_only_database(database: str, tmp_path: Path) -> str:
    """A demo database with the demo's tables and no rows, as a SQLAlchemy async URL."""
    server = server_target_url(database, f"{HOSTILE_DATABASE}_demo")
    url = async_url(server) if server else f"sqlite+aiosqlite:///{tmp_path / 'demo.sqlite'}"

    async def create() -> None:
        engine = create_async_engine(url)
        try:
            async with engine.begin() as connection:
                await connection.run_sync(DemoBase.metadata.drop_all)
                await connection.run_sync(DemoBase.metadata.create_all)
        finally:
            await engine.dispose()

    asyncio.run(create())
    return url


@pytest.fixture(scope="module", params=DEMO_TARGETS, ids=str)
def demo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Litestar]]:
    target = request.param
    url = schema_only_database(target.database, tmp_path_factory.mktemp("hostile-demo"))
    with TestClient(create_app(url, backend=target.backend)) as client:
        yield client


@needs_demo
@pytest.mark.parametrize("template", DEMO_QUERIES)
def test_demo_answers_a_private_path_like_a_missing_one(demo: TestClient[Litestar], template: str) -> None:
    headers = {"authorization": "Bearer demo-aa"}
    assert demo.get("/api/v1/watched-flights/?count=1", headers=headers).status_code == 200
    private = demo.get(f"/api/v1/watched-flights/?{template.format(p=DEMO_PRIVATE)}", headers=headers)
    assert private.status_code == 400, private.text
    assert "password" not in private.text.replace(DEMO_PRIVATE, "")
    for missing in DEMO_MISSING:
        other = demo.get(f"/api/v1/watched-flights/?{template.format(p=missing)}", headers=headers)
        assert other.status_code == private.status_code
        assert other.headers["content-type"] == private.headers["content-type"]
        assert private.content.replace(DEMO_PRIVATE.encode(), missing.encode()) == other.content


@needs_demo
def test_demo_openapi_names_no_private_field(demo: TestClient[Litestar]) -> None:
    schema = demo.get("/schema/openapi.json")
    assert schema.status_code == 200
    assert b"password" not in schema.content
