"""``__all__`` of the public package names exactly what it exports (after httpx's test)."""

from __future__ import annotations

import litestar_listing


def test_all_names_every_public_member_once() -> None:
    # Its order is ruff's (RUF022); here: nothing missing, nothing extra, nothing twice.
    public = {name for name in dir(litestar_listing) if not name.startswith("_")}
    modules = {"backends", "core", "plugin"}
    assert len(set(litestar_listing.__all__)) == len(litestar_listing.__all__)
    assert set(litestar_listing.__all__) == public - modules
