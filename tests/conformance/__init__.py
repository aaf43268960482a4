"""Real vLLM as the judge of `patchops lint` (see README.md in this folder)."""
