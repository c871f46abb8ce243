// A port's error counters as the kernel shows them in sysfs (docs/simulator.md, "Port counters"):
// the PMA's PortCounters in ports/N/counters/, at their IBA widths, saturating, and the driver's
// own in ports/N/hw_counters/: mlx5's Q counters 32-bit firmware fields that wrap, the others
// 64-bit. Plain data and arithmetic; the sysfs tree writes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmasim {

// The counters/ group of a device's ports. The kernel creates it only for drivers with
// process_mad (mlx5 yes, rxe no) and picks the table from the PMA's ClassPortInfo: the extended
// one (64-bit data and packet counters, unicast and multicast packets) when it declares
// IB_PMA_CLASS_CAP_EXT_WIDTH, as mlx5 does, else the basic one (32-bit data counters).
enum class PmaCounters : uint8_t { kNone, kBasic, kExtended };
// The hw_counters/ group: the driver's counter names (alloc_hw_port_stats), or none.
enum class HwCounters : uint8_t { kNone, kMlx5, kRxe };

struct CounterSets {
  PmaCounters pma = PmaCounters::kNone;
  HwCounters hw = HwCounters::kNone;
};

enum class CounterGroup : uint8_t { kPma, kHw };

// How reading a counter's file goes wrong, for readers that must cope (`rdma-sim counter fail`):
// the file is gone, empty, not a number, its read fails, or it blocks (a firmware that stopped
// answering).
enum class CounterFault : uint8_t { kNone, kMissing, kEmpty, kGarbage, kUnreadable, kHang };

struct Counter {
  const char* name;  // the sysfs file name (static storage)
  CounterGroup group;
  uint8_t bits;  // 4 ... 64
  uint64_t value = 0;
  CounterFault fault = CounterFault::kNone;
  // Past its maximum it goes on from 0 (mlx5's Q counters: the driver shows the firmware's 32
  // bits), rather than stopping at all ones.
  bool wraps = false;

  uint64_t max() const { return bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1; }
  // Adds n. A counter that saturates stops at all ones (IBA 1.8, 16.1.3.5: "instead of
  // overflowing, they shall stop at all ones"); one that wraps keeps the sum modulo 2^bits.
  // True if the sum did not fit: it stopped at its maximum, or wrapped.
  bool add(uint64_t n) {
    const bool over = n > max() - value;
    if (wraps)
      value = bits >= 64 ? value + n : (value + (n & max())) & max();
    else
      value = over ? max() : value + n;
    return over;
  }
  std::string path() const;  // "counters/symbol_error"
};

// Every counter of one port of a device with these groups, at 0: counters/ first, each group in
// the kernel's order.
std::vector<Counter> make_port_counters(CounterSets sets);

const char* group_dir(CounterGroup group);       // "counters", "hw_counters"
const char* pma_counters_name(PmaCounters set);  // "none", "basic", "extended"
const char* hw_counters_name(HwCounters set);    // "none", "mlx5", "rxe"
bool parse_pma_counters(const std::string& name, PmaCounters* set);
bool parse_hw_counters(const std::string& name, HwCounters* set);

// "ok", "missing", "empty", "garbage", "unreadable", "hang".
const char* fault_name(CounterFault fault);
bool parse_fault(const std::string& name, CounterFault* fault);
inline constexpr const char* kFaultNames = "missing, empty, garbage, unreadable, hang, ok";
// What a counter's file holds while it reads as garbage: what older kernels printed for a device
// without a PMA or whose PMA did not answer (node_exporter #966, 2018); current ones fail the
// read instead.
inline constexpr const char* kGarbageText = "N/A (no PMA)\n";

// The counter `name` names among a port's counters: a file name ("symbol_error"), or a group and
// a file name ("hw_counters/link_downed"), which is needed where both groups have the name.
// nullptr if there is none, with *error saying so and listing the counters `port` ("mlx5_0/1")
// has.
Counter* find_counter(std::vector<Counter>& counters, const std::string& name,
                      const std::string& port, std::string* error);

}  // namespace rdmasim
