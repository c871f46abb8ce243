#include "core/link_quality_record.h"

namespace rdma_eventd::daemon {

std::string_view link_change_name(LinkQualityChange::Kind k) {
  using Kind = LinkQualityChange::Kind;
  switch (k) {
    case Kind::kBad:
      return "bad";
    case Kind::kClean:
      return "clean";
    case Kind::kPegged:
      return "pegged";
    case Kind::kReset:
      return "reset";
    case Kind::kHiddenDown:
      return "hidden_down";
  }
  return "unknown";
}

Severity link_change_severity(LinkQualityChange::Kind k) {
  using Kind = LinkQualityChange::Kind;
  switch (k) {
    case Kind::kClean:
      return Severity::kNotice;
    case Kind::kReset:
      return Severity::kInfo;
    case Kind::kBad:
    case Kind::kPegged:
    case Kind::kHiddenDown:
      break;
  }
  return Severity::kWarning;
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
  l.rate_gbps = rate.gbps();
  l.pegged = std::move(pegged);
  r.link = std::move(l);
  return r;
}

}  // namespace rdma_eventd::daemon
