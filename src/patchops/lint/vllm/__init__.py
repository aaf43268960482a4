"""What patchops knows about vLLM releases, read from their PyPI wheels (never imported).

`releases` holds every version boundary and the one version parser; the other modules
predict what a release does with a config, by subject: `inputs` (the values vLLM sees),
`routing` (V0/V1 engine and the V1 oracle), `architectures` (the model registry's view of
config.json's architectures), `scheduler` (batch defaults, chunked prefill),
`attention` (backend choice), `cuda_graphs` (capture sizes), `request_len` (a request above
max_model_len), `plugins` (parser plugin files) and `wording` (message text).
Rules import these modules and the rule API, never each other.
"""
