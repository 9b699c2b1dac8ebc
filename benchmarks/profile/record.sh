#!/usr/bin/env bash
# Profiles a benchmark run with Linux perf: every JVM of it (the harness and the servers JVMs it
# forks), Java, JVM and kernel frames alike. JFR's sampler records threads while they run Java code:
# a churn of 10,000 is mostly syscalls, the JIT compiler and the workers' JVMs (docs/development.md).
#   benchmarks/profile/record.sh OUT_DIR [benchmark options]     e.g. /tmp/prof --quick --only 2
# Then: perf script -i OUT_DIR/perf.data -F comm,tid,time,ip,sym,dso --ns > OUT_DIR/script.txt
#       MAPS=OUT_DIR/maps python3 benchmarks/profile/perf-windows.py OUT_DIR/script.txt \
#           OUT_DIR/timeline.tsv 'rollcall large-. churn' summary
# Needs perf (Debian: linux-perf) and kernel.perf_event_paranoid <= 2. The harness's JIT symbols
# come from `jcmd <pid> Compiler.perfmap` taken every 3 s (code moves: a map written at exit names
# the wrong methods for code compiled, freed and replaced during the run); the servers JVMs' Java
# frames stay unnamed (their threads' names and the kernel's frames are there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${1:?usage: record.sh OUT_DIR [benchmark options]}
shift
mkdir -p "$out/maps"
# ./benchmark builds what changed, raises the descriptor limit and execs the harness's JVM: $! is its pid.
ROLLCALL_BENCH_JAVA_OPTS=-XX:+PreserveFramePointer ./benchmark --logs "$out" "$@" > "$out/out.txt" 2>&1 &
pid=$!
# Attach once it is the JVM: attached while the launcher was still exec'ing (env, bash, java), perf
# recorded nothing.
while kill -0 "$pid" 2> /dev/null && [[ $(readlink "/proc/$pid/exe" || true) != */java ]]; do
  sleep 0.05
done
perf record -F 997 -g -k CLOCK_REALTIME -p "$pid" -o "$out/perf.data" > "$out/perf.log" 2>&1 &
perf_pid=$!
while kill -0 "$pid" 2> /dev/null; do
  sleep 3
  if jcmd "$pid" Compiler.perfmap > /dev/null 2>&1 && [[ -f /tmp/perf-$pid.map ]]; then
    cp "/tmp/perf-$pid.map" "$out/maps/$(date +%s.%N)"
  fi
done
wait "$perf_pid" || true
echo "perf data in $out/perf.data, the run's output in $out/out.txt, its timeline in $out/timeline.tsv"
