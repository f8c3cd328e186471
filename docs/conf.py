"""Sphinx configuration of the litestar-listing documentation (``nox -s docs`` builds it, warnings as errors)."""

from __future__ import annotations

import sys
from importlib.metadata import version as package_version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The examples import as ``docs.examples...`` (as the tests do), whichever directory Sphinx runs in.
sys.path.insert(0, str(ROOT))

project = "litestar-listing"
author = "litestar-listing developers"
copyright = "2026, litestar-listing developers"  # noqa: A001 - the name Sphinx reads
release = package_version("litestar-listing")
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
# No intersphinx: the build must work offline, and links to other projects' inventories need the network.

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples/**", "load/**", "Thumbs.db", ".DS_Store"]
# _templates/partials/webfonts.html replaces the theme's Google Fonts links: the site works offline.
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["listing.css"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# Google docstrings, as the package writes them.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_attr_annotations = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_default_options = {"members": True, "show-inheritance": True}
# Annotations name types of optional libraries and of ``TYPE_CHECKING`` imports that autodoc cannot
# always resolve; an unresolved cross-reference in a signature is not worth failing the build for.
nitpicky = False

html_theme = "shibuya"
html_title = "litestar-listing"
html_theme_options = {
    "accent_color": "indigo",
    # Offline: no links that only work with a network connection.
    "show_ai_links": False,
    "open_in_chatgpt": False,
    "open_in_claude": False,
}
pygments_style = "friendly"
