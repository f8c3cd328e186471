"""The layering of the package: modules import each other without a circle, and a light import stays light.

The import checks run in fresh interpreters on the package as installed, with no stub in
``sys.modules``: ``import litestar_listing.backends.memory`` and ``import litestar_listing.core``
load no web framework, ORM or document store, because the package root loads its names lazily
(docs: design, "Importing the package").
"""

from __future__ import annotations

import ast
import dataclasses
import graphlib
import subprocess
import sys
from pathlib import Path

import pytest

from litestar_listing.plugin.resource import Resource

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGE = REPOSITORY / "litestar_listing"

HEAVY = ("litestar", "sqlalchemy", "advanced_alchemy", "piccolo", "beanie", "motor", "pymongo", "msgspec")
"""Top-level packages a light import must not load: the web framework, the ORMs, MongoDB's drivers, msgspec."""


def _imports_within(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that ``path`` imports, anywhere in it: ``TYPE_CHECKING`` and function bodies too.

    ``from <package> import <module>`` counts as the module when a file of that name exists.
    """
    names: set[str] = set()
    prefix = package + "."
    folder = PACKAGE / package.rsplit(".", 1)[-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.startswith(prefix):
                names.add(node.module.removeprefix(prefix).split(".")[0])
            elif node.module == package:
                names.update(alias.name for alias in node.names if (folder / f"{alias.name}.py").exists())
        elif isinstance(node, ast.Import):
            names.update(
                alias.name.removeprefix(prefix).split(".")[0] for alias in node.names if alias.name.startswith(prefix)
            )
    return names


def _graph(subpackage: str) -> dict[str, set[str]]:
    """Each module of ``litestar_listing.<subpackage>`` and the modules of it that it imports.

    The package's ``__init__`` is left out: it imports its modules, and Python runs it before any of them.
    """
    package = f"litestar_listing.{subpackage}"
    return {
        path.stem: _imports_within(path, package) - {path.stem}
        for path in (PACKAGE / subpackage).glob("*.py")
        if path.stem != "__init__"
    }


def test_core_modules_import_each_other_without_a_circle() -> None:
    graph = _graph("core")
    assert graph["fields"] == set()  # the leaf the others share
    # static_order raises CycleError naming the circle, if there is one.
    assert set(graphlib.TopologicalSorter(graph).static_order()) == set(graph)


PLUGIN_LAYERS = (
    {"envelope", "keyset", "admission", "budget", "problems", "exceptions"},
    {"resource", "scoping", "policies", "route_options"},
    {"prepared", "reach", "enrichment", "openapi", "indexes"},
    {"binding"},
    {"action", "facets"},
    {"routes", "handlers", "plugin"},
)
"""The plugin's layers, as docs/design.md lists them (docs: design, "The plugin's layers")."""


def test_plugin_modules_import_each_other_without_a_circle() -> None:
    graph = _graph("plugin")
    assert len(graph) > 10  # the files were found
    # Type-only imports count: a circle through them is a circle of concepts all the same.
    assert set(graphlib.TopologicalSorter(graph).static_order()) == set(graph)
    # The declaration sits low: it needs the scope rules and row policies it names, nothing above it.
    assert graph["resource"] <= {"scoping", "policies"}


def test_plugin_modules_import_only_their_layer_and_those_below() -> None:
    graph = _graph("plugin")
    layer = {name: number for number, names in enumerate(PLUGIN_LAYERS) for name in names}
    assert set(layer) == set(graph), "place each plugin module in a layer (docs/design.md too)"
    upward = sorted(f"{name} -> {used}" for name, uses in graph.items() for used in uses if layer[used] > layer[name])
    assert upward == []


def test_the_resource_is_a_declaration_that_calls_nothing() -> None:
    # Fields only: parsing, listing and preparing are functions of the modules above it.
    assert dataclasses.is_dataclass(Resource)
    own = {name for name, value in vars(Resource).items() if not name.startswith("__") and callable(value)}
    own |= {name for name, value in vars(Resource).items() if isinstance(value, property)}
    assert own == set()


def _run(code: str) -> list[str]:
    """The lines ``code`` prints in a fresh interpreter started in the repository (this checkout first)."""
    check = f"import litestar_listing, sys\nassert litestar_listing.__file__.startswith({str(PACKAGE)!r})\n"
    result = subprocess.run(  # noqa: S603 - this interpreter, code of the test
        [sys.executable, "-c", code + check], capture_output=True, text=True, check=True, cwd=REPOSITORY
    )
    return result.stdout.split()


def _loaded_heavy(statement: str) -> list[str]:
    code = f"import sys\n{statement}\nprint(','.join(name for name in {HEAVY!r} if name in sys.modules) or '-')\n"
    return _run(code)


@pytest.mark.parametrize(
    "statement",
    [
        "import litestar_listing.backends.memory",
        "from litestar_listing.backends.memory import MemoryBackend",
        "import litestar_listing.core",
        "import litestar_listing",
        "import litestar_listing.backends",
        *(f"import litestar_listing.core.{path.stem}" for path in sorted((PACKAGE / "core").glob("[!_]*.py"))),
    ],
)
def test_a_light_import_loads_no_framework_orm_or_driver(statement: str) -> None:
    assert _loaded_heavy(statement) == ["-"]


def test_the_package_root_loads_each_name_on_first_use() -> None:
    code = (
        "import sys\n"
        "from litestar_listing import ListingPlugin, MemoryBackend, Resource\n"
        "print(ListingPlugin.__module__, MemoryBackend.__module__, Resource.__module__, 'litestar' in sys.modules)\n"
        "import litestar_listing\n"
        "print(litestar_listing.plugin.ListingPlugin is ListingPlugin, 'ListingPlugin' in dir(litestar_listing))\n"
    )
    assert _run(code) == [
        "litestar_listing.plugin.plugin",
        "litestar_listing.backends.memory",
        "litestar_listing.plugin.resource",
        "True",
        "True",
        "True",
    ]


def test_the_extra_error_is_litestars_exception_loaded_when_asked_for() -> None:
    code = (
        "import sys\n"
        "import litestar_listing.backends\n"
        "print('litestar' in sys.modules)\n"
        "from litestar_listing.backends import MissingExtraError\n"
        "print(MissingExtraError.__mro__[1].__name__)\n"
    )
    # Litestar only comes in when MissingExtraError, a Litestar exception, is asked for.
    assert _run(code) == ["False", "MissingDependencyException"]
