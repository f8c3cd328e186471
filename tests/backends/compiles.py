"""Counting how often the shared relational compiler compiles statements (statements kept per query shape)."""

from __future__ import annotations

from typing import Any

import pytest

from litestar_listing.backends.relational.compiler import RelationalCompiler
from litestar_listing.core.query import ListQuery


def counted_compiles(monkeypatch: pytest.MonkeyPatch) -> list[ListQuery]:
    """The queries any relational dialect compiles statements for from now on, in order (``monkeypatch`` undoes it)."""
    compiled: list[ListQuery] = []
    compile_statements = RelationalCompiler.compile

    def counted(self: RelationalCompiler[Any, Any], query: ListQuery, *args: Any, **kwargs: Any) -> Any:
        compiled.append(query)
        return compile_statements(self, query, *args, **kwargs)

    monkeypatch.setattr(RelationalCompiler, "compile", counted)
    return compiled
