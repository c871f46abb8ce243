#include "core/journal_entry.h"

#include <array>

namespace rdma_eventd::daemon {
namespace {

// One per EventKind, in enum order. Never change one: they are how the catalog and people's
// saved queries find these entries.
constexpr std::array<std::string_view, kEventKindCount> kMessageIds = {
    "260f624ee6044c27932423370eae1bdf",  // port_active
    "11b9171c80eb4233a8a8a39e9b93196c",  // port_err
    "9f91adefcf764eae8b3d118b506ee0ec",  // lid_change
    "8c2639c3c49142e7a021a6f9189dfdd1",  // pkey_change
    "cba45367082048afbd7d2b74e1dc06a6",  // sm_change
    "6f201cbacbcf41488fcb0247c2b0c5f6",  // client_reregister
    "19b3e41016e34da9be1efc974e1deb2b",  // gid_change
    "8ef99d5474244c868d83f6115d93aa40",  // device_fatal
    "d84bfe7134a342648803289e9a296a3f",  // unknown
    "0b30106622d24a9f8b5c288b3e62c4b1",  // device_added
    "fac2b940c46c450bbe58c2d204c1b595",  // device_removed
    "bfe7bc4cfe2a4e45acd0c613f8ceeab2",  // device_renamed
    "e6227d3293874a9888ff929df5645b9e",  // device_recovered
    "bd24b13a96184d4ba91cb1caa7808252",  // port_state
    "0513127955ef45d9a80cf6a8e4e25548",  // app_report
    "5d1c2b7e0a8f4f6e9b3a41c7d2e86f10",  // port_health: one for every verdict (RDMA_HEALTH)
    "ad1b73688e6a4fd58123c30cd59a71f3",  // module_plugged
    "d6eece555e194e05b6b2b883c16f2ba5",  // module_unplugged
    "48553aa11da042fc904178033417891e",  // module_disabled
    "30339efb21144b0b88af7bb4506d7f13",  // module_error
    "c695e0e7d2ac472ba1738bdfcff24ed2",  // temperature_warning
    "cc5befb256c949698e376f056836d339",  // pci_power_change
    "571d4416f8824db1b4b43c05a687307e",  // firmware_event
    "76e54973591b4c9789b1bc7b6b419c19",  // vendor_event
    "2229ea15229542f1be4344f8c2baad7a",  // vendor_events_lost
};

}  // namespace

std::string_view message_id(EventKind kind) {
  return kMessageIds[static_cast<size_t>(kind)];
}

std::vector<std::string> journal_fields(const Record& r, std::string_view json,
                                        std::string_view identifier) {
  std::vector<std::string> f;
  f.reserve(16);
  f.push_back("MESSAGE=" + describe(r));
  f.push_back("PRIORITY=" + std::to_string(syslog_priority(r.severity)));
  f.push_back("MESSAGE_ID=" + std::string(message_id(r.event)));
  f.push_back("SYSLOG_IDENTIFIER=" + std::string(identifier));
  f.push_back("RDMA_EVENT=" + std::string(event_name(r.event)));
  f.push_back("RDMA_EVENT_TYPE=" + std::to_string(r.event_type));
  f.push_back("RDMA_SEVERITY=" + std::string(severity_name(r.severity)));
  f.push_back("RDMA_DEVICE=" + r.device);
  f.push_back("RDMA_NODE_GUID=" + r.node_guid);
  f.push_back("RDMA_PORT=" + std::to_string(r.port));
  if (r.port_info) {
    f.push_back("RDMA_LINK_LAYER=" + std::string(link_layer_name(r.port_info->link_layer)));
    f.push_back("RDMA_PORT_STATE=" + std::string(port_state_name(r.port_info->state)));
    f.push_back("RDMA_LID=" + std::to_string(r.port_info->lid));
  }
  if (r.event == EventKind::kAppReport) {
    // Who reported, for `journalctl RDMA_REPORTER_UNIT=job.service`.
    f.push_back("RDMA_REPORTER_PID=" + std::to_string(r.reporter.pid));
    f.push_back("RDMA_REPORTER_UID=" + std::to_string(r.reporter.uid));
    f.push_back("RDMA_REPORTER_COMM=" + r.reporter.comm);
    f.push_back("RDMA_REPORTER_UNIT=" + r.reporter.unit);
  }
  if (r.event == EventKind::kPortHealth) {
    f.push_back("RDMA_HEALTH=" + r.health);
    f.push_back("RDMA_HEALTH_REASON=" + r.reason);
  }
  if (r.vendor) {
    // Vendor events (DEVX): the event entry's type, and the module and error to filter on.
    f.push_back("RDMA_VENDOR_TYPE=" + std::to_string(r.vendor->type));
    const bool module = r.event >= EventKind::kModulePlugged && r.event <= EventKind::kModuleError;
    if (module) f.push_back("RDMA_MODULE=" + std::to_string(r.vendor->module));
    if (r.event == EventKind::kModuleError)
      f.push_back("RDMA_MODULE_ERROR=" + r.vendor->error_type);
  }
  f.push_back("RDMA_SEQ=" + std::to_string(r.seq));
  f.push_back("RDMA_STREAM=" + r.stream);
  f.push_back("RDMA_RECORD=" + std::string(json));
  return f;
}

}  // namespace rdma_eventd::daemon
