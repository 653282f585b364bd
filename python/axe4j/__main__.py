"""``python -m axe4j --version``: the versions in use and where each part came from;
``python -m axe4j java [JVM options] Program.java|MainClass [arguments]``: Java with axe4j's jars (``axe4j.java_launcher``).

Prints axe4j's version (Python package and the Java side's answer), TVM's, the JVM's with its library and where it
was found, and the jar set the JVM started with. It starts the JVM (``axe4j.install()``), so what it prints is
what ``install()`` takes in this environment, not a guess.
"""

from __future__ import annotations

import argparse
import os
import sys

from axe4j import _lane

tvm = _lane.tvm()  # TVM (tvm or tvm_tirx) before the JVM; see axe4j.install

import axe4j  # noqa: E402
from axe4j import _classpath  # noqa: E402


def version_report() -> str:
    info = axe4j.install()
    jars = "\n".join(f"  {os.path.basename(jar)}" for jar in info.classpath)
    return (f"axe4j {axe4j.__version__} (Java side {info.version}) at {os.path.dirname(axe4j.__file__)}\n"
            f"TVM {tvm.__version__} at {os.path.dirname(tvm.__file__)}\n"
            f"Java {info.java_version} at {info.java_home} (libjvm {info.jvm_path}, from {info.jvm_origin})\n"
            f"jars ({_classpath.jar_source()}):\n{jars}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["java"]:
        from axe4j import java_launcher

        try:
            return java_launcher.run(argv[1:])
        except axe4j.SetupError as error:
            print(f"python -m axe4j java: {error}", file=sys.stderr)
            return 2
    parser = argparse.ArgumentParser(prog="python -m axe4j", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="store_true", help="print the versions and the jars in use")
    parser.epilog = "python -m axe4j java [JVM options] Program.java|MainClass [arguments]: runs Java with axe4j's jars"
    arguments = parser.parse_args(argv)
    if not arguments.version:
        parser.print_help()
        return 2
    print(version_report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
