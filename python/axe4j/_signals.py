"""Which library owns the process's SIGSEGV handler.

The JVM relies on SIGSEGV for implicit null checks in compiled code. ``libtvm_ffi.so`` installs
a SIGSEGV handler of its own (a backtrace printer) from a static constructor when it is loaded.
If TVM is loaded after the JVM started, that handler replaces the JVM's and the first
NullPointerException in compiled Java code kills the process. Loaded before, the JVM installs
its handler last and passes foreign faults on to TVM's. This module reads the handler back
(``sigaction`` with no new action) and names the shared object its code lies in (``dladdr``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import signal

# glibc's struct sigaction starts with the handler pointer; 256 bytes cover the whole struct
# on every Linux architecture (handler, 128-byte mask, flags, restorer).
_SIGACTION_BYTES = 256


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def segv_handler_owner() -> str | None:
    """Path of the shared object holding the current SIGSEGV handler; None for SIG_DFL/SIG_IGN or off Linux."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name, use_errno=True)
    if not hasattr(libc, "dladdr"):
        return None
    buffer = ctypes.create_string_buffer(_SIGACTION_BYTES)
    if libc.sigaction(int(signal.SIGSEGV), None, buffer) != 0:
        return None
    handler = ctypes.c_void_p.from_buffer(buffer).value
    if not handler or handler == 1:  # SIG_DFL is 0, SIG_IGN is 1
        return None
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if libc.dladdr(ctypes.c_void_p(handler), ctypes.byref(info)) == 0 or not info.dli_fname:
        return None
    return info.dli_fname.decode("utf-8", errors="replace")
