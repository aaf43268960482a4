"""Errors, records, caches and settings: what every layer above may use."""
