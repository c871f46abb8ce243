# shellcheck shell=bash
# Bounded waits for the kernel tests, in the guest (guest.sh, guest_systemd.sh, sourced from
# $GUEST_DIR) and on the host (simulator_test.sh). Needs bash 5 (EPOCHREALTIME).

# wait_for SECONDS CMD...: until CMD succeeds (polling every 50 ms); 1 after SECONDS.
wait_for() {
  local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
  shift
  until "$@"; do
    [ "${EPOCHREALTIME/./}" -ge $deadline ] && return 1
    sleep 0.05
  done
}

# ends_within SECONDS PID: the background job PID ends within SECONDS, and is reaped; 1 if not
# (it is left running: a command blocked in the kernel cannot be killed).
ends_within() {
  wait_for "$1" eval "! kill -0 $2 2>/dev/null" || return 1
  wait "$2"
}
