"""PO402 capture-settings-moot-with-eager beyond its examples."""

from __future__ import annotations


from lintkit import linter, said


CODE = "PO402"


lint = linter(CODE, kind="config")


def test_one_finding_per_setting():
    found = lint("model: m\nenforce-eager: true\ncudagraph-capture-sizes: [1, 2]\n"
                 "max-cudagraph-capture-size: 2\n", "0.12.0")
    assert [(d.line, d.fields) for d in found] == [
        (3, ("cudagraph_capture_sizes", "enforce_eager")),
        (4, ("max_cudagraph_capture_size", "enforce_eager")),
    ]
    assert all(d.severity == "warning" and "captures no CUDA graphs" in said(d) for d in found)


def test_both_keys_of_one_compilation_config_are_one_finding():
    [found] = lint("model: m\nenforce-eager: true\ncompilation-config: "
                   "'{\"cudagraph_capture_sizes\": [1, 2], \"max_cudagraph_capture_size\": 2}'\n", "0.12.0")
    assert found.message.startswith("compilation_config.cudagraph_capture_sizes and "
                                    "compilation_config.max_cudagraph_capture_size have no effect")


def test_hardcoded_eager_points_at_the_patchset():
    [found] = lint("model: m\nmax-seq-len-to-capture: 16384\n", "0.6.3.post1",
                   hardcoded={"enforce_eager": "True"})
    assert "hardcodes enforce_eager=True" in said(found)
    assert "corex-eager-allreduce" in found.fix


def test_quiet_without_eager():
    assert lint("model: m\nmax-seq-len-to-capture: 16384\n", "0.6.3.post1") == []
    assert lint("model: m\nenforce-eager: false\ncuda-graph-sizes: [8]\n", "0.10.2") == []
