"""Development helpers for the tests, bench/ and scripts/, kept out of the shipped package.

`wheelcache` unpacks real vLLM (and transformers) wheels into the patchops cache,
`release_day` says what PyPI offered on a release's day, `reliability_harness` builds and
judges two-copy worlds under crashes and faults, `generated_inputs` the inputs Hypothesis
generates for them. Import them as `devtools.<module>` with the
repository root on sys.path (pytest's `pythonpath` setting; bench/ and scripts/ insert it).
"""
