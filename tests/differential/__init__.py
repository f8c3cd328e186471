"""Differential tests: generated queries on the memory, SQLAlchemy and Piccolo backends must agree."""
