"""Helpers shared by the tests, kept out of the shipped package.

Import them as `tests.support.<module>` with the repository root on sys.path (pytest's
`pythonpath` setting). The wheel cache and release-day lookups are devtools/' (bench/ and
scripts/ use them too); they are re-exported here as the same modules, so patching one
(the fast loop's wheel ban) patches what every caller sees.
"""

from devtools import release_day, wheelcache  # noqa: F401
