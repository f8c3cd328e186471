"""Client generators on the demo's OpenAPI document (``nox -s clients``)."""
