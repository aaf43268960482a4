"""The venv builder's pieces that need no vLLM: the stand-in driver and the cuda-python pin."""

from __future__ import annotations

import ctypes
import subprocess

from conformance import venvs
from patchops.run import stand_in


def _venv(tmp_path, version="9.9.9"):
    venv = venvs.Venv(version, tmp_path / version)
    site = venv.root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    return venv, site


def _dist(site, name, version):
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_stand_in_driver_exports_what_extensions_link_against(tmp_path):
    venv, site = _venv(tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    (real / "cuda.c").write_text("int cuMemCreate(void) { return 0; }\n"
                                 "int cuTensorMapEncodeTiled(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(real / "libcuda.so.1"),
                    "-Wl,-soname,libcuda.so.1", str(real / "cuda.c")], check=True)
    (real / "ext.c").write_text("int cuMemCreate(void); int f(void) { return cuMemCreate(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(site / "_C.abi3.so"), str(real / "ext.c"),
                    "-L", str(real), "-l:libcuda.so.1"], check=True)
    (real / "other.c").write_text("int cuUnrelated(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(site / "_other.so"), str(real / "other.c")],
                   check=True)

    symbols = venvs._build_driver(venv)

    assert "cuMemCreate" in symbols and "cuInit" in symbols
    assert "cuTensorMapEncodeTiled" not in symbols   # exported by the real driver, not needed
    assert "cuUnrelated" not in symbols              # defined by a library that needs no driver
    stub = ctypes.CDLL(str(venv.driver_dir / "libcuda.so.1"))
    assert stub.cuMemCreate() == stand_in.NO_DEVICE
    assert stub.cuInit(0) == stand_in.NO_DEVICE


def test_stand_in_error_string_answers(tmp_path):
    venv, site = _venv(tmp_path)
    venvs._build_driver(venv)
    stub = ctypes.CDLL(str(venv.driver_dir / "libcuda.so.1"))
    text = ctypes.c_char_p()
    assert stub.cuGetErrorString(stand_in.NO_DEVICE, ctypes.byref(text)) == 0
    assert b"no CUDA device" in text.value


def test_cuda_python_pin_only_when_majors_clash(tmp_path):
    venv, site = _venv(tmp_path)
    assert venvs._cuda_python_pin(venv) is None
    _dist(site, "cuda-bindings", "13.5.0")
    assert venvs._cuda_python_pin(venv) is None
    _dist(site, "cuda-python", "12.6.2.post1")
    assert venvs._cuda_python_pin(venv) == "cuda-python>=13"


def test_cuda_python_pin_leaves_a_matching_pair(tmp_path):
    venv, site = _venv(tmp_path)
    _dist(site, "cuda-bindings", "13.4.4")
    _dist(site, "cuda-python", "13.4.4")
    assert venvs._cuda_python_pin(venv) is None


def test_probe_environment_is_offline_profiled_and_clean(tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_USE_V1", "0")
    monkeypatch.setenv("HF_TOKEN", "secret")
    venv = venvs.Venv("1.0", tmp_path / "v")
    env = venvs.environment(venv, {"name": "X", "count": 2}, tmp_path / "home")
    assert "VLLM_USE_V1" not in env and "HF_TOKEN" not in env
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["PYTHONPATH"] == str(venv.shim) and env["LD_LIBRARY_PATH"] == str(venv.driver_dir)
    assert '"count": 2' in env["PATCHOPS_GPU_PROFILE"]


def test_shim_registers_the_platform_plugin(tmp_path):
    venv = venvs.Venv("1.0", tmp_path / "v")
    venv.root.mkdir()
    venvs._write_shim(venv)
    entry = (venv.shim / "patchops_conformance_shim-0.dist-info" / "entry_points.txt").read_text()
    assert "[vllm.platform_plugins]" in entry and "patchops_platform_plugin:platform" in entry
    assert (venv.shim / "sitecustomize.py").exists() and (venv.shim / "patchops_platform.py").exists()
