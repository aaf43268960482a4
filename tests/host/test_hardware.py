"""Hardware from `--hardware` and from recorded outputs of the vendor tools (their documented formats)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patchops.host.hardware import Hardware, HardwareError, detect, parse_hardware, run_tool

OUTPUTS = Path(__file__).parent / "hardware_outputs"


def tools(**answers: str):
    """A tool runner that answers `tool -> recorded file` and finds nothing else."""
    calls = []

    def run(argv):
        calls.append(tuple(argv))
        name = answers.get(argv[0].replace("-", "_"))
        if name is None:
            return None
        if argv[0] in ("nvidia-smi", "ixsmi") and name.endswith("-old.csv") and "compute_cap" in argv[1]:
            return None  # an old driver refuses the compute_cap field
        return (OUTPUTS / name).read_text()

    run.calls = calls
    return run


def test_nvidia_smi_gives_count_memory_and_capability():
    found = detect(tools(nvidia_smi="nvidia-smi.csv"), proc=Path("/nonexistent"))
    assert found == Hardware(gpus=2, memory_gib=80.0, compute_capability="8.0", platform="cuda",
                             name="NVIDIA A100-SXM4-80GB", source="nvidia-smi")


def test_old_nvidia_driver_without_compute_cap_field_is_queried_again():
    found = detect(tools(nvidia_smi="nvidia-smi-old.csv"), proc=Path("/nonexistent"))
    assert (found.gpus, found.memory_gib, found.compute_capability) == (1, 32.0, None)
    assert found.name == "Tesla V100-SXM2-32GB"


def test_ixsmi_marks_the_corex_platform():
    run = tools(ixsmi="ixsmi.csv")
    found = detect(run, proc=Path("/nonexistent"))
    assert (found.gpus, found.memory_gib, found.platform, found.source) == (4, 32.0, "corex", "ixsmi")
    assert run.calls[0][0] == "nvidia-smi"  # NVIDIA is asked first, and answered nothing


def test_rocm_smi_reads_bytes_as_gib():
    found = detect(tools(rocm_smi="rocm-smi.json"), proc=Path("/nonexistent"))
    assert (found.gpus, found.memory_gib, found.platform) == (2, 63.98, "rocm")
    assert found.name == "AMD Instinct MI250X"


def test_amd_smi_reads_megabytes():
    found = detect(tools(amd_smi="amd-smi.json"), proc=Path("/nonexistent"))
    assert (found.gpus, found.memory_gib, found.name) == (1, 191.98, "AMD Instinct MI300X")


def test_npu_smi_table_counts_npus_and_reads_hbm():
    found = detect(tools(npu_smi="npu-smi.txt"), proc=Path("/nonexistent"))
    assert (found.gpus, found.memory_gib, found.platform, found.name) == (2, 64.0, "ascend", "Ascend 910B3")


def test_proc_driver_nvidia_without_tools(tmp_path):
    for i, model in enumerate(["Tesla T4", "Tesla T4", "Tesla T4"]):
        folder = tmp_path / "driver" / "nvidia" / "gpus" / f"0000:0{i}:00.0"
        folder.mkdir(parents=True)
        (folder / "information").write_text(f"Model: \t\t {model}\nIRQ:  \t\t 35\n")
    found = detect(tools(), proc=tmp_path)
    assert (found.gpus, found.name, found.memory_gib, found.platform) == (3, "Tesla T4", None, "cuda")


def test_nothing_detected_when_every_tool_is_absent(tmp_path):
    assert detect(tools(), proc=tmp_path) is None


MEMINFO = "MemTotal:       527958364 kB\nMemFree:        1024 kB\n"


def test_host_memory_from_proc_meminfo_comes_with_the_gpus(tmp_path):
    (tmp_path / "meminfo").write_text(MEMINFO)
    found = detect(tools(nvidia_smi="nvidia-smi.csv"), proc=tmp_path)
    assert found.host_memory_gib == round(527958364 / 2**20, 2) == 503.5
    assert found.origin_of("hardware.host_memory_gib") == str(tmp_path / "meminfo")
    assert found.origin_of("hardware.gpus") == "nvidia-smi"
    assert found.describe().endswith(f"; host 503.5 GiB ({tmp_path / 'meminfo'})")
    # A box without accelerators will not serve: its RAM is not assumed for the node.
    assert detect(tools(), proc=tmp_path) is None


def test_run_tool_returns_none_for_a_tool_not_on_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run_tool(["nvidia-smi", "--query-gpu=name"]) is None


def test_run_tool_returns_none_for_a_failing_tool(monkeypatch, tmp_path):
    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed'\nexit 9\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run_tool(["nvidia-smi"]) is None
    tool.write_text("#!/bin/sh\necho 'Tesla T4, 15360, 7.5'\n")
    assert run_tool(["nvidia-smi"]) == "Tesla T4, 15360, 7.5\n"


@pytest.mark.parametrize("text, expected", [
    ("4xBI-V100:32GiB:cc7.5:corex",
     Hardware(gpus=4, memory_gib=32.0, compute_capability="7.5", platform="corex", name="BI-V100",
              source="--hardware")),
    ("H100:80GB", Hardware(gpus=1, memory_gib=80.0, name="H100", source="--hardware")),
    ("8 x A10:24576MiB:sm_86", Hardware(gpus=8, memory_gib=24.0, compute_capability="8.6", name="A10",
                                        source="--hardware")),
    ("{gpus: 2, memory_gib: 32, compute_capability: 7.0, platform: CUDA}",
     Hardware(gpus=2, memory_gib=32.0, compute_capability="7.0", platform="cuda", source="--hardware")),
    ('{"gpus": 1, "compute_capability": "sm_90"}',
     Hardware(gpus=1, compute_capability="9.0", source="--hardware")),
    ("8xH100:80GiB:host2048GiB", Hardware(gpus=8, memory_gib=80.0, name="H100", host_memory_gib=2048.0,
                                          source="--hardware")),
    ("{host_memory_gib: 512}", Hardware(host_memory_gib=512.0, source="--hardware")),
])
def test_parse_hardware_profiles(text, expected):
    assert parse_hardware(text) == expected


@pytest.mark.parametrize("text, says", [
    ("4xBI-V100:32GiB:fast", "'fast'"),
    ("{gpus: 4, vram: 32}", "takes only"),
    ("{gpus: four}", "must be numbers"),
    ("{gpus: [", "cannot read"),
])
def test_parse_hardware_errors_name_the_bad_part(text, says):
    with pytest.raises(HardwareError) as caught:
        parse_hardware(text)
    assert says in str(caught.value) and str(caught.value).startswith("--hardware:")


def test_context_and_description():
    hw = parse_hardware("4xBI-V100:32GiB:cc7.5:corex")
    assert hw.context() == {"hardware.gpus": 4, "hardware.memory_gib": 32.0,
                            "hardware.compute_capability": "7.5", "hardware.platform": "corex",
                            "hardware.name": "BI-V100"}
    assert hw.describe() == "4 x BI-V100, 32 GiB, cc 7.5, corex (--hardware)"
    assert Hardware(source="nvidia-smi").describe() == "nothing known (nvidia-smi)"
    host = parse_hardware("{host_memory_gib: 512}")
    assert host.context() == {"hardware.host_memory_gib": 512.0}
    assert host.describe() == "host 512 GiB (--hardware)"


# --------------------------------------------------------------------------- in lint

MULTISTEP_063 = """\
model: /models/Qwen2.5-7B-Instruct
vllm: {version: 0.6.3.post1}
args:
  num-scheduler-steps: 4
  enable-chunked-prefill: false
  max-model-len: 4096
  max-num-batched-tokens: 8192
"""


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text(MULTISTEP_063)
    return path


def test_assumed_hardware_decides_a_verdict_the_config_leaves_open(spec):
    from patchops import api

    turing = api.lint(spec, hardware=parse_hardware("1xT4:16GiB:cc7.5:cuda"))
    ampere = api.lint(spec, hardware=parse_hardware("1xA100:80GiB:cc8.0:cuda"))
    assert [(d.code, d.severity, d.line) for d in turing.diagnostics] == [("PO303", "error", 4)]
    assert ampere.diagnostics == []
    assert turing.hardware == "1 x T4, 16 GiB, cc 7.5, cuda (--hardware)"


def test_stated_hardware_wins_over_the_assumed(tmp_path):
    from patchops import api

    path = tmp_path / "serve.yaml"
    path.write_text(MULTISTEP_063.replace("args:\n", "hardware: {compute_capability: 8.0}\nargs:\n"))
    result = api.lint(path, hardware=parse_hardware("1xT4:16GiB:cc7.5:cuda"))
    assert result.diagnostics == []
    assert result.hardware == "1 x T4, 16 GiB, cc 7.5, cuda (--hardware)"  # name and memory were assumed
    fully_stated = tmp_path / "full.yaml"
    fully_stated.write_text(MULTISTEP_063.replace(
        "args:\n", "hardware: {gpus: 1, memory_gib: 16, compute_capability: 8.0, platform: cuda, "
        "name: A4000}\nargs:\n"))
    assert api.lint(fully_stated, hardware=parse_hardware("1xT4:16GiB:cc7.5:cuda")).hardware is None


SWAP_085 = "model: m\nvllm: {version: 0.8.5}\nargs:\n  swap-space: 64\n  tensor-parallel-size: 8\n"


def test_host_memory_unknown_says_which_check_did_not_run(tmp_path):
    from patchops import api
    from patchops.cli.render.lint import skipped_notes

    path = tmp_path / "serve.yaml"
    path.write_text(SWAP_085)
    unknown = api.lint(path)
    assert unknown.diagnostics == []
    assert [(n.rule, n.reason) for n in unknown.not_run if n.reason.startswith("hardware.host")] == [
        ("swap-space-exceeds-host-memory", "hardware.host_memory_gib not known")]
    assert [note for note in skipped_notes([unknown], verbose=True) if "host_memory_gib not known" in note] == [
        f"{path}: 1 check did not run, hardware.host_memory_gib not known (state it under hardware: "
        "or with --hardware): swap-space-exceeds-host-memory"]
    known = api.lint(path, hardware=parse_hardware("{host_memory_gib: 512}"))
    assert [(d.code, d.severity, d.line) for d in known.diagnostics] == [("PO623", "error", 4)]
    assert "hardware.host_memory_gib not known" not in [n.reason for n in known.not_run] and "hardware.host_memory_gib" not in " ".join(skipped_notes([known]))
    ignored = api.lint(path, ignore=["PO623"])
    assert "swap-space-exceeds-host-memory" not in [n.rule for n in ignored.not_run]


def _cli(args, env):
    from typer.testing import CliRunner

    from patchops.cli.app import app

    base = {"PATCHOPS_ROOTS": "", "PYTHONPATH": ""}
    return CliRunner().invoke(app, [str(a) for a in args], env={**base, **env})


def test_cli_detects_this_boxs_gpus_unless_told_not_to(spec, tmp_path):
    tools_dir = tmp_path / "bin"
    tools_dir.mkdir()
    smi = tools_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'Tesla T4, 15360, 7.5'\n")
    smi.chmod(0o755)
    env = {"PATH": f"{tools_dir}:{os.environ['PATH']}"}
    detected = _cli(["lint", spec], env)
    assert detected.exit_code == 1, detected.output
    assert "PO303" in detected.output
    assert "assumed hardware: 1 x Tesla T4, 15 GiB, cc 7.5, cuda (nvidia-smi)" in detected.output
    skipped = _cli(["lint", "--no-detect-hardware", spec], env)
    assert skipped.exit_code == 0 and "assumed hardware" not in skipped.output


def test_cli_hardware_option_and_its_error(spec):
    stated = _cli(["lint", "--hardware", "1xT4:16GiB:cc7.5:cuda", "--format", "json", spec], {})
    assert stated.exit_code == 1
    assert json.loads(stated.output)["inputs"][0]["assumed_hardware"].endswith("(--hardware)")
    bad = _cli(["lint", "--hardware", "T4:lots", spec], {})
    assert bad.exit_code == 2 and "--hardware: 'lots'" in bad.output


def test_free_memory_of_the_least_free_gpu_is_detected_and_judged():
    recorded = tools(nvidia_smi="nvidia-smi.csv")

    def run(argv):
        if "--query-gpu=memory.free" in argv:
            return "81000\n512\n"            # GPU 1: another process holds all but 0.5 GiB
        return recorded(argv)

    found = detect(run, proc=Path("/nonexistent"))
    assert (found.memory_gib, found.free_memory_gib) == (80.0, 0.5)
    assert "0.5 GiB free now" in found.describe()
    assert detect(recorded, proc=Path("/nonexistent")).free_memory_gib is None  # a tool without the field
    assert parse_hardware("{memory_gib: 80, free_memory_gib: 72}").free_memory_gib == 72.0


def test_a_detected_busy_gpu_is_reported_with_where_the_figure_came_from(tmp_path):
    from patchops import api

    spec = tmp_path / "serve.yaml"
    spec.write_text("model: m\nvllm: {version: 0.10.1.1}\nargs:\n  max-model-len: 4096\n")
    busy = Hardware(gpus=2, memory_gib=80.0, free_memory_gib=0.5, source="nvidia-smi")
    [found] = [d for d in api.lint(spec, hardware=busy).diagnostics if d.code == "PO624"]
    assert found.severity == "error" and "measured with nvidia-smi on this box" in found.explanation
    idle = Hardware(gpus=2, memory_gib=80.0, free_memory_gib=79.0, source="nvidia-smi")
    assert "PO624" not in {d.code for d in api.lint(spec, hardware=idle).diagnostics}
