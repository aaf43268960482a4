"""The rule catalogue: explicit imports, ALL_RULES sorted by code (a test checks the order)."""

from patchops.lint.rules.unused_suppression import UnusedSuppression

ALL_RULES = (
    UnusedSuppression,
)
