"""bandjit from Python: banded (sliding-window, dilated) attention kernels generated for the
exact problem, compiled with NVRTC, cached on disk. A thin layer over the C ABI
(libbandjit_c.so, include/bandjit/bandjit.h) through ctypes; the torch functions are in
bandjit.torch and the Hugging Face Longformer patch in bandjit.hf (both import torch).
"""
from ._capi import BandjitError
from .kernels import Kernel, cache_summary, families, get_kernel, pregenerate, warmup
from .problem import Problem, validate


def version():
    from . import _capi

    return _capi.lib().bandjit_version().decode()


__all__ = ["BandjitError", "Kernel", "Problem", "cache_summary", "families", "get_kernel", "pregenerate",
           "validate", "version", "warmup"]
