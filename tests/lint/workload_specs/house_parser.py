"""A stand-in tool-parser plugin: lint only checks that the file is there."""
