"""A patchset: its YAML, its index, and the libcst ops that rewrite one file's text."""
