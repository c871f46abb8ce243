#include "core/link_quality_record.h"

#include <iterator>

#include "rdma_eventd/internal/enum_names.h"

namespace rdma_eventd::daemon {
namespace {

using Kind = LinkQualityChange::Kind;

// In Kind's order: the record's `change`, and its severity.
constexpr std::string_view kChangeNames[] = {"bad",         "clean",   "pegged", "reset",
                                             "hidden_down", "unknown", "judged"};
constexpr Severity kChangeSeverities[] = {
    Severity::kWarning, Severity::kNotice,  Severity::kWarning, Severity::kInfo,
    Severity::kWarning, Severity::kWarning, Severity::kInfo};
static_assert(std::size(kChangeNames) == static_cast<size_t>(Kind::kJudged) + 1);
static_assert(std::size(kChangeSeverities) == std::size(kChangeNames));

}  // namespace

std::string_view link_change_name(Kind k) {
  return internal::enum_name(kChangeNames, k, "unknown");
}

Severity link_change_severity(Kind k) {
  return internal::enum_name(kChangeSeverities, k, Severity::kWarning);
}

Record link_quality_record(std::string_view device, std::string_view node_guid, uint32_t port,
                           const LinkQualityChange& c, const LinkRate& rate,
                           std::vector<std::string> pegged) {
  Record r;
  r.event = EventKind::kLinkQuality;
  r.event_type = -1;
  r.device = device;
  r.node_guid = node_guid;
  r.port = port;
  LinkQualityEvent l;
  l.change = link_change_name(c.kind);
  const bool verdict =
      c.kind == LinkQualityChange::Kind::kBad || c.kind == LinkQualityChange::Kind::kClean;
  if (verdict) l.fault = link_fault_name(c.fault);
  l.counter = c.counter;
  l.value = c.value;
  l.count = c.count;
  if (c.kind == LinkQualityChange::Kind::kBad) {
    l.allowed = c.allowed;
    l.window_s = c.window_s;
    l.ber = c.ber;
  }
  l.reason = c.reason;
  l.since_us = c.since_wall_us;
  l.rate_gbps = rate.gbps();
  l.pegged = std::move(pegged);
  r.link = std::move(l);
  return r;
}

}  // namespace rdma_eventd::daemon
