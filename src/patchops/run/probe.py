"""Ask one installed vLLM for its configuration-time verdict on each case (runs in its venv).

Run by the harness as `<venv>/bin/python probe.py JOB.json`, never imported by patchops. It
imports vLLM once, then forks one child per case. The child runs vLLM's own CLI path
(`vllm serve ...`, as argv and env of the case) and stops right after
`EngineArgs.create_engine_config()` returns: it reports `ok` with the values vLLM resolved,
or the stage that refused (parse, serve, engine-config) with the exception's type and message.
Each result is one JSON line appended to the job's `results` file.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import re
import select
import signal
import socket
import sys
import time
import traceback



class _State:
    stage = "parse"
    depth = 0
    parse_error = None       # argparse's message, before it exits
    engine_error = None      # an exception that left create_engine_config
    pipe = -1


state = _State()


# --------------------------------------------------------------------------- hooks

def _flexible_parser():
    for module in ("vllm.utils.argparse_utils", "vllm.utils"):
        try:
            found = getattr(importlib.import_module(module), "FlexibleArgumentParser", None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise RuntimeError("no FlexibleArgumentParser in this vLLM")


def install_hooks() -> None:
    """Wrap the parser and create_engine_config so a child knows its stage and stops in time."""
    real_error = argparse.ArgumentParser.error

    def error(self, message):
        if state.parse_error is None:
            state.parse_error = message
        return real_error(self, message)

    argparse.ArgumentParser.error = error

    parser_cls = _flexible_parser()
    real_parse = parser_cls.parse_args

    def parse_args(self, *args, **kwargs):
        state.depth += 1
        try:
            result = real_parse(self, *args, **kwargs)
        finally:
            state.depth -= 1
        if state.depth == 0 and state.stage == "parse":
            state.stage = "serve"
        return result

    parser_cls.parse_args = parse_args

    from vllm.engine import arg_utils

    for cls in (arg_utils.EngineArgs, getattr(arg_utils, "AsyncEngineArgs", None)):
        if cls is not None and "create_engine_config" in cls.__dict__:
            cls.create_engine_config = _stop_after(cls.__dict__["create_engine_config"])

    # Every case binds the API port before building its config; let the OS pick a free one.
    real_bind = socket.socket.bind

    def bind(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            address = (address[0], 0) + tuple(address[2:])
        return real_bind(self, address)

    socket.socket.bind = bind


def _stop_after(real):
    def create_engine_config(self, *args, **kwargs):
        outer = state.stage != "engine-config"
        state.stage = "engine-config"
        try:
            config = real(self, *args, **kwargs)
        except BaseException as exc:
            if outer:
                state.engine_error = exc
            raise
        if not outer:
            return config
        try:
            values = resolved(config)
        except Exception:
            values = {"unreadable": traceback.format_exc(limit=3)}
        _send({"verdict": "ok", "resolved": values})
        os._exit(0)

    return create_engine_config


# --------------------------------------------------------------------------- results

def _get(obj, *names, default=None):
    for name in names:
        if obj is not None and hasattr(obj, name):
            return getattr(obj, name)
    return default


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, set)):
        items = [_plain(v) for v in value]
        return sorted(items) if isinstance(value, set) else items
    if hasattr(value, "name") and hasattr(value, "value"):    # enum members
        return str(value.name)
    if isinstance(value, type):
        return value.__name__
    return str(value)


def resolved(config) -> dict:
    """Return the values a linter reasons about, as vLLM resolved them."""
    import vllm.envs as envs

    model, sched = config.model_config, config.scheduler_config
    cache, par, comp = config.cache_config, config.parallel_config, config.compilation_config
    spec = getattr(config, "speculative_config", None)
    try:
        v1 = bool(envs.VLLM_USE_V1)
    except AttributeError:
        v1 = True          # V1-only releases have no switch
    sizes = _get(comp, "cudagraph_capture_sizes")
    values = {
        "engine": "V1" if v1 else "V0",
        "chunked_prefill": _get(sched, "chunked_prefill_enabled", "enable_chunked_prefill"),
        "max_num_batched_tokens": sched.max_num_batched_tokens,
        "max_num_seqs": sched.max_num_seqs,
        "max_model_len": model.max_model_len,
        "cudagraph_capture_sizes": sorted(sizes) if sizes is not None else None,
        "block_size": cache.block_size,
        "enable_prefix_caching": cache.enable_prefix_caching,
        "enforce_eager": model.enforce_eager,
        "compilation_level": _get(comp, "mode", "level"),
        "cudagraph_mode": _get(comp, "cudagraph_mode"),
        "kv_cache_dtype": cache.cache_dtype,
        "dtype": str(model.dtype).replace("torch.", ""),
        "gpu_memory_utilization": cache.gpu_memory_utilization,
        "tensor_parallel_size": par.tensor_parallel_size,
        "pipeline_parallel_size": par.pipeline_parallel_size,
        "data_parallel_size": _get(par, "data_parallel_size"),
        "world_size": par.world_size,
        "distributed_executor_backend": _get(par, "distributed_executor_backend"),
        "speculative_method": _get(spec, "method"),
        "num_speculative_tokens": _get(spec, "num_speculative_tokens"),
        "num_scheduler_steps": _get(sched, "num_scheduler_steps"),
    }
    return {key: _plain(value) for key, value in values.items()}


def _send(outcome: dict) -> None:
    data = json.dumps(outcome).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(state.pipe, view):]
    os.close(state.pipe)


def _message(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        text = exc.args[0]          # str(KeyError) adds quotes
    return text


def _error(stage: str, kind: str, message: str) -> dict:
    return {"verdict": "error", "stage": stage, "type": kind, "message": message}


# --------------------------------------------------------------------------- one case

def run_case(case: dict, cli_main, log_path: str) -> None:
    """Run `vllm serve` for one case in this (forked) process and report; never returns."""
    os.setpgid(0, 0)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ.update(case["env"])
    os.chdir(case["cwd"])
    sys.argv = ["vllm"] + case["argv"]
    try:
        cli_main()
        outcome = _error(state.stage, "NoEngineConfig",
                         "vllm returned without building an engine config")
    except SystemExit as exc:
        if state.stage == "engine-config" and state.engine_error is not None:
            exc = state.engine_error
            outcome = _error(state.stage, type(exc).__name__, _message(exc))
        elif state.stage == "parse" and state.parse_error is not None:
            outcome = _error("parse", "ArgumentError", state.parse_error)
        else:
            outcome = _error(state.stage, "SystemExit", f"exit code {exc.code}")
    except BaseException as exc:  # the verdict is whatever vLLM raised
        outcome = _error(state.stage, type(exc).__name__, _message(exc))
    sys.stdout.flush()
    sys.stderr.flush()
    _send(outcome)
    os._exit(0)


def fork_case(case: dict, cli_main, log_path: str, timeout: float) -> dict:
    """Fork a child for `case`, wait up to `timeout` seconds, return its outcome."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        state.pipe = write
        try:
            run_case(case, cli_main, log_path)
        finally:
            os._exit(3)
    os.close(write)
    chunks, deadline = [], time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read], [], [], left)[0]:
            _kill_group(pid)
            os.close(read)
            os.waitpid(pid, 0)
            return _error("timeout", "Timeout", f"no verdict within {timeout:.0f} s")
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _kill_group(pid)          # the child's own children (registry inspection, ray) go too
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return _error("crash", "Crash", f"the child died without a verdict (status {status}); "
                      f"see {log_path}")
    return json.loads(b"".join(chunks))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------------------- warm-up

def import_cli():
    """Import vLLM's CLI and the modules its `main()` imports lazily; return main."""
    from vllm.entrypoints.cli import main as cli

    tree = ast.parse(open(cli.__file__).read())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name.startswith("vllm."):
                try:
                    importlib.import_module(name)
                except Exception:
                    pass
    for name in ("vllm.entrypoints.openai.api_server", "vllm.engine.arg_utils"):
        importlib.import_module(name)
    return cli.main


def warm_model_registry(architectures) -> None:
    """Inspect the corpus' model classes once, so forked children reuse the cached answer.

    vLLM inspects a model class in a fresh subprocess (seconds each); its results are cached
    in memory, and forked children inherit that cache.
    """
    from vllm.model_executor.models import ModelRegistry

    for arch in architectures:
        try:
            ModelRegistry._try_inspect_model_cls(arch)
        except Exception:
            pass


def warm_parser_docs() -> None:
    """Cache `inspect.getsource` and fill it once, before forking.

    vLLM builds its argument parser from the docstrings of its config classes, re-parsing
    whole source files with `ast` for every class (seconds per case in 0.8.5). The source does
    not change, so one parse in the parent serves every child.
    """
    import functools
    import inspect

    inspect.getsource = functools.lru_cache(maxsize=None)(inspect.getsource)
    try:
        from vllm.entrypoints.openai.cli_args import make_arg_parser
    except ImportError:
        return
    try:
        make_arg_parser(_flexible_parser()())
    except Exception:
        pass


def main() -> None:
    job = json.load(open(sys.argv[1]))
    cli_main = import_cli()
    install_hooks()
    warm_parser_docs()
    warm_model_registry(job.get("architectures", ()))
    with open(job["results"], "a") as out:
        for case in job["cases"]:
            log_path = os.path.join(job["log_dir"], re.sub(r"[^\w.-]", "_", case["id"]) + ".log")
            started = time.monotonic()
            outcome = fork_case(case, cli_main, log_path, job.get("timeout", 300))
            outcome["seconds"] = round(time.monotonic() - started, 2)
            out.write(json.dumps({"id": case["id"], **outcome}) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
