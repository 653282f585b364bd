#!/usr/bin/env bash
# JMH benchmark of the layout algebra on the paper's layouts, with short settings
# (2 warm-up and 3 measurement iterations of 1 s, 1 fork), then a table of ns/op.
# Extra arguments go to JMH (e.g. a benchmark regexp: benchmarks/bench-layout.sh 'LayoutBench.apply').
set -euo pipefail
cd "$(dirname "$0")/.."
jar=benchmarks/target/benchmarks.jar
if [ ! -f "$jar" ] || [ -n "$(find axe-layout/src/main benchmarks/src/main benchmarks/pom.xml -newer "$jar" -type f -print -quit)" ]; then
  echo "[bench-layout] building $jar" >&2
  mvn -B --no-transfer-progress -q -DskipTests package -pl benchmarks -am >&2
fi
mkdir -p out
csv=out/bench-layout.csv
log=out/bench-layout.log
echo "[bench-layout] running JMH (about 6 s per benchmark); full log in $log" >&2
java -jar "$jar" -wi 2 -w 1s -i 3 -r 1s -f 1 -tu ns -bm avgt -rf csv -rff "$csv" "$@" > "$log" 2>&1 || {
  echo "[bench-layout] JMH failed; last lines of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
}
echo "layout algebra, JMH average time ($(java -version 2>&1 | head -1 | tr -d '"'), $(nproc) cores)"
awk -F, '
  NR == 1 { next }
  {
    for (i = 1; i <= NF; i++) gsub(/"/, "", $i)
    n = split($1, parts, ".")
    op = parts[n]
    err = ($6 == "NaN") ? "n/a" : sprintf("%.1f", $6)
    printf "%-13s %-16s %12.1f  +- %8s  ns/op\n", op, $8, $5, err
  }
' "$csv" | sort -k1,1 -k2,2 | awk 'BEGIN { printf "%-13s %-16s %12s  %12s\n", "op", "layout", "ns/op", "error (99.9%)" } { print }'
echo "(csv: $csv)"
