#!/usr/bin/env bash
# Measures what docs/simulator.md reports: what a query costs, how fast `rdma-sim storm` injects events, and how fast
# a bare consumer (ibv_get_async_event + ibv_ack_async_event per event) reads them through the
# stand-in while the simulator refills its pipe, next to the same 16-byte read loop on a plain
# pipe (the machine's ceiling for such a consumer).
#
#   tests/sim/storm_bench.sh [BUILD_DIR] [COUNT]      (defaults: build, 1000000)
set -euo pipefail
build=${1:-build}
count=${2:-1000000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sim="$build/bin/rdma-sim"
dir=$(mktemp -d "${TMPDIR:-/dev/shm}/rdma-sim-bench-XXXXXX")
trap '"$sim" --dir "$dir/fabric" stop >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

"$sim" start -t "$here/sim/topologies/sixteen-devices.json" --dir "$dir/fabric" >/dev/null
coproc VS { "$sim" --dir "$dir/fabric" run -- "$build/bin/verbs_shell"; }
# One command to verbs_shell, its answer in $answer (no subshell: they cannot see the coprocess).
ask() {
  echo "$1" >&"${VS[1]}"
  read -r answer <&"${VS[0]}"
}

ask "list"
ask "open L1:mlx5_0"
echo "machine: $(nproc) CPUs, $(uname -r)"
ask "query_cost C1 1 1000000"
echo "ibv_query_port through the stand-in (shared memory, no round trip):"
echo "  $answer"
echo "storm of $count events to one context (mlx5_0/1), nobody reading yet:"
"$sim" --dir "$dir/fabric" storm --count "$count" --targets mlx5_0/1 | sed 's/^/  /'
echo "bare consumer through the stand-in (the simulator refills the pipe from its backlog):"
ask "consume C1 $count"
echo "  $answer"
echo "the same read loop on a plain pipe kept full (no simulator):"
ask "consume_pipe $count"
echo "  $answer"
echo "consumer already waiting, storm and consumer concurrently:"
echo "consume C1 $count" >&"${VS[1]}"
"$sim" --dir "$dir/fabric" storm --count "$count" --targets mlx5_0/1 | sed 's/^/  /'
read -r answer <&"${VS[0]}"
echo "  $answer"
echo "storm of $count events over all 32 ports (one open context, on mlx5_0):"
"$sim" --dir "$dir/fabric" storm --count "$count" | sed 's/^/  /'
echo "exit" >&"${VS[1]}"
wait "$VS_PID" || true
