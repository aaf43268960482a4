"""Config-time knowledge read from real vLLM trees: registries, config fields, parser, max length."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from patchops.lint.facts.model import Facts, facts_for_version
from patchops.lint.extract.bool_spellings import option_inverses
from patchops.lint.extract.config_fields import nested_config_facts, value_range_facts
from patchops.lint.extract.max_len import max_len_facts
from patchops.lint.extract.guards import front_end_bounds, guard_facts
from patchops.lint.extract.parallel import parallel_facts
from patchops.lint.extract.registries import _registered, quantization_checkpoint_needs, registry_facts
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.static_eval import Classes

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def source_of(vllm_site):
    memo = {}

    def get(version: str) -> Source:
        if version not in memo:
            memo[version] = Source(vllm_site(version))
        return memo[version]

    return get


# --- registries -------------------------------------------------------------------------------


def test_tool_parsers_by_decorator_063(source_of):
    found = registry_facts(source_of("0.6.3.post1"))
    assert found["tool_call_parser"] == ("hermes", "internlm", "llama3_json", "mistral")
    assert "reasoning_parser" not in found  # no reasoning package before 0.7.3


def test_reasoning_parsers_085(source_of):
    assert registry_facts(source_of("0.8.5"))["reasoning_parser"] == ("deepseek_r1", "granite")


def test_lazy_registry_tables_033(source_of):
    found = registry_facts(source_of("0.33.0"))
    # Counted in 0.33.0's parser registries: 58 tool, 42 reasoning parsers.
    assert len(found["tool_call_parser"]) == 58 and "hermes" in found["tool_call_parser"]
    assert len(found["reasoning_parser"]) == 42 and "deepseek_r1" in found["reasoning_parser"]


def test_register_call_forms():
    tree = ast.parse(textwrap.dedent("""
        @ToolParserManager.register_module(["a", "b"])
        class X: ...
        @ToolParserManager.register_module(name="c")
        class Y: ...
        @OtherManager.register_module("not-mine")
        class Z: ...
        _TOOL_PARSERS_TO_REGISTER = {"d": ("f", "C")}
    """))
    assert sorted(_registered(tree, "ToolParserManager")) == ["a", "b", "c", "d"]


# --- nested configs and ranges ----------------------------------------------------------------


@pytest.mark.parametrize("version,spec_extra,comp_extra", [
    ("0.8.5", "reject", "ignore"),      # stdlib dataclass raises; pydantic BaseModel ignores
    ("0.10.1.1", "ignore", "ignore"),   # pydantic dataclasses, default extra="ignore"
    ("0.33.0", "reject", "reject"),     # @config: pydantic dataclass with extra="forbid"
])
def test_nested_config_extra_policy(source_of, version, spec_extra, comp_extra):
    src = source_of(version)
    found = nested_config_facts(src, Classes(src))
    assert found["speculative_config"]["extra"] == spec_extra
    assert found["compilation_config"]["extra"] == comp_extra


def test_compilation_level_removed_by_020():
    assert "level" in facts_for_version("0.15.0").nested_configs["compilation_config"].fields
    assert "level" not in facts_for_version("0.20.0").nested_configs["compilation_config"].fields


def test_speculative_method_literal_grows(source_of):
    src = source_of("0.8.5")
    method = nested_config_facts(src, Classes(src))["speculative_config"]["fields"]["method"]
    assert method["choices"] == ["ngram", "eagle", "medusa", "mlp_speculator", "draft_model"]
    newer = facts_for_version("0.33.0").nested_configs["speculative_config"].fields
    assert "mtp" in newer["method"].choices and newer["num_speculative_tokens"].gt == 0


def test_gpu_memory_utilization_range_by_version(source_of):
    src = source_of("0.8.5")
    old = value_range_facts(src, Classes(src))["gpu_memory_utilization"]
    assert old["le"] == 1.0 and "gt" not in old       # 0.8.5 never checks <= 0
    assert old["message"] == "GPU memory utilization must be less than 1.0. Got {value}."
    new = facts_for_version("0.12.0").value_ranges["gpu_memory_utilization"]
    assert (new["gt"], new["le"], new["how"]) == (0, 1, "pydantic Field")


def test_only_unconditional_guards_on_values_passed_through(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "engine").mkdir()
    (tmp_path / "vllm" / "engine" / "arg_utils.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass EngineArgs:\n    x: float = 1\n    y: float = 1\n"
        "    z: float = 1\n    def create_engine_config(self):\n"
        "        return CacheConfig(x=self.x, y=self.y, z=max(self.z, 1))\n")
    (tmp_path / "vllm" / "config.py").write_text(textwrap.dedent("""
        from dataclasses import dataclass
        @dataclass
        class CacheConfig:
            x: float = 1
            y: float = 1
            z: float = 1
            def _verify_args(self):
                if self.z < 0:
                    raise ValueError("z is not passed on unchanged, so vLLM never sees it")
                if self.x > 2:
                    raise ValueError(f"x is {self.x}")
                if self.enabled:
                    if self.y > 2:
                        raise ValueError("y")
    """))
    src = Source(tmp_path)
    found = value_range_facts(src, Classes(src))
    assert found == {"x": {"class": "CacheConfig", "how": "guard", "le": 2, "message": "x is {value}"}}


# --- parser and max length --------------------------------------------------------------------


def test_enable_disable_pairs_only_in_033(source_of):
    assert option_inverses(source_of("0.33.0")) == {"--enable-": "--disable-", "--disable-": "--enable-"}
    assert facts_for_version("0.30.0").option_inverses == {}


def test_paired_flags_join_the_option_table():
    assert "disable-chunked-prefill" in facts_for_version("0.33.0").option_names()
    assert "disable-chunked-prefill" not in facts_for_version("0.30.0").option_names()


def test_max_len_derivation_moves_in_033(source_of):
    old = max_len_facts(source_of("0.8.5"))
    assert old["keys"][0] == "max_position_embeddings" and "max_target_positions" in old["keys"]
    assert old["unscaled_rope_types"] == ["su", "longrope", "llama3"] and old["yarn_base"]
    new = max_len_facts(source_of("0.33.0"))
    assert "yarn" in new["unscaled_rope_types"] and not new["yarn_base"]
    assert new["tokenizer_max_length"] and not old["tokenizer_max_length"]


def test_knowledge_round_trips_through_json():
    facts = facts_for_version("0.33.0")
    again = Facts.from_json(facts.to_json())
    assert again.registries == facts.registries and again.nested_configs == facts.nested_configs
    assert again.option_inverses == facts.option_inverses and again.max_len == facts.max_len


# --- quantization, executors, front-end and config guards (0.33 conformance) ------------------


def test_quantization_methods_by_version(source_of):
    old = registry_facts(source_of("0.8.5"))
    assert "gguf" in old["quantization"] and "quantization_deprecated" not in old
    new = registry_facts(source_of("0.33.0"))
    assert "gguf" not in new["quantization"] and "bitsandbytes" not in new["quantization"]
    assert new["quantization"][:3] == ("awq", "auto_awq", "fp8")     # QuantizationMethods' order
    assert new["quantization_deprecated"] == ("fbgemm_fp8", "fp_quant")


def test_quantization_checkpoint_needs(source_of):
    for version in ("0.8.5", "0.33.0"):
        needs = quantization_checkpoint_needs(source_of(version))
        assert set(needs["awq"]["files"]) == {"quant_config.json", "quantize_config.json"}
        assert needs["fbgemm_fp8"] == {"class": "FBGEMMFp8Config", "missing": ["ignore_list", "input_scale_ub"]}
        # fp8 reads no file and builds with no arguments; gguf and bitsandbytes are handled by name
        assert "fp8" not in needs and "gguf" not in needs and "bitsandbytes" not in needs


def test_type_checking_else_branch_is_what_runs(source_of):
    # 0.10.x config: `QuantizationMethods = Any` in the else branch of `if TYPE_CHECKING:`.
    assert facts_for_version("0.10.1.1").flags["quantization"].choices is None
    assert "bogus" not in (facts_for_version("0.8.5").flags["quantization"].choices or ())
    assert "awq" in facts_for_version("0.8.5").flags["quantization"].choices   # 0.8.5: argparse lists them


def test_headless_api_server_bound_by_version(source_of):
    assert front_end_bounds(source_of("0.8.5")) == {}
    old = front_end_bounds(source_of("0.10.1.1"))["api_server_count"]
    assert (old["le"], old["when"]) == (1, "headless")
    new = front_end_bounds(source_of("0.33.0"))["api_server_count"]
    assert (new["le"], new["when"]) == (0, "headless")
    assert new["message"].startswith("--api-server-count={value} cannot be used with --headless")


def test_resolved_and_relative_bounds_only_in_033(source_of):
    old_src, new_src = source_of("0.10.1.1"), source_of("0.33.0")
    old = value_range_facts(old_src, Classes(old_src))
    new = value_range_facts(new_src, Classes(new_src))
    assert "after" not in old.get("max_model_len", {}) and "le_field" not in old.get("long_prefill_token_threshold", {})
    assert new["max_model_len"]["ge"] == -1 and new["max_model_len"]["after"]["ge"] == 1
    assert new["max_model_len"]["after"]["message"].startswith("max_model_len must be a positive integer, got {type}: {value}")
    assert new["long_prefill_token_threshold"]["le_field"] == "max_model_len"
    assert "gpu_memory_utilization" in old and "after" not in old["gpu_memory_utilization"]  # a plain guard stays one


def test_enum_names_and_nested_classes_of_the_compilation_config(source_of):
    for version, extra in (("0.10.1.1", "ignore"), ("0.33.0", "reject")):
        src = source_of(version)
        fields = nested_config_facts(src, Classes(src))["compilation_config"]["fields"]
        assert fields["cudagraph_mode"]["names"] == ["NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY",
                                                     "FULL_AND_PIECEWISE"]
        nested = fields["pass_config"]["nested"]
        assert nested["class"] == "PassConfig" and nested["extra"] == extra
    assert "enable_sequence_parallelism" in nested_config_facts(
        source_of("0.10.1.1"), Classes(source_of("0.10.1.1")))["compilation_config"]["fields"]["pass_config"]["nested"]["fields"]
    src = source_of("0.8.5")
    old = nested_config_facts(src, Classes(src))
    assert "cudagraph_mode" not in old["compilation_config"]["fields"]
    assert not any("nested" in f for spec in old.values() for f in spec["fields"].values())  # not validated


def test_executor_import_paths_and_guards_by_version(source_of):
    assert not parallel_facts(source_of("0.10.1.1")).get("executor_by_qualname")
    assert parallel_facts(source_of("0.12.0"))["executor_by_qualname"] is True
    assert guard_facts(source_of("0.8.5"))["chat_template_must_exist"] == "always"
    new = guard_facts(source_of("0.33.0"))
    assert new["chat_template_must_exist"] == "builtin" and new["float_kv_cache_matches_dtype"] == "always"
    assert "float_kv_cache_matches_dtype" not in guard_facts(source_of("0.30.0"))



@pytest.mark.parametrize("version,expected", [
    ("0.10.1.1", {"draft_model_unsupported": "always"}),
    ("0.11.0", {"draft_method_unsupported": "always"}),
    ("0.14.1", {"draft_method_unsupported": "always"}),
    ("0.15.0", {}),
])
def test_draft_model_refusals_until_0_15(source_of, version, expected):
    found = guard_facts(source_of(version))
    names = ("draft_model_unsupported", "draft_method_unsupported")
    assert {k: v for k, v in found.items() if k in names} == expected

# --- swap space and what a plain install brings -----------------------------------------------


@pytest.mark.parametrize("version", ["0.6.3.post1", "0.8.5", "0.10.1.1", "0.15.0"])
def test_swap_space_limits_read_from_the_guard(source_of, version):
    from patchops.lint.extract.guards import swap_space_limits

    assert swap_space_limits(source_of(version)) == {
        "refuse_above": 0.7, "warn_above": 0.4, "per_node": "tensor_parallel_size"}


def test_no_swap_space_guard_once_the_flag_is_gone(source_of):
    from patchops.lint.extract.guards import swap_space_limits

    assert swap_space_limits(source_of("0.20.0")) == {}


def test_swap_space_limits_follow_an_edited_guard(tmp_path):
    from patchops.lint.extract.guards import swap_space_limits

    (tmp_path / "vllm" / "config").mkdir(parents=True)
    (tmp_path / "vllm" / "config" / "cache.py").write_text(textwrap.dedent('''
        class CacheConfig:
            def verify_with_parallel_config(self, parallel_config):
                num_gpus_per_node = parallel_config.world_size
                cpu_memory_usage = self.swap_space_bytes * num_gpus_per_node
                if cpu_memory_usage > 0.9 * total_cpu_memory:
                    raise ValueError("Too large swap space. " + msg)
    '''))
    assert swap_space_limits(Source(tmp_path)) == {"refuse_above": 0.9, "per_node": "world_size"}


def test_required_dists_say_whether_a_plain_install_has_flashinfer(source_of):
    from patchops.lint.extract.requirements import required_dists

    old, new = required_dists(source_of("0.10.1.1")), required_dists(source_of("0.12.0"))
    assert "torch" in old and "flashinfer-python" not in old
    assert "flashinfer-python" in new
    assert not any(name.startswith("tensorizer") for name in new)   # extras stay out


def test_required_dists_skip_extras_and_stop_at_the_body(tmp_path):
    from patchops.lint.extract.requirements import required_dists

    info = tmp_path / "vllm-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: vllm\nRequires-Dist: Flashinfer_Python==0.2 ; platform_machine == 'x86_64'\n"
        "Requires-Dist: ray[cgraph]>=2.4; extra == 'ray'\nRequires-Dist: torch (==2.6)\n\n"
        "Requires-Dist: not-a-header\n")
    assert required_dists(Source(tmp_path)) == ("flashinfer-python", "torch")


@pytest.mark.parametrize("version, expected", [
    ("0.7.3", {"partial_prefills_need_chunked": "always", "pooling_without_chunked_prefill": "always"}),
    ("0.8.5", {"partial_prefills_need_chunked": "always", "pooling_without_chunked_prefill": "v0",
               "prefix_hash_sha256_v0": "v0"}),
    ("0.10.1.1", {"partial_prefills_need_chunked": "always", "pooling_without_chunked_prefill": "v0",
                  "prefix_hash_sha256_v0": "v0"}),
    ("0.10.2", {"partial_prefills_need_chunked": "always"}),
    ("0.30.0", {}),
])
def test_scheduler_and_v0_default_guards(source_of, version, expected):
    from patchops.lint.extract.guards import guard_facts

    found = guard_facts(source_of(version))
    names = ("partial_prefills_need_chunked", "pooling_without_chunked_prefill", "prefix_hash_sha256_v0")
    assert {k: v for k, v in found.items() if k in names} == expected


def test_a_union_of_literals_makes_some_choices_a_coin_toss():
    """0.8.5 get_kwargs takes one Literal of Union[V0, V1] in hash order (get_type on a set)."""
    flag = facts_for_version("0.8.5").flags["guided_decoding_backend"]
    assert flag.chance_choices == ("lm-format-enforcer", "outlines")
    assert set(flag.choices) == {"auto", "guidance", "lm-format-enforcer", "outlines", "xgrammar"}
    assert facts_for_version("0.10.1.1").flags["guided_decoding_backend"].chance_choices is None


@pytest.mark.parametrize("version, refused", [("0.7.3", "any"), ("0.8.5", "token"),
                                              ("0.10.1.1", "token"), ("0.33.0", None)])
def test_model_option_guard_read_from_the_copy(source_of, version, refused):
    from patchops.lint.extract.guards import model_option_guard

    assert model_option_guard(source_of(version)) == refused


# --- async scheduling's speculative methods ----------------------------------------------------


def test_async_speculative_methods_grow_by_release_and_leave_with_the_guard(source_of):
    from patchops.lint.extract.guards import async_speculative_methods

    def read(version):
        return async_speculative_methods(source_of(version), Classes(source_of(version)))

    old, new = read("0.12.0"), read("0.32.0")
    assert {"eagle", "eagle3", "mtp"} <= set(old["allowed"]) and "draft_model" not in old["allowed"]
    assert {"draft_model", "ngram_gpu", "dspark", "dflash"} <= set(new["allowed"])
    assert "ngram" not in new["allowed"] and "suffix" not in new["allowed"]
    assert new["message"].startswith("Currently, async scheduling is only supported with EAGLE/MTP/Draft Model")
    assert read("0.11.0") == {} and read("0.33.0") == {}


def test_async_speculative_methods_drop_a_term_that_does_not_resolve(tmp_path):
    from patchops.lint.extract.guards import async_speculative_methods

    def facts_of(condition):
        (tmp_path / "vllm" / "config").mkdir(parents=True, exist_ok=True)
        (tmp_path / "vllm" / "config" / "vllm.py").write_text(textwrap.dedent(f'''
            class VllmConfig:
                def __post_init__(self):
                    if self.scheduler_config.async_scheduling:
                        if self.speculative_config is not None:
                            if {condition}:
                                raise ValueError("Currently, async scheduling is only supported with X")
        '''))
        src = Source(tmp_path)
        return async_speculative_methods(src, Classes(src))

    assert facts_of('self.speculative_config.method not in ("eagle", "x") and '
                    'self.speculative_config.method != "draft_model"') == {
        "allowed": ["draft_model", "eagle", "x"], "message": "Currently, async scheduling is only supported with X"}
    assert facts_of('self.speculative_config.method not in get_args(Unknown)') == {}
    assert facts_of('self.speculative_config.method != "eagle" and self.other') == {}


def test_an_enum_typed_config_field_gives_its_values_as_choices(source_of):
    new = value_range_facts(source_of("0.12.0"), Classes(source_of("0.12.0")))
    assert new["optimization_level"] == {"class": "VllmConfig", "how": "enum field", "choices": [0, 1, 2, 3]}
    assert "optimization_level" not in value_range_facts(source_of("0.10.1.1"), Classes(source_of("0.10.1.1")))
