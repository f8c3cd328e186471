"""litestar-listing: one listing interface for Litestar collection endpoints."""
