"""This box: the vLLM copies an interpreter can import, their versions, its accelerators, PyPI."""
