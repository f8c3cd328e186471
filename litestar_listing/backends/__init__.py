"""Storage backends: each compiles a ``ListQuery`` for one kind of store.

Backends other than ``memory`` need an optional extra; import them from their subpackage
(``litestar_listing.backends.sqlalchemy``, ``.piccolo``, ``.beanie``), which raises
``MissingExtraError`` naming the extra when it is missing (docs: design, "Architecture"). Neither
this package nor the memory backend imports Litestar itself: ``MissingExtraError`` (a Litestar
exception) is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from litestar_listing.backends._extras import MissingExtraError

__all__ = ("MissingExtraError",)


def __getattr__(name: str) -> object:
    if name == "MissingExtraError":
        from litestar_listing.backends._extras import MissingExtraError

        return MissingExtraError
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
