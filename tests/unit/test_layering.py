"""The layering of the package: the core and the plugin import no module of their own in a circle, and the
backends package with the memory backend runs without Litestar."""

from __future__ import annotations

import ast
import dataclasses
import graphlib
import subprocess
import sys
from pathlib import Path

from litestar_listing.plugin.resource import Resource

PACKAGE = Path(__file__).resolve().parents[2] / "litestar_listing"


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


def test_plugin_modules_import_each_other_without_a_circle() -> None:
    graph = _graph("plugin")
    assert len(graph) > 10  # the files were found
    # Type-only imports count: a circle through them is a circle of concepts all the same.
    assert set(graphlib.TopologicalSorter(graph).static_order()) == set(graph)
    # The declaration sits low: it needs the scope rules and row policies it names, nothing above it.
    assert graph["resource"] <= {"scoping", "policies"}


def test_the_resource_is_a_declaration_that_calls_nothing() -> None:
    # Fields only: parsing, listing and preparing are functions of the modules above it.
    assert dataclasses.is_dataclass(Resource)
    own = {name for name, value in vars(Resource).items() if not name.startswith("__") and callable(value)}
    own |= {name for name, value in vars(Resource).items() if isinstance(value, property)}
    assert own == set()


def test_backends_and_the_memory_backend_import_without_litestar() -> None:
    # A bare package: litestar_listing/__init__ imports the plugin, which is Litestar's by design.
    code = (
        "import sys, types\n"
        "package = types.ModuleType('litestar_listing')\n"
        f"package.__path__ = [{str(PACKAGE)!r}]\n"
        "sys.modules['litestar_listing'] = package\n"
        "import litestar_listing.backends\n"
        "from litestar_listing.backends.memory import MemoryBackend\n"
        "print('litestar' in sys.modules)\n"
        "from litestar_listing.backends import MissingExtraError\n"
        "print(MissingExtraError.__mro__[1].__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)  # noqa: S603
    # Litestar only comes in when MissingExtraError, a Litestar exception, is asked for.
    assert result.stdout.split() == ["False", "MissingDependencyException"]
