"""The stack the process's first thread has left, and the ``-Xss`` that keeps it.

HotSpot, started on a process's first thread (JPype's ``startJVM`` on the main thread), takes min(``RLIMIT_STACK``,
``-Xss``) as that thread's stack and maps guard pages at its end: with the default ``-Xss`` (1 MiB) everything else on
the thread, TVM's compiler and LLVM included, has 1 MiB instead of the limit (8 MiB by default). ``install()`` passes
``-Xss`` of the limit (``xss_kib``); a JVM started by someone else is measured (``room_kib``) and warned about.
"""

from __future__ import annotations

import resource
import threading

UNLIMITED_KIB = 64 * 1024
"""The ``-Xss`` (KiB) when the stack limit is unlimited."""

SHORT_KIB = 4096
"""Less room than this, and less than the limit, on the main thread after a JVM started elsewhere: a warning."""


def limit_kib() -> int:
    """The process's stack limit in KiB (``UNLIMITED_KIB`` when unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    return UNLIMITED_KIB if soft == resource.RLIM_INFINITY else soft // 1024


def xss_kib() -> int:
    """The ``-Xss`` (KiB) that leaves the first thread its limit: at least HotSpot's 1 MiB default."""
    return max(1024, limit_kib())


def room_kib(maps: str | None = None) -> int | None:
    """KiB from the top of the first thread's stack (``[stack]`` in ``/proc/self/maps``) down to the end of the
    mapping below it (a JVM's guard pages, or the next mapping): how deep that thread can go. None off Linux."""
    if maps is None:
        try:
            with open("/proc/self/maps") as file:
                maps = file.read()
        except OSError:
            return None
    spans = []
    for line in maps.splitlines():
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        spans.append((start, end, fields[-1] if len(fields) > 5 else ""))
    for i, (_, end, name) in enumerate(spans):
        if name == "[stack]" and i > 0:
            return (end - spans[i - 1][1]) // 1024
    return None


def short_stack_warning() -> str | None:
    """What to say when this is the main thread and a JVM left it less than ``SHORT_KIB`` and the limit."""
    if threading.current_thread() is not threading.main_thread():
        return None
    room, limit = room_kib(), limit_kib()
    if room is None or room >= min(SHORT_KIB, limit) - 64:
        return None
    return (f"the JVM running in this process left the main thread {room} KiB of stack (its limit: {limit} KiB); "
            f"TVM's compiler can need more and then dies of SIGSEGV. Start the JVM with -Xss{xss_kib()}k, or let "
            f"axe4j.install() start it")
