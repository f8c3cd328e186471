"""``__all__`` of the public package names exactly what it exports (after httpx's test), each loaded on first use."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import litestar_listing

ROOT = Path(litestar_listing.__file__)


def test_all_names_every_public_member_once() -> None:
    # Its order is ruff's (RUF022); here: nothing missing, nothing extra, nothing twice. ``dir``
    # lists the names not loaded yet too; subpackages and the modules the root uses are told apart by type.
    public = {
        name
        for name in dir(litestar_listing)
        if not name.startswith("_") and not isinstance(getattr(litestar_listing, name), types.ModuleType)
    }
    assert len(set(litestar_listing.__all__)) == len(litestar_listing.__all__)
    assert set(litestar_listing.__all__) == public


def _type_checking_imports() -> dict[str, str]:
    """``{name: module}`` of the imports under ``if typing.TYPE_CHECKING:`` in the package root."""
    found: dict[str, str] = {}
    for node in ast.parse(ROOT.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                found.update((alias.name, str(statement.module)) for alias in statement.names)
    return found


def test_type_checkers_see_each_name_where_it_is_loaded_from() -> None:
    # The TYPE_CHECKING imports are what pyright, mypy and IDEs read; the lazy table is what runs.
    loaded_from = _type_checking_imports()
    assert set(loaded_from) == set(litestar_listing.__all__)
    for name, module in loaded_from.items():
        assert getattr(litestar_listing, name) is getattr(importlib.import_module(module), name)
