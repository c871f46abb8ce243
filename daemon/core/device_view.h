// The daemon's cached view of a device: what it last published for every port, and the GID and
// P_Key tables it last read. "What changed" in a record is always measured against this view.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

struct PortView {
  PortInfo info;                // as last published
  std::vector<GidEntry> gids;   // non-empty entries, ascending index
  std::vector<uint16_t> pkeys;  // the whole table, position = index, 0 = empty slot
  uint32_t gid_tbl_len = 0;
  uint32_t pkey_tbl_len = 0;
};

struct DeviceView {
  std::string name;
  uint64_t node_guid = 0;       // host order
  std::vector<PortView> ports;  // ports[i] is port i + 1

  PortView* port(uint32_t num) {
    return num >= 1 && num <= ports.size() ? &ports[num - 1] : nullptr;
  }
  uint32_t num_ports() const { return static_cast<uint32_t>(ports.size()); }
};

// Answers about one open device, from libibverbs in the daemon and from a fake in unit tests.
// Every call returns 0 or a positive errno and is expected to be cheap (no blocking I/O).
class DeviceQueries {
 public:
  struct PortAttr {
    PortInfo info;
    uint32_t gid_tbl_len = 0;
    uint32_t pkey_tbl_len = 0;
  };

  virtual ~DeviceQueries() = default;
  virtual int query_port(uint32_t port, PortAttr& out) = 0;
  // The non-empty GID entries of every port in one call; per_port[i] is port i + 1.
  virtual int query_gids(uint32_t num_ports, std::vector<std::vector<GidEntry>>& per_port) = 0;
  virtual int query_pkeys(uint32_t port, uint32_t table_len, std::vector<uint16_t>& out) = 0;
};

}  // namespace rdma_eventd::daemon
