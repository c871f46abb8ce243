// The widths of the driver counters in ports/N/hw_counters/, by driver: what the daemon takes as
// a counter's width (where it wraps) and what rdma-sim gives its hw_counters/ files.
//
// The kernel keeps every hw_counters value as a u64 (struct rdma_hw_stats) and prints it with
// %llu, but a driver fills it from whatever its device counts:
//  - mlx5 (drivers/infiniband/hw/mlx5/counters.c): the Q counters are the 32-bit fields of the
//    QUERY_Q_COUNTER command's output (include/linux/mlx5/mlx5_ifc.h,
//    mlx5_ifc_query_q_counter_out_bits: each [0x20]), which mlx5_ib_query_q_counters() and
//    mlx5_ib_query_q_counters_vport() copy with be32_to_cpu(): the file shows the firmware's 32
//    bits, which wrap. The congestion counters (cong_cnts, read by mlx5_lag_query_cong_counters()
//    with be64_to_cpup() at their _high offset), rx_icrc_encapsulated (PPCNT,
//    mlx5_ib_query_ext_ppcnt_counters(): be64_to_cpup()) and the optional op counters (flow
//    counters, mlx5_fc_query(): u64) are 64-bit.
//  - rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c): atomic64_t, read with atomic64_read().
//  - any other driver: not read here; taken as 64-bit.
// Every name is a literal: data() is its NUL-terminated file name.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rdma_eventd::internal {

// mlx5's Q counters of a ConnectX-6, in counters.c's tables' order (basic_q_cnts,
// out_of_seq_q_cnts, retrans_q_cnts, extended_err_cnts, roce_accl_cnts): rdma-sim's mlx5
// hw_counters/ are these and kMlx5WideCounters. A switchdev representor's port shows each with
// the prefix "vport_" (vport_basic_q_cnts, ...), read the same way.
inline constexpr std::array<std::string_view, 24> kMlx5QCounters = {
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
};
// Q counters that current kernels' extended_err_cnts have besides (not in rdma-sim's table).
inline constexpr std::array<std::string_view, 2> kMlx5LaterQCounters = {
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
};
// mlx5's 64-bit hw_counters that rdma-sim has: cong_cnts, then ext_ppcnt_cnts.
inline constexpr std::array<std::string_view, 5> kMlx5WideCounters = {
    "rp_cnp_ignored", "rp_cnp_handled", "np_ecn_marked_roce_packets", "np_cnp_sent",
    "rx_icrc_encapsulated"};
inline constexpr std::string_view kMlx5VportPrefix = "vport_";
inline constexpr uint8_t kMlx5QCounterBits = 32;

// Whether `file` (a file name of mlx5's hw_counters/) is a Q counter: 32 bits that wrap.
constexpr bool is_mlx5_q_counter(std::string_view file) {
  if (file.starts_with(kMlx5VportPrefix)) file.remove_prefix(kMlx5VportPrefix.size());
  for (const std::string_view name : kMlx5QCounters) {
    if (name == file) return true;
  }
  for (const std::string_view name : kMlx5LaterQCounters) {
    if (name == file) return true;
  }
  return false;
}

}  // namespace rdma_eventd::internal
