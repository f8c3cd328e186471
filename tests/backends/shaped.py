"""What the query-shape tests of both relational backends share: their rows, and a count of compiles."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from decimal import Decimal
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


def crate_rows(label: str, labels: Sequence[str]) -> list[dict[str, Any]]:
    """1,300 crates: ids 1-1300, three tenants, ``label`` cycling through four ``labels``, a Decimal weight, a date."""
    return [
        {
            "id": number,
            "tenant": number % 3,
            label: labels[number % 4],
            "weight": Decimal(number) / 4,
            "packed": datetime.date(2024, 1, 1) + datetime.timedelta(days=number // 5),
        }
        for number in range(1, 1301)
    ]
