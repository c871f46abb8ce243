#include "incident_report.h"

#include <algorithm>

#include "escape.h"
#include "incidents_output.h"

namespace rdma_eventd_fleet {

IncidentReport::IncidentReport(const IncidentReportOptions& options, std::FILE* out)
    : options_(options), out_(out), grouper_(options.grouping, [this](Incident&& incident) {
        ++incidents_;
        if (options_.page) timeline_.add(incident);
        if (!options_.print) return;
        if (options_.json) {
          const std::string line = dump_ascii(incident_json(incident)) + "\n";
          std::fwrite(line.data(), 1, line.size(), out_);
        } else {
          text_.emplace_back(incident.start_us, format_incident(incident));
        }
      }) {}

std::vector<std::string> IncidentReport::events(const IncidentReportOptions& options) {
  std::vector<std::string> events;
  for (const auto event : fault_events())
    events.emplace_back(event);
  if (options.page) events.emplace_back("port_active");
  return events;
}

void IncidentReport::add(const JournalEntry& e) {
  const FaultInput in = fault_input(e);
  const bool fault = is_fault(in.event, in.health, in.link_change);
  const bool counted = grouper_.add(in);
  if (options_.page && (counted || !fault)) timeline_.add(in);
}

size_t IncidentReport::finish() {
  grouper_.finish();
  std::stable_sort(text_.begin(), text_.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [start, text] : text_)
    std::fwrite(text.data(), 1, text.size(), out_);
  text_.clear();
  return incidents_;
}

}  // namespace rdma_eventd_fleet
