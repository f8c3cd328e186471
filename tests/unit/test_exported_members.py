"""``__all__`` of the public package names exactly what it exports (after httpx's test)."""

from __future__ import annotations

import types

import litestar_listing


def test_all_names_every_public_member_once() -> None:
    # Its order is ruff's (RUF022); here: nothing missing, nothing extra, nothing twice.
    # Subpackages become attributes once imported (by any test), so they are told apart by type.
    public = {
        name
        for name, value in vars(litestar_listing).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert len(set(litestar_listing.__all__)) == len(litestar_listing.__all__)
    assert set(litestar_listing.__all__) == public
