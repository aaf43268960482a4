"""Ask an installed vLLM itself for its configuration-time verdict (`lint --engine`).

Everything here runs vLLM in a subprocess of the interpreter that runs it, never in the
patchops process. `probe.py` runs inside that interpreter: vLLM's own `vllm serve` path,
stopped right after `EngineArgs.create_engine_config()`. On a machine without a GPU,
`stand_in.py` provides what lets vLLM get that far: a stand-in `libcuda.so.1` and the `shim/`
modules that answer a declared GPU profile (every check stays vLLM's). The conformance harness
(tests/conformance/) uses the same pieces to record real vLLM's verdicts.
"""
