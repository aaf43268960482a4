"""patchops: find, patch, roll back and lint vLLM installs without importing vLLM."""

__version__ = "0.1.0"
