"""The JVM-hosted case on the new TIRx: Java loads tvm_tirx's libraries itself (no Python TVM in the process), with
the lane named by -Daxe4j.tvm.lane and the venv by AXE4J_VENV, then answers a layout global. Prints what it loaded."""

import json
import sys

import jpype

from axe4j import _classpath, _stack

# -Xss: this (the first) thread keeps its stack limit for TVM (axe4j._stack)
jpype.startJVM(f"-Xss{_stack.xss_kib()}k", "-Daxe4j.tvm.lane=tvm_tirx", classpath=_classpath.resolve(None),
               convertStrings=True)
Libraries = jpype.JClass("org.axe4j.tvm.TvmLibraries")
Tvm = jpype.JClass("org.axe4j.tvm.Tvm")
loaded = Libraries.loadCompiler()
jpype.JClass("org.axe4j.tvm.Axe4jGlobals").install()
layout = Tvm.call("axe4j.layout.parse", ["S[(4,8):(8@laneid,1)] + 3"])
print(json.dumps({
    "python_tvm_modules": sorted(m for m in sys.modules if m.startswith("tvm")),
    "loaded": [str(p) for p in loaded.loadedPaths()],
    "type_key": str(layout.typeKey()),
    "text": str(Tvm.call("axe4j.layout.to_text", [layout])),
    "apply": str(Tvm.call("axe4j.layout.apply", [layout, jpype.JLong(9)])),
}))
