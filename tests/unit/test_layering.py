"""The layering of the package: the core imports no module of its own in a circle, and the backends
package with the memory backend runs without Litestar."""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "litestar_listing"


def _core_imports(path: Path) -> set[str]:
    """The ``litestar_listing.core`` modules ``path`` imports, ``TYPE_CHECKING`` imports included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("litestar_listing.core."):
            names.add(str(node.module).rsplit(".", 1)[1])
    return names


def test_core_modules_import_each_other_without_a_circle() -> None:
    graph = {path.stem: _core_imports(path) for path in (PACKAGE / "core").glob("*.py") if path.stem != "__init__"}
    assert graph["fields"] == set()  # the leaf the others share
    # static_order raises CycleError naming the circle, if there is one.
    assert set(graphlib.TopologicalSorter(graph).static_order()) == set(graph)


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
