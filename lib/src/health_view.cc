#include "schema/health_view.h"

#include <algorithm>
#include <tuple>

namespace rdma_eventd {

int verdict_rank(std::string_view verdict) {
  const auto it = std::find(kVerdictsByBadness.begin(), kVerdictsByBadness.end(), verdict);
  return static_cast<int>(it - kVerdictsByBadness.begin());
}

HealthView view_health(const HealthReply& reply) {
  HealthView v;
  if (!reply.enabled) {
    v.unknown_why = "port health is off in rdma-eventd (health.enabled)";
    return v;
  }
  for (const HealthReply::Port& p : reply.ports) {
    if (!p.counted) continue;
    ++v.counted;
    if (p.health != "healthy") v.bad.push_back(&p);
    if (p.health == "healthy" && link_not_judged(p)) v.not_judged.push_back(&p);
  }
  std::sort(v.bad.begin(), v.bad.end(), [](const auto* a, const auto* b) {
    return std::tuple(-verdict_rank(a->health), a->device, a->port) <
           std::tuple(-verdict_rank(b->health), b->device, b->port);
  });
  if (v.counted == 0) {
    v.unknown_why = "no RDMA port in service";
  } else {
    v.judgement =
        v.bad.empty() ? HealthView::Judgement::kHealthy : HealthView::Judgement::kUnhealthy;
  }
  return v;
}

bool link_not_judged(const HealthReply::Port& p) {
  static constexpr std::array<std::string_view, 5> kLasting = {
      "read_failing", "unreadable", "read_hung", "pegged", "rate_unknown"};
  return p.link_quality == "unknown" &&
         std::find(kLasting.begin(), kLasting.end(), p.link_quality_reason) != kLasting.end();
}

std::string port_name(const HealthReply::Port& p) {
  return p.device + "/" + std::to_string(p.port);
}

std::string bounded_list(std::string lead, const std::vector<std::string>& items,
                         size_t max_bytes) {
  const auto more = [](size_t n) { return " +" + std::to_string(n) + " more"; };
  const auto piece = [](size_t i, const std::string& item) { return (i ? ", " : " ") + item; };
  size_t all = lead.size();
  for (size_t i = 0; i < items.size(); ++i)
    all += piece(i, items[i]).size();
  size_t shown = 0;
  for (const std::string& item : items) {
    const size_t rest = items.size() - shown - 1;
    // Room for " +N more" whenever items would be left out after this one.
    const size_t room = all <= max_bytes ? 0 : (rest ? more(rest).size() : 0);
    if (lead.size() + piece(shown, item).size() + room > max_bytes) break;
    lead += piece(shown, item);
    ++shown;
  }
  if (shown < items.size()) lead += more(items.size() - shown);
  return lead;
}

std::string short_duration(uint64_t s) {
  if (s != 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s != 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace rdma_eventd
