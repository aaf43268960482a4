"""Facts read from real vLLM trees (PyPI wheels), the facts cache and the shipped facts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import vendor_hardcode
from patchops.core import digest_cache
from patchops.lint.facts import cache as facts_mod
from patchops.lint import extract as facts_extract
from patchops.lint.facts import packs, vouch
from patchops.lint.facts.model import Facts, Flag, HowRead, ReadKind, facts_for_version, shipped_versions
from patchops.lint.facts.cache import extract_facts, facts_for_copy
from patchops.lint.vllm import releases
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.static_eval import Classes
from tests.support import release_day, wheelcache

pytestmark = pytest.mark.vllm

# The 15 releases first shipped, before every final release was: the ones the tests here sample.
ALL_SHIPPED = ["0.6.3.post1", "0.7.3", "0.8.5", "0.9.2", "0.10.0", "0.10.1.1", "0.10.2",
               "0.11.0", "0.12.0", "0.15.0", "0.20.0", "0.25.0", "0.30.0", "0.32.0", "0.33.0"]


@pytest.fixture(scope="module")
def facts_of():
    """Return version -> Facts extracted (uncached) from the real tree, memoised per module."""
    memo = {}

    def get(version: str, with_flash_attn: bool = True) -> Facts:
        key = (version, with_flash_attn)
        if key not in memo:
            memo[key] = extract_facts(wheelcache.site_packages(version, with_flash_attn=with_flash_attn))
        return memo[key]

    return get


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """Point the facts cache and the digests vouch keeps (facts/vouch.py) at fresh folders; wheel
    trees stay in the shared cache, which PATCHOPS_CACHE would move."""
    folder = tmp_path / "facts-cache"
    monkeypatch.setattr(facts_mod, "facts_cache_dir", lambda: folder)
    monkeypatch.setattr(digest_cache, "cache_root", lambda: tmp_path / "digests")
    return folder


# --- flags ------------------------------------------------------------------------------------


def test_063_flags(facts_of):
    facts = facts_of("0.6.3.post1")
    assert facts.version == "0.6.3.post1"
    flags = facts.flags
    assert flags["max_model_len"].name == "max-model-len"
    assert flags["max_model_len"].type == "int"
    assert flags["num_scheduler_steps"].default == 1
    # StoreBoolean with nargs="?" (engine/arg_utils.py 0.6.3): takes "true"/"false"
    assert flags["enable_chunked_prefill"].action == "store_boolean"
    assert flags["enable_chunked_prefill"].nargs == "?"
    assert flags["enforce_eager"].action == "store_true"
    assert flags["disable_custom_all_reduce"].action == "store_true"
    assert flags["tensor_parallel_size"].aliases == ("-tp",)
    assert flags["tensor_parallel_size"].type == "int"
    assert flags["block_size"].choices == (8, 16, 32)
    assert flags["kv_cache_dtype"].choices == ("auto", "fp8", "fp8_e5m2", "fp8_e4m3")
    assert flags["max_seq_len_to_capture"].default == 8192
    assert "config" in flags and "model" in flags
    assert "model_tag" not in flags  # positional
    # the chat/complete subcommands' options in scripts.py are not serve options
    assert "url" not in flags and "system_prompt" not in flags


def test_063_literal_option_count_matches_reference(facts_of):
    # 117 option strings (counted in 0.6.3.post1's source) in engine/arg_utils.py + entrypoints/openai/cli_args.py;
    # --config comes from the serve subparser in scripts.py on top of those.
    facts = facts_of("0.6.3.post1")
    strings = sum(1 + len(f.aliases) for f in facts.flags.values())
    assert strings - 1 == 117


def test_033_literal_option_count_matches_reference(facts_of):
    # 282 option strings (counted in 0.33.0's source) written out in add_argument calls; the FrontendArgs
    # fields (entrypoints/common/cli_args.py, 62 with BaseFrontendArgs') come on top.
    facts = facts_of("0.33.0")
    src = Source(wheelcache.site_packages("0.33.0"))
    classes = Classes(src)
    module = src.module_file("vllm/entrypoints/common/cli_args.py")
    frontend = set(classes.fields(*src.find_class(module, "FrontendArgs")))
    assert len(frontend) == 62
    literal = [f for dest, f in facts.flags.items() if dest not in frontend]
    assert sum(1 + len(f.aliases) for f in literal) == 282
    assert len(facts.flags) == len(literal) + len(frontend)


# Flags that disappeared, by the first shipped version whose EngineArgs lacks them
REMOVED = {
    "use_v2_block_manager": "0.10.0", "enable_reasoning": "0.10.0",
    "num_scheduler_steps": "0.10.1.1", "multi_step_stream_outputs": "0.10.1.1",
    "max_seq_len_to_capture": "0.11.0", "guided_decoding_backend": "0.12.0",
    "cuda_graph_sizes": "0.15.0", "swap_space": "0.20.0", "disable_log_requests": "0.20.0",
}


@pytest.mark.parametrize("dest, gone_in", sorted(REMOVED.items()))
def test_shipped_removed_flags(dest, gone_in):
    for version in ALL_SHIPPED:
        present = dest in facts_for_version(version).flags
        if ALL_SHIPPED.index(version) >= ALL_SHIPPED.index(gone_in):
            assert not present, (dest, version)
    assert dest in facts_for_version(ALL_SHIPPED[ALL_SHIPPED.index(gone_in) - 1]).flags


def test_shipped_short_aliases():
    def shorts(version):
        flags = facts_for_version(version).flags.values()
        return {a for f in flags for a in f.aliases if not a.startswith("--")}

    assert shorts("0.6.3.post1") == {"-tp", "-pp", "-q", "-spec-draft-tp"}
    assert shorts("0.8.5") == {"-O", "-tp", "-pp", "-q", "-dp"}
    assert "-dcp" in shorts("0.10.2") and "-O" in shorts("0.11.0")
    assert {"-cc", "-n", "-r", "-pcp", "-dpe", "-dph"} <= shorts("0.12.0") and "-O" not in shorts("0.12.0")
    assert {"-ep", "-ac"} <= shorts("0.15.0") and "-sc" not in shorts("0.15.0")
    assert "-sc" in shorts("0.20.0")


def test_085_flags_from_config_dataclasses(facts_of):
    flags = facts_of("0.8.5").flags
    assert flags["max_model_len"].type == "human_int"
    assert flags["enable_chunked_prefill"].action == "boolean_optional"
    assert flags["disable_custom_all_reduce"].action == "boolean_optional"
    assert flags["enforce_eager"].action == "store_true"          # BooleanOptional from 0.9.2
    assert flags["block_size"].choices == (1, 8, 16, 32, 64, 128)
    assert flags["compilation_config"].aliases == ("-O",)
    assert flags["compilation_config"].type == "json"
    assert flags["speculative_config"].type == "json"
    assert flags["gpu_memory_utilization"].default == 0.9
    assert flags["swap_space"].type == "float"
    assert "fp8_e5m2" in flags["kv_cache_dtype"].choices
    assert "awq" in flags["quantization"].choices
    assert facts_of("0.8.5").flag("no-enable-chunked-prefill") is flags["enable_chunked_prefill"]


def test_092_to_011_cuda_graph_sizes(facts_of):
    flags = facts_of("0.9.2").flags
    assert flags["cuda_graph_sizes"].nargs == "+"
    assert flags["cuda_graph_sizes"].type == "int"
    assert flags["cuda_graph_sizes"].default == [512]
    assert flags["max_num_batched_tokens"].type == "human_int"
    assert flags["enforce_eager"].action == "boolean_optional"
    assert facts_of("0.11.0").flags["cuda_graph_sizes"].default == []
    assert "max_seq_len_to_capture" not in facts_of("0.11.0").flags


def test_012_capture_flags(facts_of):
    flags = facts_of("0.12.0").flags
    assert flags["cudagraph_capture_sizes"].nargs == "+"
    assert flags["max_cudagraph_capture_size"].type == "int"
    assert flags["cuda_graph_sizes"].deprecated
    assert flags["compilation_config"].aliases == ("-cc",)
    assert 256 in flags["block_size"].choices


def test_033_flags(facts_of):
    facts = facts_of("0.33.0")
    flags = facts.flags
    assert "num_scheduler_steps" not in flags
    assert "cuda_graph_sizes" not in flags
    assert "swap_space" not in flags
    assert flags["max_model_len"].type == "human_int_or_auto"
    assert flags["attention_backend"].type == "str"
    assert flags["tensor_parallel_size"].aliases == ("-tp",)
    assert "--device-memory-utilization" in flags["gpu_memory_utilization"].aliases
    assert flags["gpu_memory_utilization"].default == 0.92
    # `CacheDType | str`: argparse shows the Literal as metavar but accepts any string
    assert flags["kv_cache_dtype"].choices is None
    assert "fp8_e4m3" in flags["kv_cache_dtype"].known_values
    # FrontendArgs (entrypoints/common/cli_args.py), incl. fields inherited from BaseFrontendArgs
    assert flags["port"].default == 8000 and flags["port"].type == "int"
    assert flags["chat_template"].type == "str"
    assert flags["enable_auto_tool_choice"].action == "boolean_optional"
    assert flags["middleware"].action == "append"          # _customize_cli_kwargs edits
    assert flags["allowed_origins"].type == "json" and flags["allowed_origins"].nargs is None
    assert 300 <= len(flags) <= 340


def test_frontend_args_from_010(facts_of):
    flags = facts_of("0.10.0").flags
    assert flags["host"].optional and flags["host"].type == "str"
    assert flags["uvicorn_log_level"].choices == ("critical", "debug", "error", "info", "trace", "warning")
    assert flags["lora_modules"].action == "LoRAParserAction"


def test_011_deprecated_guided_decoding_loop(facts_of):
    flags = facts_of("0.11.0").flags
    assert flags["guided_decoding_backend"].deprecated
    assert flags["guided_decoding_disable_fallback"].type == "bool"


def test_attention_backend_flag_from_015(facts_of):
    assert "attention_backend" in facts_of("0.15.0").flags
    assert "attention_backend" not in facts_of("0.12.0").flags


# --- other facts ------------------------------------------------------------------------------


@pytest.mark.parametrize("version, plain, chunked", [
    ("0.6.3.post1", ("flash-attn", "rocm-flash-attn", "flashinfer"), ("flash-attn",)),
    ("0.8.5", ("FLASH_ATTN", "ROCM_FLASH", "FLASHINFER", "NO_ATTENTION"), ("FLASH_ATTN", "FLASHINFER")),
    ("0.11.0", (), ()),
])
def test_multistep_backends(facts_of, version, plain, chunked):
    facts = facts_of(version)
    assert facts.multistep_backends == plain
    assert facts.multistep_chunked_backends == chunked


def test_attention_backends(facts_of):
    assert "XFORMERS" in facts_of("0.8.5").attention_backends
    assert "OPENVINO" in facts_of("0.6.3.post1").attention_backends
    assert "XFORMERS" not in facts_of("0.12.0").attention_backends
    assert "FLASH_ATTN" in facts_of("0.12.0").attention_backends
    assert facts_of("0.12.0").attention_env_var
    assert not facts_of("0.33.0").attention_env_var
    assert "FLASH_ATTN" in facts_of("0.33.0").attention_backends


def test_flash_attn_presence(facts_of):
    assert facts_of("0.8.5").has_flash_attn is True
    assert facts_of("0.8.5", with_flash_attn=False).has_flash_attn is False
    assert facts_of("0.6.3.post1").has_flash_attn is True  # vllm_flash_attn_c.abi3.so


def test_flashinfer_presence(tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    assert extract_facts(site).has_flashinfer is False
    extra = tmp_path / "other"
    (extra / "flashinfer").mkdir(parents=True)
    (extra / "flashinfer" / "__init__.py").write_text("")
    assert extract_facts(site, extra_paths=[extra]).has_flashinfer is True
    (site / "flashinfer_python-0.2.5.dist-info").mkdir()
    assert extract_facts(site).has_flashinfer is True


def test_field_defaults(facts_of):
    assert facts_of("0.8.5").field_defaults["max_seq_len_to_capture"] == 8192
    assert facts_of("0.8.5").field_defaults["disable_custom_all_reduce"] is False
    assert facts_of("0.8.5").field_defaults["load_format"] == "auto"   # LoadFormat.AUTO.value
    assert facts_of("0.9.2").field_defaults["cuda_graph_sizes"] == [512]
    assert facts_of("0.9.2").field_defaults["enforce_eager"] is False  # = ModelConfig.enforce_eager
    assert facts_of("0.6.3.post1").field_defaults["enforce_eager"] is None
    assert facts_of("0.6.3.post1").field_defaults["swap_space"] == 4
    assert facts_of("0.33.0").field_defaults["tensor_parallel_size"] == 1
    assert "compilation_config" not in facts_of("0.33.0").field_defaults  # a nested config object


def test_upstream_has_nothing_hardcoded(facts_of):
    for version in ("0.6.3.post1", "0.8.5", "0.33.0"):
        assert facts_of(version).hardcoded == {}
        assert facts_of(version).capture_sizes_default is None


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.33.0"])
def test_vendor_hardcode_is_seen(tmp_path, version):
    site = wheelcache.copy_site_packages(version, tmp_path / "site", with_flash_attn=False)
    vendor_hardcode(site)
    assert extract_facts(site).hardcoded == {"enforce_eager": "True", "disable_custom_all_reduce": "True"}


@pytest.mark.parametrize("version, rel, default", [
    ("0.8.5", "vllm/config.py", "[1, 2]"),
    ("0.11.0", "vllm/config/compilation.py", "field(default_factory=lambda: [1, 2])"),
    ("0.33.0", "vllm/config/compilation.py", "field(default_factory=lambda: [1, 2])"),
])
def test_fork_capture_default(tmp_path, version, rel, default):
    site = wheelcache.copy_site_packages(version, tmp_path / "site", with_flash_attn=False)
    path = site / rel
    text = path.read_text()
    new, n = re.subn(r"(\n    cudagraph_capture_sizes: [^=\n]*)= None", r"\1= " + default, text, count=1)
    assert n == 1
    path.write_text(new)
    assert extract_facts(site).capture_sizes_default == (1, 2)


# --- robustness -------------------------------------------------------------------------------


def test_broken_and_missing_files_do_not_crash(tmp_path):
    site = tmp_path / "site"
    (site / "vllm" / "engine").mkdir(parents=True)
    (site / "vllm" / "engine" / "arg_utils.py").write_text("class EngineArgs(:\n")
    (site / "vllm" / "_version.py").write_text("__version__ = version = '0.9.9'\n")
    facts = extract_facts(site)
    assert facts.version == "0.9.9"
    assert facts.flags == {} and facts.hardcoded == {}
    assert facts.multistep_backends == () and facts.has_flash_attn is False
    assert any("arg_utils.py" in note and "cannot parse" in note for note in facts.notes)


def test_version_from_metadata_when_no_version_file(tmp_path):
    site = tmp_path / "site"
    (site / "vllm").mkdir(parents=True)
    (site / "vllm-0.8.5.dist-info").mkdir()
    (site / "vllm-0.8.5.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.8.5\n\n")
    assert extract_facts(site).version == "0.8.5"


# --- JSON and cache ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.9.2", "0.33.0"])
def test_json_round_trip(facts_of, version):
    facts = facts_of(version)
    again = Facts.from_json(facts.to_json())
    assert again == facts
    assert isinstance(again.flags["tensor_parallel_size"].aliases, tuple)
    assert isinstance(again.attention_backends, tuple)


def test_flag_round_trip_keeps_tuples():
    flag = Flag(name="x", dest="x", choices=(1, 2), aliases=("-x",), known_values=("a",))
    facts = Facts(version="1", origin="t", flags={"x": flag}, capture_sizes_default=(1, 2))
    assert Facts.from_json(facts.to_json()) == facts


def test_cache_hit_does_not_reparse(cache_dir, monkeypatch, facts_of):
    site = wheelcache.site_packages("0.8.5")
    first = facts_for_copy(site)
    assert first == facts_of("0.8.5")
    [entry] = [p for p in cache_dir.glob("*.json") if not p.name.endswith(".facts.json")]
    assert sorted(p.name for p in cache_dir.glob("*.json")) == sorted([entry.name, facts_mod._facts_path(entry).name])

    def boom(*args, **kwargs):
        raise AssertionError("facts read again on a cache hit")

    monkeypatch.setattr(facts_extract, "extract", boom)
    monkeypatch.setattr(vouch, "read_facts", boom)   # a miss vouches first (facts/vouch.py)
    assert facts_for_copy(site) == first


def test_cache_notices_a_changed_source(cache_dir, tmp_path):
    site = wheelcache.copy_site_packages("0.9.2", tmp_path / "site", with_flash_attn=False)
    assert facts_for_copy(site).hardcoded == {}
    vendor_hardcode(site)
    assert facts_for_copy(site).hardcoded == {"enforce_eager": "True", "disable_custom_all_reduce": "True"}


def test_cache_notices_flashinfer_installed(cache_dir, tmp_path):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    assert facts_for_copy(site).has_flashinfer is False
    (site / "flashinfer").mkdir()
    (site / "flashinfer" / "__init__.py").write_text("")
    assert facts_for_copy(site).has_flashinfer is True


# --- shipped facts ----------------------------------------------------------------------------


def test_shipped_versions():
    assert set(ALL_SHIPPED) <= set(shipped_versions())
    assert shipped_versions() == sorted(shipped_versions(), key=lambda v: (releases.release(v), v))


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.8.5", "0.11.0", "0.33.0"])
def test_shipped_equal_fresh_extraction(facts_of, version):
    # fails when the extractor changed without `python scripts/generate_facts.py --all`
    shipped = facts_for_version(version)
    fresh = facts_of(version)
    assert shipped.origin.startswith(f"shipped facts from vllm-{version} wheel (vllm-{version}-")
    assert shipped.has_flashinfer is None  # a property of an install, not of a release
    site = wheelcache.site_packages(version)
    assert shipped == fresh.replace(origin=shipped.origin, has_flashinfer=None, has_ray=None, has_bitblas=None,
                                    transformers=release_day.transformers_of(version, site))


def test_shipped_packs_read_back_to_each_release():
    for version in shipped_versions():
        data = packs.release_dict(version)
        assert data["version"] == version
        assert data["origin"].startswith(f"shipped facts from vllm-{version} wheel (")


def test_a_pack_is_what_the_generator_writes():
    # the same releases give the same bytes: regenerating an unchanged series changes no file
    members = {v: packs.release_dict(v) for v in packs.index()["0.8"]}
    assert packs.pack_bytes(members) == (packs.PACK_DIR / "0.8.json.xz").read_bytes()
    assert packs.release_dict("0.8.4") != packs.release_dict("0.8.5")


def test_shipped_attention_env_var_gone_from_015():
    assert facts_for_version("0.12.0").attention_env_var
    for version in ("0.15.0", "0.20.0", "0.33.0"):
        assert not facts_for_version(version).attention_env_var
    assert "num_scheduler_steps" in facts_for_version("0.10.0").flags
    assert "num_scheduler_steps" not in facts_for_version("0.10.1.1").flags


def test_facts_for_version_exact_keeps_the_shipped_origin():
    for version in ("0.10.0", "0.10.1", "0.10.1.1", "0.10.2"):
        facts = facts_for_version(version)
        assert facts.version == version and facts.asked is None and "standing for" not in facts.origin


# --- import cost ------------------------------------------------------------------------------


def test_import_stays_light():
    code = ("import sys, patchops.lint.facts.model\n"
            "bad = [m for m in ('libcst', 'vllm', 'torch', 'patchops.lint.extract', 'rich') "
            "if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cached_lookup_stays_light(cache_dir):
    site = wheelcache.site_packages("0.8.5")
    facts_for_copy(site)  # warm the cache
    code = ("import sys\nfrom pathlib import Path\nimport patchops.lint.facts.cache as f\n"
            f"f.facts_cache_dir = lambda: Path({str(cache_dir)!r})\n"
            f"f.facts_for_copy(Path({str(site)!r}))\n"
            "bad = [m for m in ('libcst', 'vllm', 'torch', 'patchops.lint.extract') "
            "if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""  # a hit never loads the extractor


def _hardcode_eager_keeping_size_and_mtime(site):
    """Edit arg_utils.py as a fork would, keeping its size and mtime (only ctime moves)."""
    path = site / "vllm" / "engine" / "arg_utils.py"
    before = path.stat()
    text = path.read_text()
    edited = text.replace("enforce_eager=self.enforce_eager,", "enforce_eager=True              ,")
    assert len(edited) == len(text) and edited != text
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_cache_keys_on_content_not_mtime(cache_dir, tmp_path):
    # Vendor images often stamp every file with one mtime: an edit that keeps size and mtime
    # must still be noticed.
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    assert facts_for_copy(site).hardcoded == {}
    _hardcode_eager_keeping_size_and_mtime(site)
    assert facts_for_copy(site).hardcoded == {"enforce_eager": "True"}


# --- the stat stamps of a cache hit ------------------------------------------------------------


def _count_reads(monkeypatch):
    reads = []
    real = facts_mod._fingerprint
    monkeypatch.setattr(facts_mod, "_fingerprint", lambda path: reads.append(path) or real(path))
    return reads


def test_a_hit_on_unchanged_stamps_reads_no_input(cache_dir, tmp_path, monkeypatch):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", -3600.0)  # as if the copy were an hour old
    first = facts_for_copy(site)
    reads = _count_reads(monkeypatch)
    assert facts_for_copy(site) == first
    assert reads == []


def test_racily_clean_inputs_get_no_stamp_and_are_read_again(cache_dir, tmp_path, monkeypatch):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", 3600.0)  # every file written "just now"
    first = facts_for_copy(site)
    reads = _count_reads(monkeypatch)
    assert facts_for_copy(site) == first
    assert site / "vllm" / "engine" / "arg_utils.py" in reads


def test_a_stamped_input_edited_behind_a_kept_size_and_mtime_is_noticed(cache_dir, tmp_path, monkeypatch):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", -3600.0)
    assert facts_for_copy(site).hardcoded == {}
    _hardcode_eager_keeping_size_and_mtime(site)  # only ctime moves
    assert facts_for_copy(site).hardcoded == {"enforce_eager": "True"}


def test_an_input_read_again_unchanged_is_stamped_for_the_next_hit(cache_dir, tmp_path, monkeypatch):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", 3600.0)
    first = facts_for_copy(site)              # racy: nothing stamped
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", -3600.0)
    assert facts_for_copy(site) == first      # read again, unchanged: now stamped
    reads = _count_reads(monkeypatch)
    assert facts_for_copy(site) == first
    assert reads == []


def test_facts_of_another_digest_beside_an_entry_are_never_answered(cache_dir, tmp_path, monkeypatch):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", -3600.0)
    first = facts_for_copy(site)
    [entry] = [p for p in cache_dir.glob("*.json") if not p.name.endswith(".facts.json")]
    stored = json.loads(facts_mod._facts_path(entry).read_text())
    stored["digest"], stored["facts"]["version"] = "0" * 16, "9.9.9"  # say, a crash between the writes
    facts_mod._facts_path(entry).write_text(json.dumps(stored))
    assert facts_for_copy(site) == first and first.version == "0.8.5"


def test_still_answers_reads_the_entry_not_the_facts(cache_dir, tmp_path, monkeypatch):
    site = wheelcache.copy_site_packages("0.8.5", tmp_path / "site", with_flash_attn=False)
    monkeypatch.setattr(facts_mod, "RACY_SECONDS", -3600.0)
    facts_for_copy(site)
    [entry] = [p for p in cache_dir.glob("*.json") if not p.name.endswith(".facts.json")]
    digest = json.loads(entry.read_text())["digest"]
    facts_mod._facts_path(entry).unlink()
    assert facts_mod.still_answers(str(site.resolve()), [], digest)
    assert not facts_mod.still_answers(str(site.resolve()), [], "0" * 16)
    _hardcode_eager_keeping_size_and_mtime(site)
    assert not facts_mod.still_answers(str(site.resolve()), [], digest)


def test_entries_whose_names_clash_are_told_apart_by_folder_and_extra_roots(cache_dir, tmp_path, monkeypatch):
    # The entry's name is a checksum: a clash must cost an extraction, never another copy's facts.
    monkeypatch.setattr(facts_mod, "_cache_path", lambda site, extras: cache_dir / "clash.json")
    old = wheelcache.copy_site_packages("0.8.5", tmp_path / "old", with_flash_attn=False)
    new = wheelcache.copy_site_packages("0.9.2", tmp_path / "new", with_flash_attn=False)
    assert facts_for_copy(old).version == "0.8.5"
    assert facts_for_copy(new).version == "0.9.2"
    extra = tmp_path / "extra"
    (extra / "flashinfer").mkdir(parents=True)
    (extra / "flashinfer" / "__init__.py").write_text("")
    assert facts_for_copy(new).has_flashinfer is False
    assert facts_for_copy(new, [extra]).has_flashinfer is True
    assert facts_for_copy(new).has_flashinfer is False


@pytest.mark.parametrize("text,how", [("vouched", HowRead(ReadKind.VOUCHED)), ("extracted", HowRead(ReadKind.EXTRACTED)),
                                      ("partial: 3 of 25 groups re-read", HowRead(ReadKind.PARTIAL, 3, 25))])
def test_how_facts_were_read_is_stored_as_it_was_said(text, how):
    facts = Facts.from_dict({"version": "0.8.5", "read": text})
    assert facts.read == how and facts.to_dict()["read"] == text and f"({facts.read})" == f"({text})"
