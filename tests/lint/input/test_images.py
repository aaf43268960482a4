"""Image tags: the release they name, and why `latest` names none."""

from __future__ import annotations

import pytest

from patchops.lint.input.images import parse_image, release_of


@pytest.mark.parametrize("reference, release", [
    ("vllm/vllm-openai:v0.8.5", "0.8.5"),
    ("docker.io/vllm/vllm-openai:v0.10.1.1", "0.10.1.1"),
    ("vllm/vllm-openai:v0.6.3.post1", "0.6.3.post1"),
    ("vllm/vllm-openai-rocm:v0.11.0", "0.11.0"),
    ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "0.8.5"),
    ("vllm/vllm-openai:latest", None),
    ("vllm/vllm-openai", None),
    ("vllm/vllm-openai@sha256:" + "a" * 64, None),
    ("rocm/vllm:latest", None),
    ("localhost:5000/vllm/vllm-openai", None),      # a registry port is no tag
    ("myorg/vllm-openai:v0.8.5", None),             # not vLLM's own image: its tag is its own
])
def test_release_of_a_tag(reference, release):
    found, why = release_of(parse_image(reference))
    assert found == release
    assert (why is None) == (release is not None)


def test_which_images_name_vllm():
    assert parse_image("vllm/vllm-openai:v0.8.5").official
    assert not parse_image("myorg/vllm-openai:v0.8.5").official
    assert parse_image("rocm/vllm:x").names_vllm and not parse_image("nginx:1").names_vllm
