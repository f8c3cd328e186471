"""The demo's API explorer: Litestar's own Swagger UI page, its files served from the installed package, offline.

Litestar's ``SwaggerRenderPlugin`` loads Swagger UI from a CDN unless given the URLs of its files;
``LocalSwaggerRenderPlugin`` gives it those of the ``swagger-ui-py`` package's files, served under
``ASSETS_PATH`` next to the page at ``EXPLORER_PATH``, and nothing else: the page is the one a
user's own application gets, without a script of the demo's. ``swagger-ui-py`` ships Swagger UI 5,
the first major version that reads OpenAPI 3.1 (what Litestar writes); ``swagger-ui-bundle``
ships 4.15, which refuses such a document.

The schema declares the demo's bearer tokens as an optional HTTP bearer scheme (``SECURITY_SCHEME``),
so the explorer's "Authorize" button signs its requests in as a demo user; without a token a request
is anonymous, as with the demo's ``DemoAuthentication`` middleware.
"""

from __future__ import annotations

import html
import importlib.util
from pathlib import Path

from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.router import Router
from litestar.static_files import create_static_files_router

__all__ = (
    "ASSETS_PATH",
    "EXPLORER_PATH",
    "SCHEMA_PATH",
    "SECURITY_SCHEME",
    "LocalSwaggerRenderPlugin",
    "openapi_config",
    "swagger_ui_assets",
)

SCHEMA_PATH = "/schema"
"""Where Litestar serves the OpenAPI documents and the explorer (the demo's auth middleware skips it)."""

EXPLORER_PATH = f"{SCHEMA_PATH}/swagger"
"""The explorer page; ``SCHEMA_PATH`` itself serves it too."""

ASSETS_PATH = f"{SCHEMA_PATH}/swagger-ui"
"""Where Swagger UI's files are served from the installed package."""

SECURITY_SCHEME = "DemoBearer"
"""The name of the demo's bearer token scheme in ``components.securitySchemes``."""

_PACKAGE = "swagger_ui"  # the import name of the PyPI package swagger-ui-py


def swagger_ui_assets() -> Path:
    """The folder of Swagger UI's distribution files inside the installed ``swagger-ui-py`` package.

    The package is located, never imported: its ``__init__`` loads web framework adapters the demo
    does not use.

    Returns:
        The folder holding ``swagger-ui-bundle.js``, ``swagger-ui.css`` and the icons.

    Raises:
        RuntimeError: ``swagger-ui-py`` is not installed (it comes with the ``demo`` extra).
    """
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        folder = Path(location) / "static"
        if (folder / "swagger-ui-bundle.js").is_file():
            return folder
    msg = "the demo's API explorer needs swagger-ui-py: pip install 'litestar-listing[demo]'"
    raise RuntimeError(msg)


class LocalSwaggerRenderPlugin(SwaggerRenderPlugin):
    """Litestar's Swagger UI page, its files served by the OpenAPI router from ``assets``: nothing leaves the server.

    Only ``SwaggerRenderPlugin``'s own options: the URLs of the script, the standalone preset, the
    style sheet and the icon. The page is Litestar's, with no script of the demo's (docs: explorer,
    "Swagger UI in your own app").
    """

    def __init__(self, assets: Path, *, path: str = "/swagger", assets_path: str = "/swagger-ui") -> None:
        """Serve the page at ``path`` and the files at ``assets_path``, both under the OpenAPI router.

        Args:
            assets: The folder of Swagger UI's distribution files (``swagger_ui_assets()``).
            path: The page's path below the OpenAPI router's (``SCHEMA_PATH``).
            assets_path: The files' path below the OpenAPI router's.
        """
        self.assets = assets
        self.assets_path = assets_path
        urls = self.urls(f"{SCHEMA_PATH}{assets_path}")
        super().__init__(
            path=path,
            js_url=urls["js_url"],
            standalone_preset_js_url=urls["standalone_preset_js_url"],
            css_url=urls["css_url"],
            favicon=urls["favicon"],
        )

    @staticmethod
    def urls(assets_url: str) -> dict[str, str]:
        """``SwaggerRenderPlugin``'s options for Swagger UI's files served at ``assets_url``."""
        return {
            "js_url": f"{assets_url}/swagger-ui-bundle.js",
            "standalone_preset_js_url": f"{assets_url}/swagger-ui-standalone-preset.js",
            "css_url": f"{assets_url}/swagger-ui.css",
            "favicon": f"<link rel='icon' type='image/png' href='{html.escape(assets_url)}/favicon-32x32.png'>",
        }

    def receive_router(self, router: Router) -> None:
        """Add the route of Swagger UI's files to the OpenAPI router, outside the schema."""
        for name, value in self.urls(f"{router.path.rstrip('/')}{self.assets_path}").items():
            setattr(self, name, value)
        router.register(
            create_static_files_router(
                path=self.assets_path, directories=[self.assets], name="swagger-ui-assets", include_in_schema=False
            )
        )


def openapi_config(*, title: str = "litestar-listing demo", version: str = "1.0.0") -> OpenAPIConfig:
    """The demo's OpenAPI settings: the offline explorer, the JSON and YAML documents, the bearer scheme.

    Only pages that need no network are served: the CDN-based ReDoc, RapiDoc and Stoplight pages
    Litestar offers by default are left out.

    Args:
        title: ``info.title`` of the document, also the explorer's page title.
        version: ``info.version`` of the document.

    Returns:
        The configuration for ``Litestar(openapi_config=...)``: the explorer at ``SCHEMA_PATH`` and
        ``EXPLORER_PATH``, ``/schema/openapi.json``, ``/schema/openapi.yaml``.
    """
    bearer = SecurityScheme(
        type="http",
        scheme="bearer",
        description=(
            "A demo user's token, listed at / (demo-admin sees every airline; demo-ua, demo-aa and demo-dl "
            "see their own airline's flights and watch list). Optional: without it a request is anonymous; "
            "an unknown token is refused with 401."
        ),
    )
    return OpenAPIConfig(
        title=title,
        version=version,
        path=SCHEMA_PATH,
        components=Components(security_schemes={SECURITY_SCHEME: bearer}),
        # ``{}`` first: the token is optional (anonymous requests list the public flight data).
        security=[{}, {SECURITY_SCHEME: []}],
        render_plugins=[LocalSwaggerRenderPlugin(swagger_ui_assets()), JsonRenderPlugin(), YamlRenderPlugin()],
    )
