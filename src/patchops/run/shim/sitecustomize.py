"""Patch torch.cuda and psutil from the GPU profile in every process vLLM starts.

The harness puts this folder first on PYTHONPATH, so processes that vLLM spawns (model
registry inspection, workers) answer the same hardware as the process that runs the case.
"""

import importlib.abc
import os
import sys

if os.environ.get("PATCHOPS_GPU_PROFILE"):

    class _AfterImport(importlib.abc.MetaPathFinder):
        """Run a patch right after a module executes, whoever imports it first."""

        patches = {"torch.cuda": "patch_torch_cuda", "psutil": "patch_psutil"}

        def find_spec(self, name, path=None, target=None):
            if name not in self.patches:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            loader, patch = spec.loader, self.patches[name]

            class Loader(importlib.abc.Loader):
                def create_module(self, spec):
                    return loader.create_module(spec)

                def exec_module(self, module):
                    loader.exec_module(module)
                    import patchops_gpu_profile

                    getattr(patchops_gpu_profile, patch)(module)

            spec.loader = Loader()
            return spec

    sys.meta_path.insert(0, _AfterImport())
