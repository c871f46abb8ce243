#include "incidents_html.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include "escape.h"
#include "rdma_eventd/internal/enum_names.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd_fleet {
namespace {

constexpr int kWidth = 1200;
constexpr int kLabelWidth = 200;
constexpr int kPlotWidth = kWidth - kLabelWidth - 20;
constexpr int kTop = 34;
constexpr int kRowHeight = 18;
constexpr int kBottom = 26;
constexpr size_t kHostsInTable = 8;

std::string_view class_color(IncidentClass c) {
  // In IncidentClass's order: fabric, host, port, sm, application.
  static constexpr std::string_view kColors[] = {"#c0392b", "#8e44ad", "#d68910", "#16a085",
                                                 "#2471a3"};
  return rdma_eventd::internal::enum_name(kColors, c, "#555");
}

std::string_view verdict_color(std::string_view verdict) {
  if (verdict == "healthy") return "#27ae60";
  if (verdict == "degraded") return "#f1c40f";
  if (verdict == "flapping") return "#e67e22";
  if (verdict == "down") return "#c0392b";
  return "#6c3483";  // fatal, gone, or one this version does not know
}

std::string px(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

const char* const kStyle = R"(<style>
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px}
.meta{color:#555;margin-bottom:8px}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
svg{display:block;border:1px solid #ddd;background:#fcfcfc}
svg text{font-size:11px;fill:#333}
svg .host{font-family:monospace}
svg .axis{fill:#777}
svg .band{cursor:pointer}
svg .band-label{font-weight:600}
table{border-collapse:collapse;margin-top:14px;width:100%}
th,td{border-bottom:1px solid #e5e5e5;padding:4px 8px;text-align:left;vertical-align:top}
td:nth-child(-n+4){white-space:nowrap}
th{background:#f4f4f4}
td.class{font-weight:600}
tr.picked{background:#fff6d5}
</style>
)";

const char* const kScript = R"(<script>
(function () {
  var rows = document.querySelectorAll('tr.incident');
  var hosts = document.querySelectorAll('svg .row').length;
  document.getElementById('summary').textContent =
      rows.length + (rows.length === 1 ? ' incident' : ' incidents') + ', ' +
      document.body.dataset.hosts + ' hosts in ' + hosts + ' rows';
  document.querySelectorAll('svg .band').forEach(function (band) {
    band.addEventListener('click', function () {
      var row = document.getElementById('incident-' + band.dataset.n);
      rows.forEach(function (r) { r.classList.remove('picked'); });
      row.classList.add('picked');
      row.scrollIntoView({block: 'nearest'});
    });
  });
})();
</script>
)";

}  // namespace

std::string html_escape(std::string_view text) {
  const std::string shown = printable(text);
  std::string out;
  out.reserve(shown.size());
  for (const char c : shown) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void Timeline::add(const FaultInput& in) {
  Host& host = hosts_[std::string(in.host)];
  first_us_ = std::min(first_us_, in.time_us);
  last_us_ = std::max(last_us_, in.time_us);
  // Downs, ups, verdicts and the other faults are marks; any other record only gives its host
  // a row.
  const bool marked = in.event == "port_err" || in.event == "port_active" ||
                      in.event == "port_health" || is_fault(in.event, in.health, in.link_change);
  if (!marked) return;
  if (host.marks.size() >= marks_per_host_) {
    ++host.left_out;
    return;
  }
  const std::string where =
      in.port ? std::string(in.device) + "/" + std::to_string(in.port) : std::string(in.device);
  char kind = 'f';
  if (in.event == "port_err") kind = 'd';
  if (in.event == "port_active") kind = 'u';
  if (in.event == "port_health") kind = 'v';
  // A link_quality fault says which change ("link_quality hidden_down").
  const std::string what = kind == 'v'                  ? "verdict " + std::string(in.health)
                           : in.event == "link_quality" ? counted_name(in.event, {}, in.link_change)
                                                        : std::string(in.event);
  const std::string label = where + " " + what;
  host.marks.push_back({in.time_us, kind, label, std::string(in.health)});
}

void Timeline::add(const Incident& incident) {
  Band band{incident.start_us,     incident.end_us, incident.cls, incident.evidence, {},
            incident.hosts.size(), incident.records};
  for (const auto& [name, h] : incident.hosts) {
    if (band.hosts.size() == kHostsInTable) break;
    band.hosts.push_back(name);
  }
  first_us_ = std::min(first_us_, incident.start_us);
  last_us_ = std::max(last_us_, incident.end_us);
  bands_.push_back(std::move(band));
}

std::string Timeline::html() const {
  // Rows: one per host, or runs of hosts in name order when there are more than max_rows_.
  const size_t per_row =
      hosts_.size() <= max_rows_ ? 1 : (hosts_.size() + max_rows_ - 1) / max_rows_;
  const size_t rows = (hosts_.size() + per_row - 1) / per_row;
  const int height = kTop + static_cast<int>(rows) * kRowHeight + kBottom;
  const int64_t t0 = hosts_.empty() && bands_.empty() ? 0 : first_us_;
  const int64_t span = std::max<int64_t>(1, time_span(t0, std::max(t0, last_us_)));
  const auto x = [&](int64_t t) {
    return kLabelWidth + (static_cast<double>(t) - static_cast<double>(t0)) * kPlotWidth /
                             static_cast<double>(span);
  };
  // The incidents are added as they close; they are numbered and drawn in the order they began.
  std::vector<const Band*> bands;
  for (const Band& b : bands_)
    bands.push_back(&b);
  std::stable_sort(bands.begin(), bands.end(),
                   [](const Band* a, const Band* b) { return a->start_us < b->start_us; });
  const int bottom = kTop + static_cast<int>(rows) * kRowHeight;

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>rdma-eventd: incidents</title>\n";
  out += kStyle;
  out += "</head>\n<body data-hosts=\"" + std::to_string(hosts_.size()) + "\">\n";
  out += "<h1>rdma-eventd: incidents</h1>\n<div class=\"meta\">";
  if (!hosts_.empty() || !bands_.empty()) {
    out += html_escape(incident_time(t0)) + " to " + html_escape(incident_time(last_us_)) +
           " &middot; ";
  }
  out += "<span id=\"summary\"></span></div>\n<div class=\"legend\">";
  for (const auto c : {IncidentClass::kFabric, IncidentClass::kHost, IncidentClass::kPort,
                       IncidentClass::kSm, IncidentClass::kApplication}) {
    out += "<span><i style=\"background:" + std::string(class_color(c)) + ";opacity:.5\"></i>" +
           std::string(class_name(c)) + "</span>";
  }
  out +=
      "<span><i style=\"background:#c0392b\"></i>port down</span>"
      "<span><i style=\"background:#27ae60\"></i>port up</span>"
      "<span><i style=\"background:#e67e22;border-radius:5px\"></i>verdict</span>"
      "<span><i style=\"background:#333;transform:rotate(45deg)\"></i>other fault</span>";
  out += "</div>\n";

  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
         "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) +
         " " + std::to_string(height) + "\" role=\"img\" aria-label=\"timeline\">\n";
  // Rows and their labels.
  size_t index = 0;
  std::vector<size_t> row_of;  // host index -> row
  std::vector<std::string> names;
  for (const auto& [name, h] : hosts_) {
    row_of.push_back(index / per_row);
    names.push_back(name);
    ++index;
  }
  for (size_t r = 0; r < rows; ++r) {
    const int y = kTop + static_cast<int>(r) * kRowHeight;
    const size_t first = r * per_row;
    const size_t last = std::min(names.size(), first + per_row) - 1;
    // The names escaped, the page's own ellipsis not.
    std::string label = names[first].empty() ? "-" : html_escape(names[first]);
    if (last != first) {
      label +=
          " \u2026 " + html_escape(names[last]) + " (" + std::to_string(last - first + 1) + ")";
    }
    out += "<g class=\"row\"><rect x=\"0\" y=\"" + std::to_string(y) + "\" width=\"" +
           std::to_string(kWidth) + "\" height=\"" + std::to_string(kRowHeight) + "\" fill=\"" +
           (r % 2 ? "#f3f3f3" : "#fcfcfc") + "\"/>";
    out += "<text class=\"host\" x=\"6\" y=\"" + std::to_string(y + 13) + "\">" + label +
           "</text></g>\n";
  }
  // Incidents: bands over every row, numbered in time order, labelled where there is room.
  double label_end = 0;
  for (size_t i = 0; i < bands.size(); ++i) {
    const Band& b = *bands[i];
    const double left = x(b.start_us) - 1.5;
    const double width = std::max(3.0, x(b.end_us) - x(b.start_us) + 3.0);
    const std::string color(class_color(b.cls));
    out += "<g class=\"band\" data-n=\"" + std::to_string(i + 1) + "\" data-class=\"" +
           std::string(class_name(b.cls)) + "\"><title>#" + std::to_string(i + 1) + " " +
           std::string(class_name(b.cls)) + ": " + html_escape(b.evidence) + "</title>";
    out += "<rect x=\"" + px(left) + "\" y=\"" + std::to_string(kTop) + "\" width=\"" + px(width) +
           "\" height=\"" + std::to_string(bottom - kTop) + "\" fill=\"" + color +
           "\" fill-opacity=\"0.18\" stroke=\"" + color + "\" stroke-opacity=\"0.6\"/>";
    const std::string text = "#" + std::to_string(i + 1) + " " + std::string(class_name(b.cls));
    const double label_width = 7.0 * static_cast<double>(text.size());
    const double label_x = std::min(left, kWidth - label_width - 4);
    if (label_x >= label_end) {
      out += "<text class=\"band-label\" x=\"" + px(label_x) + "\" y=\"" +
             std::to_string(kTop - 6) + "\" fill=\"" + color + "\" style=\"fill:" + color + "\">" +
             text + "</text>";
      label_end = label_x + label_width + 6;
    }
    out += "</g>\n";
  }
  // Marks: one per row, pixel and kind (a busy row would otherwise draw thousands on a pixel).
  std::set<std::tuple<size_t, int, char, std::string>> drawn;
  index = 0;
  for (const auto& [name, h] : hosts_) {
    const size_t r = row_of[index++];
    const int y = kTop + static_cast<int>(r) * kRowHeight;
    for (const Mark& m : h.marks) {
      const double mx = x(m.time_us);
      if (!drawn.emplace(r, static_cast<int>(mx), m.kind, m.verdict).second) continue;
      const std::string title = "<title>" +
                                html_escape(incident_time(m.time_us) + " " + name + " " + m.label) +
                                "</title>";
      switch (m.kind) {
        case 'd':
        case 'u':
          out += "<line class=\"mark " + std::string(m.kind == 'd' ? "down" : "up") + "\" x1=\"" +
                 px(mx) + "\" x2=\"" + px(mx) + "\" y1=\"" + std::to_string(y + 3) + "\" y2=\"" +
                 std::to_string(y + kRowHeight - 3) + "\" stroke=\"" +
                 (m.kind == 'd' ? "#c0392b" : "#27ae60") + "\" stroke-width=\"2\">" + title +
                 "</line>\n";
          break;
        case 'v':
          out += "<circle class=\"mark verdict\" cx=\"" + px(mx) + "\" cy=\"" +
                 std::to_string(y + kRowHeight / 2) + "\" r=\"4\" fill=\"" +
                 std::string(verdict_color(m.verdict)) + "\" stroke=\"#fff\">" + title +
                 "</circle>\n";
          break;
        default:
          out += "<rect class=\"mark fault\" x=\"" + px(mx - 3.5) + "\" y=\"" +
                 std::to_string(y + kRowHeight / 2 - 4) +
                 "\" width=\"7\" height=\"7\" fill=\"#333\" transform=\"rotate(45 " + px(mx) + " " +
                 std::to_string(y + kRowHeight / 2) + ")\">" + title + "</rect>\n";
      }
    }
  }
  // The time axis: six ticks.
  for (int i = 0; i <= 5; ++i) {
    const int64_t t = t0 + span / 5 * i;
    const double tx = x(t);
    out += "<line x1=\"" + px(tx) + "\" x2=\"" + px(tx) + "\" y1=\"" + std::to_string(bottom) +
           "\" y2=\"" + std::to_string(bottom + 4) + "\" stroke=\"#999\"/>";
    const std::string label = incident_time(t).substr(11, 12);  // HH:MM:SS.mmm
    out += "<text class=\"axis\" x=\"" + px(std::min(tx, kWidth - 80.0)) + "\" y=\"" +
           std::to_string(bottom + 16) + "\" text-anchor=\"" + (i == 0 ? "start" : "middle") +
           "\">" + html_escape(label) + "</text>\n";
  }
  out += "</svg>\n";

  // The table, newest first.
  out +=
      "<table id=\"incidents\">\n<thead><tr><th>#</th><th>start (UTC)</th><th>duration</th>"
      "<th>class</th><th>hosts</th><th>records</th><th>evidence</th></tr></thead>\n<tbody>\n";
  for (size_t i = bands.size(); i-- > 0;) {
    const Band& b = *bands[i];
    std::string hosts;
    for (const auto& h : b.hosts)
      hosts += (hosts.empty() ? "" : ", ") + html_escape(h);
    if (b.host_count > b.hosts.size()) {
      hosts += " and " + std::to_string(b.host_count - b.hosts.size()) + " more";
    }
    out += "<tr class=\"incident\" id=\"incident-" + std::to_string(i + 1) + "\" data-class=\"" +
           std::string(class_name(b.cls)) + "\"><td>" + std::to_string(i + 1) + "</td><td>" +
           html_escape(incident_time(b.start_us)) + "</td><td>" +
           incident_duration(time_span(b.start_us, b.end_us)) +
           "</td><td class=\"class\" style=\"color:" + std::string(class_color(b.cls)) + "\">" +
           std::string(class_name(b.cls)) + "</td><td class=\"hosts\">" +
           std::to_string(b.host_count) + ": " + hosts + "</td><td>" + std::to_string(b.records) +
           "</td><td class=\"evidence\">" + html_escape(b.evidence) + "</td></tr>\n";
  }
  out += "</tbody>\n</table>\n";
  uint64_t left_out = 0;
  for (const auto& [name, h] : hosts_)
    left_out += h.left_out;
  if (left_out) {
    out += "<p class=\"meta\">" + std::to_string(left_out) + " marks not drawn (at most " +
           std::to_string(marks_per_host_) + " per host); the incidents count every record.</p>\n";
  }
  out += kScript;
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace rdma_eventd_fleet
