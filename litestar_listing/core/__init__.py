"""The backend-neutral listing engine: query nodes, operators, parsing and the field map.

Standard library only: nothing here imports Litestar or an ORM (docs: design, "Architecture").
"""
