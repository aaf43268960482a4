"""Config-class checks read as programs (guard_programs) and run three-valued (vllm/config_checks).

Each construct the reader understands is tested on a small tree both ways: the guard fires
when the config makes its condition certain, and stays silent when a value is unknown.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, Optional

from patchops.lint.facts.model import Facts
from patchops.lint.extract.engine_facts import engine_args_defaults
from patchops.lint.extract.guard_programs import checked_classes
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.static_eval import Classes
from patchops.lint.input.loaders import load_text
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.vllm import config_checks

from handmade import as_read


def _tree(tmp_path: Path, engine: str, config: str, envs: str = "environment_variables = {}\n") -> Path:
    (tmp_path / "vllm" / "engine").mkdir(parents=True)
    (tmp_path / "vllm" / "engine" / "arg_utils.py").write_text(textwrap.dedent(engine))
    (tmp_path / "vllm" / "config.py").write_text(textwrap.dedent(config))
    (tmp_path / "vllm" / "envs.py").write_text(textwrap.dedent(envs))
    return tmp_path


def _refusals(site: Path, args: str, env: str = "", model: Optional[Dict] = None,
              defaults: Optional[Dict] = None, hardware: str = ""):
    src = Source(site)
    classes = Classes(src)
    facts = Facts(version="0.33.0", origin="test", config_checks=checked_classes(src, classes),
                  field_defaults=dict(engine_args_defaults(src, classes), **(defaults or {})))
    cfg = load_text(f"model: m\nargs:\n{textwrap.indent(args, '  ')}" + (f"env:\n{textwrap.indent(env, '  ')}" if env else "")
                    + (f"hardware: {hardware}\n" if hardware else ""), kind="spec")
    cfg = as_read(cfg, model_facts_from_dict(model) if model is not None else None)
    return [(r.config_class, r.message) for r in config_checks.refusals(cfg, facts)]


PARALLEL_ENGINE = """
    from dataclasses import dataclass
    @dataclass
    class EngineArgs:
        distributed_executor_backend: str = None
        ray_workers_use_nsight: bool = False
        tensor_parallel_size: int = 1
        def create_engine_config(self):
            return ParallelConfig(distributed_executor_backend=self.distributed_executor_backend,
                                  ray_workers_use_nsight=self.ray_workers_use_nsight,
                                  tensor_parallel_size=self.tensor_parallel_size)
"""
PARALLEL_CONFIG = """
    from dataclasses import dataclass
    @dataclass
    class ParallelConfig:
        distributed_executor_backend: str = None
        ray_workers_use_nsight: bool = False
        tensor_parallel_size: int = 1
        def __post_init__(self):
            ray_only_devices: list = []
            if current_platform.device_type in ray_only_devices:
                self.distributed_executor_backend = "ray"
            if self.distributed_executor_backend is None and self.tensor_parallel_size == 1:
                self.distributed_executor_backend = "uni"
            if self.ray_workers_use_nsight and not self.use_ray:
                raise ValueError("Unable to use nsight profiling unless workers run with Ray.")
        @property
        def use_ray(self) -> bool:
            return self.distributed_executor_backend == "ray" or (
                isinstance(self.distributed_executor_backend, type)
                and self.distributed_executor_backend.uses_ray)
"""
NSIGHT = ("ParallelConfig", "Unable to use nsight profiling unless workers run with Ray.")


def test_a_property_is_read_as_its_expression_and_isinstance_of_a_value_against_type_is_false(tmp_path):
    site = _tree(tmp_path, PARALLEL_ENGINE, PARALLEL_CONFIG)
    assert _refusals(site, "ray-workers-use-nsight: true\n") == [NSIGHT]       # "uni" is not Ray
    assert _refusals(site, "ray-workers-use-nsight: true\ndistributed-executor-backend: ray\n") == []
    # a backend lint cannot name (tp 2 leaves it None here: `use_ray` is `None == "ray" or ...`)
    assert _refusals(site, "ray-workers-use-nsight: true\ntensor-parallel-size: 2\n") == [NSIGHT]


def test_an_unknown_backend_hides_the_nsight_check(tmp_path):
    config = PARALLEL_CONFIG.replace('self.distributed_executor_backend = "uni"',
                                     'self.distributed_executor_backend = pick_backend()')
    site = _tree(tmp_path, PARALLEL_ENGINE, config)
    assert _refusals(site, "ray-workers-use-nsight: true\n") == []


def test_nothing_is_in_an_empty_list_even_an_unknown_value(tmp_path):
    # `current_platform.device_type in []` is certainly False: the Ray-only branch never runs
    site = _tree(tmp_path, PARALLEL_ENGINE, PARALLEL_CONFIG)
    assert _refusals(site, "ray-workers-use-nsight: true\n") == [NSIGHT]
    ray_only = PARALLEL_CONFIG.replace("ray_only_devices: list = []", 'ray_only_devices: list = ["tpu"]')
    site = _tree(tmp_path / "b", PARALLEL_ENGINE, ray_only)
    assert _refusals(site, "ray-workers-use-nsight: true\n") == []       # maybe Ray: unknown


def test_the_executor_vllm_picks_follows_the_stated_hardware_and_a_fresh_process_without_ray(tmp_path):
    config = PARALLEL_CONFIG.replace(
        '            if self.distributed_executor_backend is None and self.tensor_parallel_size == 1:\n',
        '            if self.distributed_executor_backend is None and self.tensor_parallel_size > 1:\n'
        '                backend = "mp"\n'
        '                if current_platform.is_neuron():\n'
        '                    backend = "uni"\n'
        '                elif current_platform.is_cuda() and cuda_device_count_stateless() < self.tensor_parallel_size:\n'
        '                    backend = "ray"\n'
        '                elif ray_is_initialized():\n'
        '                    backend = "ray"\n'
        '                self.distributed_executor_backend = backend\n'
        '            if self.distributed_executor_backend is None and self.tensor_parallel_size == 1:\n')
    site = _tree(tmp_path, PARALLEL_ENGINE, config)
    stated = "ray-workers-use-nsight: true\ntensor-parallel-size: 2\n"
    assert _refusals(site, stated, hardware="{platform: cuda, gpus: 8}") == [NSIGHT]      # "mp"
    assert _refusals(site, stated, hardware="{platform: cuda, gpus: 1}") == []            # Ray across nodes
    assert _refusals(site, stated, hardware="{platform: corex, gpus: 8}") == []           # a vendor's answer
    assert _refusals(site, stated) == []                                                  # no hardware stated


DP_ENGINE = """
    from dataclasses import dataclass
    @dataclass
    class EngineArgs:
        data_parallel_size: int = 1
        data_parallel_size_local: int = None
        data_parallel_rank: int = None
        enable_eplb: bool = False
        def create_engine_config(self):
            model_config = self.create_model_config()
            external_lb = self.data_parallel_rank is not None
            if self.data_parallel_size > 1 and external_lb and not model_config.is_moe:
                raise ValueError("Non-MoE models do not support external data parallel mode.")
            if self.data_parallel_size_local is not None:
                size_local = self.data_parallel_size_local
            else:
                size_local = self.data_parallel_size
            return ParallelConfig(data_parallel_size=self.data_parallel_size,
                                  data_parallel_size_local=size_local, enable_eplb=self.enable_eplb)
        def create_model_config(self) -> ModelConfig:
            return None
"""
DP_CONFIG = """
    from dataclasses import dataclass
    import vllm.envs as envs
    @dataclass
    class ParallelConfig:
        data_parallel_size: int = 1
        data_parallel_size_local: int = 1
        enable_eplb: bool = False
        def __post_init__(self):
            if self.data_parallel_size_local > self.data_parallel_size:
                raise ValueError(f"data_parallel_size_local ({self.data_parallel_size_local}) "
                                 f"must be <= data_parallel_size ({self.data_parallel_size})")
            if self.data_parallel_size == 1:
                self.data_parallel_size = envs.VLLM_DP_SIZE
            if self.enable_eplb and self.data_parallel_size <= 1:
                raise ValueError("EPLB requires DP > 1")
"""
DP_ENVS = """
    import os
    environment_variables = {
        "VLLM_DP_SIZE": lambda: int(os.getenv("VLLM_DP_SIZE", "1")),
    }
"""
DENSE = {"num_attention_heads": 28, "num_key_value_heads": 4}
MOE = dict(DENSE, num_experts=128)
NON_MOE = ("EngineArgs", "Non-MoE models do not support external data parallel mode.")


def test_a_class_starts_from_the_locals_engine_args_computed_before_building_it(tmp_path):
    site = _tree(tmp_path, DP_ENGINE, DP_CONFIG, DP_ENVS)
    assert _refusals(site, "data-parallel-size: 2\ndata-parallel-size-local: 4\n") == [
        ("ParallelConfig", "data_parallel_size_local (4) must be <= data_parallel_size (2)")]
    assert _refusals(site, "data-parallel-size: 4\ndata-parallel-size-local: 2\n") == []


def test_a_build_engine_args_may_not_reach_stays_unjudged(tmp_path):
    engine = DP_ENGINE.replace("size_local = self.data_parallel_size_local",
                               "size_local = self.data_parallel_size_local\n"
                               "                if unknowable():\n"
                               "                    size_local = 1")
    site = _tree(tmp_path, engine, DP_CONFIG, DP_ENVS)
    assert _refusals(site, "data-parallel-size: 2\ndata-parallel-size-local: 4\n") == []


def test_an_unset_environment_variable_is_its_envs_default_unless_vllm_writes_it(tmp_path):
    site = _tree(tmp_path, DP_ENGINE, DP_CONFIG, DP_ENVS)
    assert _refusals(site, "enable-eplb: true\n") == [("ParallelConfig", "EPLB requires DP > 1")]
    assert _refusals(site, "enable-eplb: true\n", env="VLLM_DP_SIZE: '2'\n") == []
    written = textwrap.dedent(DP_ENVS) + 'def set_dp(n):\n    os.environ["VLLM_DP_SIZE"] = str(n)\n'
    site = _tree(tmp_path / "b", DP_ENGINE, DP_CONFIG, written)
    assert _refusals(site, "enable-eplb: true\n") == []            # vLLM may have set it


def test_what_the_model_config_knows_comes_from_config_json(tmp_path):
    site = _tree(tmp_path, DP_ENGINE, DP_CONFIG, DP_ENVS)
    stated = "data-parallel-size: 2\ndata-parallel-rank: 1\n"
    assert _refusals(site, stated, model=DENSE) == [NON_MOE]
    assert _refusals(site, stated, model=MOE) == []
    assert _refusals(site, stated) == []                                  # no config.json: unknown


def test_engine_args_refusing_first_means_the_class_is_never_built(tmp_path):
    # ParallelConfig's own check would fire on the flags alone, but vLLM never gets there
    config = DP_CONFIG.replace("        def __post_init__(self):\n",
                               "        def __post_init__(self):\n"
                               "            if self.data_parallel_size > 1 and self.enable_eplb:\n"
                               "                raise ValueError('eplb with dp')\n")
    site = _tree(tmp_path, DP_ENGINE, config, DP_ENVS)
    stated = "data-parallel-size: 2\ndata-parallel-rank: 1\nenable-eplb: true\n"
    assert _refusals(site, stated, model=DENSE) == [NON_MOE]
    assert _refusals(site, stated, model=MOE) == [("ParallelConfig", "eplb with dp")]


MODEL_ENGINE = """
    from dataclasses import dataclass
    @dataclass
    class EngineArgs:
        seed: int = None
        tensor_parallel_size: int = 1
        decode_context_parallel_size: int = 1
        def create_model_config(self) -> ModelConfig:
            return ModelConfig(seed=self.seed)
        def create_engine_config(self):
            return ParallelConfig(tensor_parallel_size=self.tensor_parallel_size,
                                  decode_context_parallel_size=self.decode_context_parallel_size)
"""
MODEL_CONFIG = """
    from dataclasses import dataclass
    @dataclass
    class ParallelConfig:
        tensor_parallel_size: int = 1
        decode_context_parallel_size: int = 1
        def __post_init__(self):
            if self.tensor_parallel_size % self.decode_context_parallel_size:
                raise ValueError("tp must be divisible by dcp")
    class ModelConfig:
        def __init__(self, seed):
            self.seed = seed
            self.tokenizer = seed or "x"
        def verify_with_parallel_config(self, parallel_config: "ParallelConfig") -> None:
            tp = parallel_config.tensor_parallel_size
            dcp = parallel_config.decode_context_parallel_size
            if dcp > 1 and not self.use_mla:
                kv = self.get_total_num_kv_heads()
                if tp <= kv:
                    raise ValueError(f"tp ({tp}) must be above the {kv} KV heads")
            if parallel_config.tensor_parallel_size > 4:
                assert self.seed is not None, "Seed must be set"
            if self.tokenizer is None:
                raise ValueError("a field another method sets is unknown")
        def get_total_num_kv_heads(self) -> int:
            return self.hf_text_config.num_key_value_heads
"""


def test_model_config_checks_the_parallel_layout_against_config_json(tmp_path):
    site = _tree(tmp_path, MODEL_ENGINE, MODEL_CONFIG)
    stated = "tensor-parallel-size: 4\ndecode-context-parallel-size: 2\n"
    assert _refusals(site, stated, model=DENSE) == [("ModelConfig", "tp (4) must be above the 4 KV heads")]
    assert _refusals(site, "tensor-parallel-size: 8\ndecode-context-parallel-size: 2\nseed: 1\n", model=DENSE) == []
    assert _refusals(site, stated) == []                                  # KV heads unknown
    assert _refusals(site, stated, model={"num_attention_heads": 28}) == []   # no KV key: unknown
    assert _refusals(site, stated, model=dict(DENSE, kv_lora_rank=512)) == []  # maybe MLA


def test_model_config_fields_are_the_flags_passed_unless_another_method_sets_them(tmp_path):
    site = _tree(tmp_path, MODEL_ENGINE, MODEL_CONFIG)
    assert _refusals(site, "tensor-parallel-size: 8\n", model=DENSE, defaults={"seed": None}) == [
        ("ModelConfig", "Seed must be set")]
    assert _refusals(site, "tensor-parallel-size: 8\nseed: 0\n", model=DENSE) == []
    # `self.tokenizer` is set in __init__ from something else: never certain, never fires
    assert all("another method" not in message for _, message in
               _refusals(site, "tensor-parallel-size: 8\nseed: 0\n", model=DENSE))


def test_or_returns_the_deciding_operand(tmp_path):
    engine = """
        from dataclasses import dataclass
        @dataclass
        class EngineArgs:
            data_parallel_rank: int = None
            def create_engine_config(self):
                return ParallelConfig(data_parallel_rank=self.data_parallel_rank or 0)
    """
    config = """
        from dataclasses import dataclass
        @dataclass
        class ParallelConfig:
            data_parallel_rank: int = 0
            def __post_init__(self):
                if self.data_parallel_rank == 0 and self.data_parallel_rank is not False:
                    raise ValueError(f"rank {self.data_parallel_rank!r}")
                if self.data_parallel_rank == 3:
                    raise ValueError(f"high rank {self.data_parallel_rank!r}")
    """
    site = _tree(tmp_path, engine, config)
    assert _refusals(site, "data-parallel-rank: null\n", defaults={"data_parallel_rank": None}) == [
        ("ParallelConfig", "rank 0")]
    assert _refusals(site, "data-parallel-rank: 3\n") == [("ParallelConfig", "high rank 3")]


TRACES_ENGINE = """
    from dataclasses import dataclass
    ALLOWED_MODULES = ["model", "worker", "all"]
    @dataclass
    class EngineArgs:
        collect_detailed_traces: str = None
        def create_engine_config(self):
            modules = []
            if self.collect_detailed_traces is not None:
                modules = self.collect_detailed_traces.split(",")
            for m in modules:
                if m not in ALLOWED_MODULES:
                    raise ValueError(f"Invalid module {m}. Valid modules are {ALLOWED_MODULES}")
            return ObservabilityConfig()
"""


def test_a_loop_of_guards_fires_on_the_item_that_fails_over_a_module_constant(tmp_path):
    site = _tree(tmp_path, TRACES_ENGINE, "")
    assert _refusals(site, "collect-detailed-traces: model,everything\n") == [
        ("EngineArgs", "Invalid module everything. Valid modules are ['model', 'worker', 'all']")]
    assert _refusals(site, "collect-detailed-traces: model,worker\n") == []


def test_a_loop_that_does_more_than_check_is_forgotten(tmp_path):
    engine = TRACES_ENGINE.replace("            for m in modules:\n",
                                   "            for m in modules:\n                note(m)\n")
    site = _tree(tmp_path, engine, "")
    assert _refusals(site, "collect-detailed-traces: everything\n") == []
    unknown_list = TRACES_ENGINE.replace('ALLOWED_MODULES = ["model", "worker", "all"]',
                                         "ALLOWED_MODULES = allowed_modules()")
    site = _tree(tmp_path / "b", unknown_list, "")
    assert _refusals(site, "collect-detailed-traces: everything\n") == []


ATTENTION_ENGINE = """
    import copy
    from dataclasses import dataclass
    @dataclass
    class EngineArgs:
        attention_backend: str = None
        attention_config: dict = None
        def __post_init__(self):
            if isinstance(self.attention_config, dict):
                self.attention_config = AttentionConfig(**self.attention_config)
        def create_engine_config(self):
            attention_config = copy.deepcopy(self.attention_config)
            if self.attention_backend is not None:
                if attention_config.backend is not None:
                    raise ValueError("attention_backend and attention_config.backend are mutually exclusive")
            return ObservabilityConfig()
"""


def test_a_key_of_a_json_flag_is_read_through_a_copy_and_a_config_built_from_it(tmp_path):
    from patchops.lint.facts.model import Flag

    site = _tree(tmp_path, ATTENTION_ENGINE, "")
    flags = {"attention_config": Flag(name="attention-config", dest="attention_config", type="json")}

    def lint(args):
        src = Source(site)
        classes = Classes(src)
        facts = Facts(version="0.33.0", origin="test", config_checks=checked_classes(src, classes),
                      field_defaults=engine_args_defaults(src, classes), flags=flags)
        cfg = as_read(load_text(f"model: m\nargs:\n{textwrap.indent(args, '  ')}", kind="spec"))
        return [r.message for r in config_checks.refusals(cfg, facts)]

    both = "attention-backend: FLASH_ATTN\nattention-config: '{\"backend\": \"TRITON_ATTN\"}'\n"
    assert lint(both) == ["attention_backend and attention_config.backend are mutually exclusive"]
    assert lint("attention-backend: FLASH_ATTN\nattention-config: '{\"backend\": null}'\n") == []
    # a key the mapping leaves out is the class's default, which lint does not know here
    assert lint("attention-backend: FLASH_ATTN\nattention-config: '{\"flash_attn_version\": 2}'\n") == []


CONTENTS_ENGINE = """
    from dataclasses import dataclass
    @dataclass
    class EngineArgs:
        compilation_config: CompilationConfig = None
        max_loras: int = 1
        def create_engine_config(self):
            return LoRAConfig(max_loras=self.max_loras)
"""
CONTENTS_CONFIG = """
    from dataclasses import dataclass
    @dataclass
    class CompilationConfig:
        custom_ops: list = None
        level: int = 0
        def __post_init__(self):
            if self.custom_ops.count("none") > 1:
                raise ValueError("none twice")
            if self.level > 3 and self.custom_ops:
                raise ValueError("level above 3 with custom ops")
    @dataclass
    class LoRAConfig:
        max_loras: int = 1
        def __post_init__(self):
            if len([rank for rank in (8, 16) if rank < self.max_loras]) == 2:
                raise ValueError("above every rank")
"""


def test_what_is_inside_a_json_flag_value_is_left_to_po802_but_read_in_a_class_built_from_flags(tmp_path):
    site = _tree(tmp_path, CONTENTS_ENGINE, CONTENTS_CONFIG)
    # CompilationConfig starts from the JSON as written: `.count` of it is unknown here
    # (nested_values runs it after checking the value's type), a relation of its keys is not
    ops = "compilation-config: '{\"custom_ops\": [\"none\", \"none\"], \"level\": 4}'\n"
    assert _refusals(site, ops) == [("CompilationConfig", "level above 3 with custom ops")]
    assert _refusals(site, "compilation-config: '{\"custom_ops\": [\"none\", \"none\"]}'\n") == []
    # LoRAConfig's keywords are flags argparse typed: a comprehension over them is read
    assert _refusals(site, "max-loras: 32\n") == [("LoRAConfig", "above every rank")]
    assert _refusals(site, "max-loras: 16\n") == []
