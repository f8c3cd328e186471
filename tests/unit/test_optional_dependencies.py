"""A backend whose ORM is missing names the extra to install (STYLE.md, point 10)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("backend", "modules", "extra"),
    [
        ("sqlalchemy", ("sqlalchemy", "advanced_alchemy"), "sqlalchemy"),
        ("piccolo", ("piccolo",), "piccolo"),
        ("beanie", ("beanie",), "beanie"),
    ],
)
def test_importing_a_backend_without_its_orm_names_the_extra(
    backend: str, modules: tuple[str, ...], extra: str
) -> None:
    # A None entry in sys.modules makes ``import <name>`` raise ImportError, as if it were not installed.
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in modules)
    code = (
        f"import sys\n{blocked}"
        "try:\n"
        f"    import litestar_listing.backends.{backend}\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)  # noqa: S603
    assert result.stdout.startswith("MissingExtraError"), result.stdout
    assert f"pip install 'litestar-listing[{extra}]'" in result.stdout, result.stdout
