"""Kernels by name: pregenerate (no GPU needed), get_kernel and launch, warmup."""
import ctypes
import threading

from . import _capi
from .problem import parameters_json


def families():
    """Every family: [{name, parameter_set, summary, arguments, parameters: [...]}]."""
    return _capi.json_out(_capi.lib().bandjit_families_json)


def pregenerate(family, parameters, arch=None, cache_dir=None):
    """Makes sure the disk cache holds the kernel of `family` for `parameters` (a Problem, a
    dict or JSON text) and `arch` ("sm_90"; default the current GPU's). Returns True when
    NVRTC compiled it now, False when it was cached."""
    compiled = ctypes.c_int(0)
    _capi.check(_capi.lib().bandjit_pregenerate(_capi.text(family), _capi.text(parameters_json(parameters)),
                                                _capi.text(arch), _capi.text(cache_dir), ctypes.byref(compiled)))
    return bool(compiled.value)


class Kernel:
    """A kernel loaded in the current CUDA context (get_kernel). launch() takes device
    addresses (ints) in the order of info()["arguments"]."""

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)  # owned from here: __del__ frees it even if info fails
        self._info = _capi.json_out(_capi.lib().bandjit_kernel_info_json, self._handle)
        self.arguments = self._info["arguments"]

    def info(self):
        return dict(self._info)

    def launch(self, pointers, stream=0, batch=0):
        """Launches on `stream` (a CUstream/cudaStream_t as an int; 0 = default stream).
        batch: 0 = the problem's own; another only for band problems with runtime_batch."""
        array = (ctypes.c_uint64 * len(pointers))(*pointers)
        _capi.check(_capi.lib().bandjit_kernel_launch(self._handle, ctypes.c_void_p(stream or None), array,
                                                      len(pointers), batch))

    def __del__(self):
        # At interpreter shutdown the module globals may already be gone: the process frees all.
        try:
            if self._handle and _capi._lib is not None:
                _capi._lib.bandjit_kernel_free(self._handle)
                self._handle = None
        except (AttributeError, TypeError):
            pass


_kernels = {}
_kernels_lock = threading.Lock()


def get_kernel(family, parameters, cache_dir=None):
    """The kernel of `family` for `parameters` on the current CUDA context's device: from
    this process's table, else memory → disk cache → NVRTC. Needs a GPU."""
    key = (family, parameters_json(parameters), cache_dir, _current_context())
    with _kernels_lock:
        kernel = _kernels.get(key)
    if kernel is None:
        handle = ctypes.c_void_p()
        _capi.check(_capi.lib().bandjit_get_kernel(_capi.text(family), _capi.text(key[1]), _capi.text(cache_dir),
                                                   ctypes.byref(handle)))
        kernel = Kernel(handle.value)
        with _kernels_lock:
            kernel = _kernels.setdefault(key, kernel)
    return kernel


def _current_context():
    # Kernels belong to a context; torch keeps one primary context per device.
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.current_device()
    except ImportError:
        pass
    return None


def warmup(kernels, cache_dir=None):
    """Loads every (family, parameters) of `kernels` into this process; returns the infos
    (origin: memory, disk, redis, compiled; seconds)."""
    return [get_kernel(family, params, cache_dir).info() for family, params in kernels]


def cache_summary(cache_dir=None):
    """The disk cache: {dir, entries, bytes, max_bytes, ...}."""
    return _capi.json_out(_capi.lib().bandjit_cache_summary_json, _capi.text(cache_dir))
