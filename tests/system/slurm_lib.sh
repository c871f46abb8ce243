# shellcheck shell=bash
# What the tests with the real Slurm 22.05 of Debian 12 share (slurm_test.sh,
# slurm_window_test.sh): in the network and UTS namespaces the test re-executes itself in
# (loopback, and a veth pair so that Slurm's getaddrinfo finds an address), munged, slurmctld -D
# and slurmd -D on 127.0.0.1 with scratch directories; the daemon on the simulator; the node as
# Slurm has it, read back with scontrol. Sourced, after `set -euo pipefail` and test_lib.sh; the
# test sets scratch first, and writes $scratch/daemon.json before start_daemon.
# shellcheck disable=SC2154  # scratch is the test's

# slurm_enter_namespaces TEST [TOOL...]: exits unless this runs as root with Slurm's tools (and
# the TOOLs given); the first time, runs the test again in network and UTS namespaces of its
# own, where Slurm's ports and the host name are the test's.
slurm_enter_namespaces() {
  require_root_and_tools "$1" namespaces munged mungekey slurmctld slurmd scontrol jq unshare \
    runuser "${@:2}"
  if [ -z "${RDMA_SLURM_TEST_NS:-}" ]; then
    exec unshare --net --uts env RDMA_SLURM_TEST_NS=1 bash "$0"
  fi
}

# The build's programs (test_lib.sh), the follower among them, and the node: the host name in
# the test's UTS namespace, and the one node Slurm has.
build_under_test
# shellcheck disable=SC2034  # the tests run it
follower_bin=$bin/rdma-eventd-slurm
node=rdmanode

munged_pid=
ctld_pid=
slurmd_pid=
daemon_pid=

ctl() { "$bin/rdma-eventctl" --socket "$scratch/events.sock" "$@"; }
sim() { "$bin/rdma-sim" --dir "$scratch/sim" "$@"; }
now_ms() { date +%s%3N; }

# The node as Slurm has it: its State= and its Reason= (without Slurm's [user@time], and without
# the Comment= and Extra= Slurm prints after it).
node_line() { scontrol show node -o "$node" 2>/dev/null; }
node_state() { node_line | grep -o ' State=[^ ]*' | cut -d= -f2; }
node_reason() {
  node_line | sed -n 's/.* Reason=\(.*\) \[[^]]*@[^]]*\]\( Comment=.*\| Extra=.*\)\{0,1\}$/\1/p'
}
reason_is() { [ "$(node_reason)" = "$1" ]; }
drained() { node_state | grep -q DRAIN; }
undrained() { node_line | grep -q ' State=' && ! drained; }
node_idle() { node_line | grep -q ' State=IDLE '; }

# Lines the follower logged (in $scratch/follower) after MARK (a line count taken before).
log_mark() { wc -l <"$scratch/follower"; }
logged_since() { tail -n +"$(($1 + 1))" "$scratch/follower" | grep -qF "$2"; }

# A port down and up again: one down counted by the daemon.
bounce() { sim port down "$1" >/dev/null && sim port up "$1" >/dev/null; }
host_health_is() { [ "$(ctl health --json | jq -r .health.host)" = "$1" ]; }

# slurm_start_cluster [SLURM.CONF LINES...]: the namespaces' network and host name, munged,
# slurm.conf (with the lines given), slurmctld and slurmd; returns once the node is idle.
slurm_start_cluster() {
  ip link set lo up
  hostname "$node"
  ip link add rdmaslurm0 type veth peer name rdmaslurm1
  ip addr add 192.0.2.1/24 dev rdmaslurm0
  ip link set rdmaslurm0 up
  ip link set rdmaslurm1 up
  mkdir -p "$scratch/munge" "$scratch/state" "$scratch/spool" "$scratch/daemon-state"
  chmod 711 "$scratch/munge"
  mungekey -c -k "$scratch/munge/munge.key"
  chown -R munge:munge "$scratch/munge"
  runuser -u munge -- munged -F -S "$scratch/munge/sock" --key-file="$scratch/munge/munge.key" \
    --log-file="$scratch/munge/log" --pid-file="$scratch/munge/pid" \
    --seed-file="$scratch/munge/seed" >"$scratch/munged.out" 2>&1 &
  munged_pid=$!
  wait_for 10 "munged socket" test -S "$scratch/munge/sock"
  {
    cat <<EOF2
ClusterName=rdmatest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$scratch/munge/sock
CredType=cred/munge
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd.pid
SlurmctldLogFile=$scratch/slurmctld.log
SlurmdLogFile=$scratch/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SlurmdTimeout=60
EOF2
    printf '%s\n' "$@"
    cat <<EOF2
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF2
  } >"$scratch/slurm.conf"
  export SLURM_CONF=$scratch/slurm.conf
  start_slurmctld
  slurmd -D -N "$node" -f "$SLURM_CONF" >"$scratch/slurmd.out" 2>&1 &
  slurmd_pid=$!
  wait_for 30 "node $node idle in Slurm" node_idle
}

start_slurmctld() {
  slurmctld -D -f "$SLURM_CONF" >>"$scratch/slurmctld.out" 2>&1 &
  ctld_pid=$!
}

# The daemon on the simulator, with $scratch/daemon.json, its state in $scratch/daemon-state.
start_daemon() {
  env STATE_DIRECTORY="$scratch/daemon-state" "$bin/rdma-sim" --dir "$scratch/sim" run -- \
    "$bin/rdma-eventd" -f --no-journal -c "$scratch/daemon.json" \
    --socket "$scratch/events.sock" >>"$scratch/daemon" 2>&1 &
  daemon_pid=$!
  wait_for 30 "daemon answering" ctl status --json
}

# slurm_diagnostics LOG...: the node as Slurm has it, and the end of each of the test's logs
# (files in $scratch).
slurm_diagnostics() {
  local log
  echo "--- node"
  scontrol show node -o "$node" 2>&1 || true
  for log in "$@"; do
    echo "--- $log"
    tail -n 25 "$scratch/$log" 2>/dev/null || true
  done
}

# The EXIT trap: the test's follower ($follower_pid, if any), what slurm_start_cluster and
# start_daemon started, the simulator, the scratch directory.
slurm_cleanup() {
  set +e
  stop_pid "${follower_pid:-}"
  slurm_stop_all
  rm -rf "$scratch"
}

# Stops what slurm_start_cluster and start_daemon started, and the simulator.
slurm_stop_all() {
  stop_pid "$daemon_pid"
  sim stop >/dev/null 2>&1
  stop_pid "$slurmd_pid"
  stop_pid "$ctld_pid"
  stop_pid "$munged_pid"
}
