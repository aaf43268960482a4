"""Seeded draws of pooling deployments and of the OpenAI server's own flags.

Two draws beside generate.py's eight (kept apart so that module does not grow; they share its
spelling helpers, and their seeds never touch its draws):

`gen/pooling-NNN` (POOLING_SEED) serves embedding, reward, classification and cross-encoder
models (POOLING_MODELS: encoder-only XLM-RoBERTa checkpoints, a Mistral embedder, a Qwen3
causal LM used as an embedder, a Llama reward model, and two chat models served as embedders)
and spells the task as each release's users do: `--task` (0.8.5-0.10), `--runner`/`--convert`
(0.10+), or nothing; mostly the task the checkpoint is for, sometimes the wrong one. Beside it
the settings pooling deployments carry: pooler config (old and new option names), chunked
prefill and prefix caching, lengths against the model's 8194/32768/131072, dtype, batch sizes,
served names.

`gen/frontend-NNN` (FRONTEND_SEED) writes the OpenAI server's flags as deployments do: host and
port, API keys, log levels and request logging, chat templates (a file in the corpus, an inline
template, a missing path), LoRA modules (name=path and JSON, with and without `--enable-lora`),
logprobs, tool parsers with and without auto tool choice, TLS files, root path, and the
multimodal settings (limit per prompt as JSON and as `image=2`, processor kwargs and cache) on
the vision models and, sometimes, on text models.
"""

from __future__ import annotations

import random
from typing import List, Tuple

from conformance.cases import Case
from conformance.generate import _cli_tokens, _config_text, _env_draw, _yaml_value

POOLING_SEED = 20261209
POOLING_COUNT = 50
# model folder -> the tasks it is for (first: the one its card names) and tasks it is not for
POOLING_MODELS = {
    "bge-m3": (("embed",), ("generate", "reward")),
    "bge-reranker-v2-m3": (("score", "classify"), ("embed", "generate")),
    "e5-mistral-7b-instruct": (("embed",), ("generate", "classify")),
    "Qwen3-Embedding-0.6B": (("embed",), ("classify", "reward")),
    "Skywork-Reward-Llama-3.1-8B": (("reward", "classify"), ("embed", "generate")),
    "Qwen2.5-7B-Instruct": (("embed", "generate"), ("score", "reward")),
    "Llama-3.1-8B-Instruct": (("embed", "generate"), ("classify",)),
}
# task -> how a release's users spell it: the `--task` value, and the runner/convert pair
TASK_SPELLINGS = {
    "embed": ("embed", ("pooling", "embed")),
    "score": ("score", ("pooling", "classify")),
    "classify": ("classify", ("pooling", "classify")),
    "reward": ("reward", ("pooling", "reward")),
    "generate": ("generate", ("generate", None)),
}
# bundle name -> (plain alternatives, risky alternatives), as in generate.py's later draws
POOLING_SETTINGS = {
    "pooler": (((("override-pooler-config", '{"pooling_type": "MEAN", "normalize": true}'),),
                (("override-pooler-config", '{"pooling_type": "CLS"}'),),
                (("pooler-config", '{"pooling_type": "LAST", "normalize": true}'),),
                (("pooler-config", '{"pooling_type": "MEAN"}'),)),
               ((("override-pooler-config", '{"pooling_type": "BOGUS"}'),),
                (("pooler-config", '{"pooling_type": "CLS", "dimensions": 256}'),),
                (("override-pooler-config", "MEAN"),))),
    "chunked": (((("enable-chunked-prefill", False),), (("enable-chunked-prefill", True),),
                 (("max-num-batched-tokens", 16384),)),
                ((("enable-chunked-prefill", True), ("max-num-batched-tokens", 512)),
                 (("enable-chunked-prefill", False), ("max-num-batched-tokens", 2048)))),
    "prefix": (((("enable-prefix-caching", False),), (("no-enable-prefix-caching", True),)),
               ((("enable-prefix-caching", True),),)),
    "length": (((("max-model-len", 512),), (("max-model-len", 8192),), (("max-model-len", 4096),)),
               ((("max-model-len", 8194),), (("max-model-len", 16384),),
                (("max-model-len", 32768),), (("max-model-len", 131072),))),
    "dtype": (((("dtype", "auto"),), (("dtype", "float16"),), (("dtype", "bfloat16"),)),
              ((("dtype", "float32"),),)),
    "batch": (((("max-num-seqs", 256),), (("max-num-seqs", 64), ("max-num-batched-tokens", 32768))),
              ((("max-num-seqs", 1024), ("max-num-batched-tokens", 1024)),)),
    "served": (((("served-model-name", "embedder"),), (("served-model-name", ["emb", "default"]),)), ()),
    "misc": (((("enforce-eager", True),), (("gpu-memory-utilization", 0.5),),
              (("trust-remote-code", True),), (("tensor-parallel-size", 2),)),
             ((("enable-lora", True),), (("speculative-config",
                                          '{"method": "ngram", "num_speculative_tokens": 3, '
                                          '"prompt_lookup_max": 3}'),),
              (("quantization", "fp8"),), (("tensor-parallel-size", 3),))),
}
POOLING_ENV = {"VLLM_USE_V1": ("1", "0"), "VLLM_ALLOW_LONG_MAX_MODEL_LEN": ("1",)}
RISK = 0.2


def _task_settings(rng: random.Random, name: str) -> List[Tuple[str, object]]:
    """Draw the task, spelled as `--task`, `--runner`/`--convert`, or left to the default."""
    fits, misfits = POOLING_MODELS[name]
    task = rng.choice(misfits) if rng.random() < RISK else rng.choice(fits)
    old, (runner, convert) = TASK_SPELLINGS[task]
    style = rng.random()
    if style < 0.4:
        return [("task", rng.choice(("embedding", "auto")) if rng.random() < 0.1 else old)]
    if style < 0.8:
        chosen: List[Tuple[str, object]] = [("runner", runner)]
        if convert and rng.random() < 0.6:
            chosen.append(("convert", convert))
        return chosen
    if style < 0.9:
        return [("convert", convert or "none")]
    return []


def _place(rng: random.Random, settings: List[Tuple[str, object]], file_share: float,
           underscore_share: float) -> Tuple[List[str], List[str]]:
    """Put every setting in the `--config` file or on the command line, one coin per case."""
    as_file = rng.random() < file_share
    underscores = as_file and rng.random() < underscore_share
    yaml_lines: List[str] = []
    args: List[str] = []
    for option, value in settings:
        if as_file:
            key = option.replace("-", "_") if underscores else option
            yaml_lines.append(f"{key}: {_yaml_value(value)}")
        else:
            args += _cli_tokens(option, value)
    return yaml_lines, args


def _pooling_case(rng: random.Random, number: int) -> Case:
    name = rng.choice(sorted(POOLING_MODELS))
    settings = _task_settings(rng, name)
    for bundle in rng.sample(sorted(POOLING_SETTINGS), rng.randint(1, 4)):
        fine, risky = POOLING_SETTINGS[bundle]
        settings += rng.choice(risky if risky and rng.random() < RISK else fine)
    yaml_lines, args = _place(rng, settings, 0.6, 0.2)
    return Case(
        id=f"gen/pooling-{number:03d}", model=name, gpu=rng.choice(("a10", "l4", "a100-80g", "h100-80g")),
        gpus=rng.choice((1, 2, 4)), config=_config_text(yaml_lines), args=tuple(args),
        env=tuple(_env_draw(rng, POOLING_ENV, 0.12)), about="seeded pooling deployment",
        origin="generate_more.py")


FRONTEND_SEED = 20261210
FRONTEND_COUNT = 60
FRONTEND_TEXT_MODELS = ("Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct", "Mistral-7B-v0.1", "Qwen3-8B")
FRONTEND_VISION_MODELS = ("Qwen2-VL-7B-Instruct", "Llama-3.2-11B-Vision-Instruct")
TEMPLATE = "{models}/Llama-3.1-8B-Instruct/tool_chat_template.jinja"
FRONTEND_SETTINGS = {
    "listen": (((("host", "0.0.0.0"), ("port", 8000)), (("port", 8080),), (("host", "::"), ("port", 9000))),
               ((("port", "80a"),), (("port", "$PORT"),), (("port", 70000),))),
    "api-key": (((("api-key", "sk-local-123"),),), ((("api-key", ["k1", "k2"]),),)),
    "log-level": (((("uvicorn-log-level", "info"),), (("uvicorn-log-level", "warning"),),
                   (("uvicorn-log-level", "debug"),)),
                  ((("uvicorn-log-level", "trace"),), (("uvicorn-log-level", "WARNING"),),
                   (("uvicorn-log-level", "verbose"),))),
    "requests-log": (((("disable-log-requests", True),), (("enable-log-requests", True),),
                      (("disable-log-stats", True),), (("max-log-len", 100),)),
                     ((("disable-log-requests", True), ("enable-log-requests", True)),)),
    "chat-template": (((("chat-template", TEMPLATE),),
                       (("chat-template", "{% for m in messages %}{{ m.content }}{% endfor %}"),),
                       (("response-role", "assistant"),)),
                      ((("chat-template", "/nonexistent/chat.jinja"),),
                       (("chat-template", "templates/chat.jinja"),), (("response-role", "bot"),))),
    "lora": (((("enable-lora", True), ("lora-modules", "sql={model}")),
              (("enable-lora", True), ("max-lora-rank", 64),
               ("lora-modules", '{"name": "sql", "path": "{model}", "base_model_name": "base"}'))),
             ((("lora-modules", "sql={model}"),), (("enable-lora", True), ("lora-modules", "sql")),
              (("enable-lora", True), ("lora-modules", '{"name": "sql"}')))),
    "logprobs": (((("max-logprobs", 20),), (("return-tokens-as-token-ids", True),),
                  (("enable-prompt-tokens-details", True),)),
                 ((("max-logprobs", 0),), (("max-logprobs", -1),))),
    "tools": (((("enable-auto-tool-choice", True), ("tool-call-parser", "hermes")),
               (("enable-auto-tool-choice", True), ("tool-call-parser", "llama3_json")),
               (("enable-auto-tool-choice", True), ("tool-call-parser", "mistral"))),
              ((("tool-call-parser", "hermes"),), (("enable-auto-tool-choice", True),),
               (("enable-auto-tool-choice", True), ("tool-parser-plugin", "/nonexistent/parser.py"),
                ("tool-call-parser", "my_parser")))),
    "server": (((("root-path", "/llm"),), (("middleware", "my_pkg.middleware.Auth"),),
                (("tokenizer-mode", "auto"),), (("tokenizer-mode", "slow"),)),
               ((("ssl-keyfile", "/nonexistent/key.pem"), ("ssl-certfile", "/nonexistent/cert.pem")),
                (("tokenizer-mode", "mistral"),), (("tokenizer-mode", "fast"),))),
    "media": (((("allowed-local-media-path", "{models}"),),),
              ((("allowed-local-media-path", "/nonexistent/media"),),)),
}
# multimodal bundles: plain on a vision model, risky on a text model
MM_SETTINGS = (
    (("limit-mm-per-prompt", '{"image": 2}'),), (("limit-mm-per-prompt", "image=2"),),
    (("limit-mm-per-prompt", '{"image": 2, "video": 1}'),), (("limit-mm-per-prompt", '{"image": 0}'),),
    (("limit-mm-per-prompt", '{"audio": 1}'),),
    (("mm-processor-kwargs", '{"max_pixels": 1003520}'),),
    (("mm-processor-kwargs", '{"min_pixels": 3136, "max_pixels": 12845056}'),),
    (("disable-mm-preprocessor-cache", True),), (("mm-processor-cache-gb", 0),),
    (("mm-processor-cache-gb", 8),),
)
FRONTEND_ENV = {"VLLM_USE_V1": ("1", "0")}


def _frontend_case(rng: random.Random, number: int) -> Case:
    vision = rng.random() < 0.35
    name = rng.choice(FRONTEND_VISION_MODELS if vision else FRONTEND_TEXT_MODELS)
    settings: List[Tuple[str, object]] = []
    if vision or rng.random() < 0.15:
        for _ in range(rng.randint(1, 2)):
            settings += rng.choice(MM_SETTINGS)
    for bundle in rng.sample(sorted(FRONTEND_SETTINGS), rng.randint(1, 4)):
        fine, risky = FRONTEND_SETTINGS[bundle]
        settings += rng.choice(risky if rng.random() < RISK else fine)
    yaml_lines, args = _place(rng, settings, 0.55, 0.25)
    return Case(
        id=f"gen/frontend-{number:03d}", model=name, gpu=rng.choice(("a10", "l40s", "a100-80g", "h100-80g")),
        gpus=rng.choice((1, 1, 2)), config=_config_text(yaml_lines), args=tuple(args),
        env=tuple(_env_draw(rng, FRONTEND_ENV, 0.1)), about="seeded OpenAI server flags",
        origin="generate_more.py")


def cases() -> List[Case]:
    pooling, frontend = random.Random(POOLING_SEED), random.Random(FRONTEND_SEED)
    return ([_pooling_case(pooling, number) for number in range(1, POOLING_COUNT + 1)]
            + [_frontend_case(frontend, number) for number in range(1, FRONTEND_COUNT + 1)])
