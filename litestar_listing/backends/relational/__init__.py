"""What the SQL backends share: the compiling algorithm (``compiler``) and the total rules (``totals``).

The SQLAlchemy and Piccolo backends subclass ``RelationalCompiler`` with their dialect's primitives.
"""

from __future__ import annotations

from litestar_listing.backends.relational.compiler import DEFERRED_OFFSET, KEY_LABEL, RelationalCompiler
from litestar_listing.backends.relational.totals import planner_rows, total_of

__all__ = ("DEFERRED_OFFSET", "KEY_LABEL", "RelationalCompiler", "planner_rows", "total_of")
