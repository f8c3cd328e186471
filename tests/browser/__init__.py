"""Tests in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright (``nox -s browser``)."""
