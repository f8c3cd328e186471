"""Storage backends: each compiles a ``ListQuery`` for one kind of store.

Backends other than ``memory`` need an optional extra; import them from their subpackage
(``litestar_listing.backends.sqlalchemy``), which names the extra when it is missing.
"""
