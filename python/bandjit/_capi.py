"""ctypes bindings of the C ABI (include/bandjit/bandjit.h) in libbandjit_c.so.

The library is found, in order: $BANDJIT_LIBRARY; libbandjit_c.so next to this package
(an installed wheel); the repository's build/ folder (a source checkout).
"""
import ctypes
import json
import os
import threading
from pathlib import Path

_STATUS_NAMES = {1: "internal", 2: "usage", 3: "invalid_problem", 4: "compile_failed", 5: "driver_failed", 6: "io"}


class BandjitError(RuntimeError):
    """A failed bandjit call. `kind` is the C ABI's status name (invalid_problem, usage,
    compile_failed, driver_failed, io, internal); the message names the field, value and
    allowed range for bad parameters."""

    def __init__(self, status, message):
        self.status = status
        self.kind = _STATUS_NAMES.get(status, str(status))
        super().__init__(message)


def _candidates():
    env = os.environ.get("BANDJIT_LIBRARY")
    if env:
        yield Path(env)
    here = Path(__file__).resolve().parent
    yield here / "libbandjit_c.so"
    yield here.parent.parent / "build" / "libbandjit_c.so"


_lib = None
_lock = threading.Lock()


def lib():
    """The loaded libbandjit_c.so (loaded at first use)."""
    global _lib
    with _lock:
        if _lib is None:
            tried = []
            for path in _candidates():
                tried.append(str(path))
                if path.is_file():
                    _lib = _declare(ctypes.CDLL(str(path)))
                    break
            else:
                raise BandjitError(6, "libbandjit_c.so not found; build it (scripts/build) or set BANDJIT_LIBRARY. "
                                      "Tried: " + ", ".join(tried))
        return _lib


def _declare(l):
    c_char_p, c_int, c_void_p, c_size_t = ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
    l.bandjit_last_error.restype = c_char_p
    l.bandjit_version.restype = c_char_p
    for name, args in {
        "bandjit_validate_problem": [c_char_p],
        "bandjit_validate_parameters": [c_char_p, c_char_p],
        "bandjit_families_json": [ctypes.c_char_p, c_size_t, ctypes.POINTER(c_size_t)],
        "bandjit_pregenerate": [c_char_p, c_char_p, c_char_p, c_char_p, ctypes.POINTER(c_int)],
        "bandjit_get_kernel": [c_char_p, c_char_p, c_char_p, ctypes.POINTER(c_void_p)],
        "bandjit_kernel_launch": [c_void_p, c_void_p, ctypes.POINTER(ctypes.c_uint64), c_size_t, ctypes.c_int64],
        "bandjit_kernel_info_json": [c_void_p, ctypes.c_char_p, c_size_t, ctypes.POINTER(c_size_t)],
        "bandjit_cache_summary_json": [c_char_p, ctypes.c_char_p, c_size_t, ctypes.POINTER(c_size_t)],
    }.items():
        fn = getattr(l, name)
        fn.argtypes = args
        fn.restype = c_int
    l.bandjit_kernel_free.argtypes = [c_void_p]
    l.bandjit_kernel_free.restype = None
    return l


def check(status):
    if status != 0:
        raise BandjitError(status, lib().bandjit_last_error().decode())


def text(s):
    return None if s is None else s.encode()


def json_out(fn, *args):
    """Calls a bandjit_*_json function twice: once for the size, once for the text."""
    needed = ctypes.c_size_t(0)
    status = fn(*args, None, 0, ctypes.byref(needed))
    if status not in (0, 2):
        check(status)
    while True:  # the text may grow between the calls (a cache being written)
        size = needed.value
        buf = ctypes.create_string_buffer(size)
        status = fn(*args, buf, size, ctypes.byref(needed))
        if status != 2 or needed.value <= size:
            check(status)
            return json.loads(buf.value.decode())
