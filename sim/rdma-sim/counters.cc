#include "counters.h"

#include <string_view>

#include "rdma_eventd/internal/hw_counter_widths.h"
#include "rdma_eventd/internal/pma_counter_widths.h"

namespace rdmasim {
namespace {

using rdma_eventd::internal::CounterWidth;
using rdma_eventd::internal::kPortXmitWaitWidth;

// Linux drivers/infiniband/core/sysfs.c: PORT_PMA_ATTR widths, in pma_attrs[] order: the error
// counters (rdma_eventd::internal::kPmaErrorCounterWidths, the daemon's too), then these.
constexpr CounterWidth kPmaBasicData[] = {{"port_xmit_data", 32},
                                          {"port_rcv_data", 32},
                                          {"port_xmit_packets", 32},
                                          {"port_rcv_packets", 32},
                                          kPortXmitWaitWidth};
// pma_attrs_ext[]: PortCountersExtended's 64-bit counters; port_xmit_wait stays 32.
constexpr CounterWidth kPmaExtendedData[] = {
    {"port_xmit_data", 64},       {"port_rcv_data", 64},         {"port_xmit_packets", 64},
    kPortXmitWaitWidth,           {"port_rcv_packets", 64},      {"unicast_rcv_packets", 64},
    {"unicast_xmit_packets", 64}, {"multicast_rcv_packets", 64}, {"multicast_xmit_packets", 64}};

// Linux 6.1 drivers/infiniband/sw/rxe/rxe_hw_counters.c, in its order.
constexpr const char* kRxeHw[] = {"sent_pkts",           "rcvd_pkts",
                                  "duplicate_request",   "out_of_seq_request",
                                  "rcvd_rnr_err",        "send_rnr_err",
                                  "rcvd_seq_err",        "ack_deferred",
                                  "retry_exceeded_err",  "retry_rnr_exceeded_err",
                                  "completer_retry_err", "send_err",
                                  "link_downed",         "rdma_sends",
                                  "rdma_recvs"};

constexpr const char* kPmaSetNames[] = {"none", "basic", "extended"};  // by PmaCounters
constexpr const char* kHwSetNames[] = {"none", "mlx5", "rxe"};         // by HwCounters
constexpr const char* kFaults[] = {"ok", "missing", "empty", "garbage", "unreadable", "hang"};

// The enum value named `name`, each value's name at its index in `names`: false for none.
template <typename Enum, size_t N>
bool parse_named(const char* const (&names)[N], const std::string& name, Enum* value) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) {
      *value = static_cast<Enum>(i);
      return true;
    }
  return false;
}

std::string names_in(const std::vector<Counter>& counters, CounterGroup group) {
  std::string out;
  for (const Counter& c : counters)
    if (c.group == group) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

}  // namespace

std::string Counter::path() const {
  return std::string(group_dir(group)) + "/" + name;
}

std::vector<Counter> make_port_counters(CounterSets sets) {
  std::vector<Counter> out;
  auto add = [&](const char* name, CounterGroup group, uint8_t bits) {
    out.push_back(Counter{name, group, bits});
  };
  if (sets.pma != PmaCounters::kNone) {
    for (const CounterWidth& d : rdma_eventd::internal::kPmaErrorCounterWidths)
      add(d.name.data(), CounterGroup::kPma, d.bits);
    if (sets.pma == PmaCounters::kBasic)
      for (const CounterWidth& d : kPmaBasicData)
        add(d.name.data(), CounterGroup::kPma, d.bits);
    else
      for (const CounterWidth& d : kPmaExtendedData)
        add(d.name.data(), CounterGroup::kPma, d.bits);
  }
  if (sets.hw == HwCounters::kMlx5) {
    // A ConnectX-6's (drivers/infiniband/hw/mlx5/counters.c): the Q counters, 32 bits that
    // wrap, then the congestion counters and rx_icrc_encapsulated, 64-bit.
    for (const std::string_view name : rdma_eventd::internal::kMlx5QCounters) {
      add(name.data(), CounterGroup::kHw, rdma_eventd::internal::kMlx5QCounterBits);
      out.back().wraps = true;
    }
    for (const std::string_view name : rdma_eventd::internal::kMlx5WideCounters)
      add(name.data(), CounterGroup::kHw, 64);
  }
  if (sets.hw == HwCounters::kRxe)
    for (const char* name : kRxeHw)
      add(name, CounterGroup::kHw, 64);
  return out;
}

const char* group_dir(CounterGroup group) {
  return group == CounterGroup::kPma ? "counters" : "hw_counters";
}

const char* pma_counters_name(PmaCounters set) {
  return kPmaSetNames[static_cast<size_t>(set)];
}

const char* hw_counters_name(HwCounters set) {
  return kHwSetNames[static_cast<size_t>(set)];
}

bool parse_pma_counters(const std::string& name, PmaCounters* set) {
  return parse_named(kPmaSetNames, name, set);
}

bool parse_hw_counters(const std::string& name, HwCounters* set) {
  return parse_named(kHwSetNames, name, set);
}

const char* fault_name(CounterFault fault) {
  return kFaults[static_cast<size_t>(fault)];
}

bool parse_fault(const std::string& name, CounterFault* fault) {
  return parse_named(kFaults, name, fault);
}

Counter* find_counter(std::vector<Counter>& counters, const std::string& name,
                      const std::string& port, std::string* error) {
  const size_t slash = name.find('/');
  const std::string file = slash == std::string::npos ? name : name.substr(slash + 1);
  const std::string dir = slash == std::string::npos ? "" : name.substr(0, slash);
  std::vector<Counter*> found;
  for (Counter& c : counters)
    if (file == c.name && (dir.empty() || dir == group_dir(c.group))) found.push_back(&c);
  if (found.size() == 1) return found[0];
  if (found.size() > 1) {
    *error = "\"" + name + "\" is in both counters/ and hw_counters/ of " + port +
             ": say counters/" + file + " or hw_counters/" + file;
    return nullptr;
  }
  const std::string pma = names_in(counters, CounterGroup::kPma);
  const std::string hw = names_in(counters, CounterGroup::kHw);
  std::string known;
  if (!pma.empty()) known = "counters/: " + pma;
  if (!hw.empty()) known += (known.empty() ? "" : "; ") + std::string("hw_counters/: ") + hw;
  *error = port + " has no counter \"" + name + "\" (" +
           (known.empty() ? "it has neither counters/ nor hw_counters/" : known) + ")";
  return nullptr;
}

}  // namespace rdmasim
