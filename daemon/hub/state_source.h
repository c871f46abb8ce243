// What the subscriber hub may ask of the rest of the daemon, for snapshots and status: the
// stream position, the cached device views and the daemon's own blocks of the status reply. The
// Daemon implements it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_view.h"
#include "schema/health_reply.h"
#include "schema/inventory_reply.h"
#include "schema/status_reply.h"

namespace rdma_eventd::daemon {

class StateSource {
 public:
  virtual ~StateSource() = default;
  // The seq of the last record published (0 before the first).
  virtual uint64_t last_seq() const = 0;
  // Every open device's view, in a stable order (by device index).
  virtual std::vector<const DeviceView*> device_views() const = 0;
  // The status reply with the blocks the daemon owns filled in: daemon, counters, hotplug,
  // journal, devices. The hub fills its own (ring, subscribers) and writes the reply.
  virtual StatusReply status() const = 0;
  // Every port's health verdict and the host's (docs/health.md): the health reply's body.
  virtual HealthReply health() const = 0;
  // The inventory (docs/health.md, "The inventory"): the inventory reply's body.
  virtual InventoryReply inventory() const = 0;
  // Retires the adapter `what` names, for a peer whose uid is `uid` (root only: the hub checks).
  // The error, or "" and `retired` filled.
  virtual std::string retire(std::string_view what, uint32_t uid,
                             InventoryReply::Adapter& retired) = 0;
};

}  // namespace rdma_eventd::daemon
