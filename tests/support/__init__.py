"""Helpers shared by the tests, bench/ and scripts/, kept out of the shipped package.

Import them as `tests.support.<module>` with the repository root on sys.path (pytest's
`pythonpath` setting; bench/ and scripts/ insert it themselves).
"""
