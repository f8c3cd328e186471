"""Tests of the documentation: every example under docs/examples runs through Litestar's test client."""
