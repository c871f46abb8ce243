#include "core/journal_entry.h"

#include <array>
#include <charconv>

#include "core/journal_native.h"
#include "schema/record_text.h"

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
    "5d14f47edcf9432bb21cb7faba136a5a",  // link_quality: every change (RDMA_LINK_CHANGE)
    "bd9de6735e2748138e37a3e132a25f68",  // device_speed_change
    "a2aed4eee33e415396cdc373848ebf65",  // devlink_health: every change (RDMA_DEVLINK_CHANGE)
    "d91e4103a7fe47bba3dfa41db818a4dd",  // devlink_events_lost
};

}  // namespace

std::string_view message_id(EventKind kind) {
  return kMessageIds[static_cast<size_t>(kind)];
}

namespace {

// A number as field text, without a string of its own.
class Decimal {
 public:
  template <typename T>
  explicit Decimal(T value)
      : size_(static_cast<size_t>(std::to_chars(buf_, buf_ + sizeof buf_, value).ptr - buf_)) {}
  operator std::string_view() const { return {buf_, size_}; }  // NOLINT: a value, as text

 private:
  char buf_[24];
  size_t size_;
};

// MESSAGE, the sentence written straight into the entry as it is built. A newline in it (a
// device or a reporter's name can hold one) makes it a field framed by its length instead.
void append_native_message(std::string& out, const Record& r) {
  const size_t at = out.size();
  out += "MESSAGE=";
  const size_t value_at = out.size();
  append_description(out, r);
  if (std::string_view(out).substr(value_at).find('\n') != std::string_view::npos) {
    const std::string value = out.substr(value_at);
    out.resize(at);
    append_native_field(out, "MESSAGE", value);
    return;
  }
  out += '\n';
}

constexpr std::string_view kRecordField = "RDMA_RECORD";

}  // namespace

void append_journal_entry_head(std::string& out, const Record& r, std::string_view identifier) {
  append_native_message(out, r);
  NativeFieldWriter w(out);
  // A value the daemon wrote itself (a number, a name of the schema, a message id) holds no
  // newline: `plain` does not look for one. Any other (names from the configuration, the
  // kernel or a reporter; text kept in a record) may: `text` looks.
  const auto text = [&w](std::string_view key, std::string_view value) { w.text(key, value); };
  const auto plain = [&w](std::string_view key, std::string_view value) { w.plain(key, value); };
  plain("PRIORITY", Decimal(syslog_priority(r.severity)));
  plain("MESSAGE_ID", message_id(r.event));
  text("SYSLOG_IDENTIFIER", identifier);
  plain("RDMA_EVENT", event_name(r.event));
  plain("RDMA_EVENT_TYPE", Decimal(r.event_type));
  plain("RDMA_SEVERITY", severity_name(r.severity));
  text("RDMA_DEVICE", r.device);
  text("RDMA_NODE_GUID", r.node_guid);
  plain("RDMA_PORT", Decimal(r.port));
  if (r.port_info) {
    plain("RDMA_LINK_LAYER", link_layer_name(r.port_info->link_layer));
    plain("RDMA_PORT_STATE", port_state_name(r.port_info->state));
    plain("RDMA_LID", Decimal(r.port_info->lid));
  }
  if (r.event == EventKind::kAppReport) {
    // Who reported, for `journalctl RDMA_REPORTER_UNIT=job.service`.
    plain("RDMA_REPORTER_PID", Decimal(r.reporter.pid));
    plain("RDMA_REPORTER_UID", Decimal(r.reporter.uid));
    text("RDMA_REPORTER_COMM", r.reporter.comm);
    text("RDMA_REPORTER_UNIT", r.reporter.unit);
  }
  if (r.event == EventKind::kPortHealth) {
    text("RDMA_HEALTH", r.health);
    text("RDMA_HEALTH_REASON", r.reason);
  }
  if (r.link) {
    // Link quality: `journalctl RDMA_LINK_CHANGE=bad RDMA_LINK_FAULT=bit_errors`.
    text("RDMA_LINK_CHANGE", r.link->change);
    if (!r.link->fault.empty()) text("RDMA_LINK_FAULT", r.link->fault);
    text("RDMA_LINK_COUNTER", r.link->counter);
    if (!r.link->reason.empty()) text("RDMA_LINK_REASON", r.link->reason);
  }
  if (r.devlink) {
    // devlink health: `journalctl RDMA_DEVLINK_REPORTER=fw_fatal RDMA_DEVLINK_STATE=error`.
    text("RDMA_DEVLINK_HANDLE", r.devlink->handle);
    text("RDMA_DEVLINK_REPORTER", r.devlink->reporter);
    text("RDMA_DEVLINK_STATE", r.devlink->state);
    text("RDMA_DEVLINK_CHANGE", r.devlink->change);
  }
  if (r.vendor) {
    // Vendor events (DEVX): the event entry's type, and the module and error to filter on.
    plain("RDMA_VENDOR_TYPE", Decimal(r.vendor->type));
    const bool module = r.event >= EventKind::kModulePlugged && r.event <= EventKind::kModuleError;
    if (module) plain("RDMA_MODULE", Decimal(r.vendor->module));
    if (r.event == EventKind::kModuleError) text("RDMA_MODULE_ERROR", r.vendor->error_type);
  }
  plain("RDMA_SEQ", Decimal(r.seq));
  text("RDMA_STREAM", r.stream);
  w.raw(kRecordField);
  w.raw("=");
}

}  // namespace rdma_eventd::daemon
