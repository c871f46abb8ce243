#include "incidents_html.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <numeric>

#include "escape.h"
#include "incidents_page_text.h"
#include "timeline_axis.h"

namespace rdma_eventd_fleet {
namespace {

constexpr int kWidth = 1200;
constexpr int kLabelWidth = 200;
constexpr int kPlotWidth = kWidth - kLabelWidth - 20;
constexpr int kTop = 34;
constexpr int kRowHeight = 18;
constexpr int kBottom = 26;
constexpr size_t kHostsInTable = 8;
constexpr size_t kOutliersListed = 20;
constexpr uint32_t kNoHost = UINT32_MAX;

constexpr IncidentClass kClasses[] = {IncidentClass::kFabric, IncidentClass::kHost,
                                      IncidentClass::kPort, IncidentClass::kSm,
                                      IncidentClass::kApplication};

// A verdict's code in a mark, in the order of how much it says: what a cell of several draws.
constexpr std::string_view kVerdicts[] = {"healthy", "degraded", "flapping", "down", "other"};
constexpr std::string_view kVerdictColors[] = {"#27ae60", "#f1c40f", "#e67e22", "#c0392b",
                                               "#6c3483"};
uint8_t verdict_code(std::string_view verdict) {
  for (uint8_t i = 0; i < 4; ++i)
    if (kVerdicts[i] == verdict) return i;
  return 4;  // fatal, gone, or one this version does not know
}

std::string px(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// A time on the axis or in a title, as much of it as the span needs.
std::string short_time(int64_t t, int64_t span) {
  const std::string full = incident_time(t);  // 2026-11-28T10:15:30.123Z
  if (span >= 2 * 86'400'000'000LL) return full.substr(5, 5) + " " + full.substr(11, 5);
  if (span >= 60'000'000LL) return full.substr(11, 8);
  return full.substr(11, 12);
}

// One row and pixel of the timeline: how many marks of each kind (down, up, fault, then one a
// verdict) fell on it, and by whom.
struct Cell {
  std::array<uint32_t, 3 + std::size(kVerdicts)> count{};
  uint32_t host = kNoHost;  // the first host's number
  bool other_hosts = false;
  bool empty() const { return host == kNoHost; }
};

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

uint32_t Timeline::host_number(std::string_view name) {
  if (const auto it = names_.find(name); it != names_.end()) return it->second;
  const auto n = static_cast<uint32_t>(hosts_.size());
  hosts_.push_back({std::string(name)});
  names_.emplace(hosts_.back().name, n);
  return n;
}

void Timeline::add(const FaultInput& in) {
  const uint32_t host = host_number(in.host);
  // Downs, ups, verdicts and the other faults are marks; any other record only gives its host
  // a row.
  MarkKind kind = MarkKind::kFault;
  if (in.event == "port_err") kind = MarkKind::kDown;
  if (in.event == "port_active") kind = MarkKind::kUp;
  if (in.event == "port_health") kind = MarkKind::kVerdict;
  if (kind == MarkKind::kFault && !is_fault(in.event, in.health, in.link_change)) return;
  ++hosts_[host].marks;
  marks_.add({.time_us = in.time_us,
              .host = host,
              .kind = kind,
              .verdict = kind == MarkKind::kVerdict ? verdict_code(in.health) : uint8_t{0}});
}

void Timeline::add(const Incident& incident) {
  const auto arrival = static_cast<uint32_t>(bands_.size());
  uint32_t first = kNoHost;
  for (const auto& [name, h] : incident.hosts) {
    const uint32_t n = host_number(name);
    ++hosts_[n].incidents;
    if (first == kNoHost) first = n;
  }
  bands_.push_back({incident.start_us, incident.end_us, incident.records,
                    static_cast<uint32_t>(incident.hosts.size()), first, arrival, incident.cls});
  // The table's rows: the newest table_rows_ by start (incidents close roughly in time order).
  const auto later = [](const Detail& a, const Detail& b) { return a.start_us > b.start_us; };
  if (details_.size() == table_rows_) {
    if (table_rows_ == 0 || incident.start_us <= details_.front().start_us) return;
    std::pop_heap(details_.begin(), details_.end(), later);
    details_.pop_back();
  }
  Detail d{incident.start_us, arrival, incident.evidence, {}};
  for (const auto& [name, h] : incident.hosts) {
    if (d.hosts.size() == kHostsInTable) break;
    d.hosts.push_back(name);
  }
  details_.push_back(std::move(d));
  std::push_heap(details_.begin(), details_.end(), later);
}

// Where things go on the page: the rows (hosts in name order, several a row when there are
// more than max_rows_) and the time axis.
struct Timeline::Layout {
  size_t per_row = 1;
  size_t rows = 0;
  std::vector<uint32_t> by_name;  // host numbers in name order
  std::vector<uint32_t> row_of;   // host number -> row
  AxisSpan axis{TimeFence{}};
  int64_t t0 = 0;
  int64_t span = 1;
  int height = 0;
  int bottom = 0;
  std::vector<bool> band_drawn;    // by arrival: within the fence
  std::vector<uint32_t> outliers;  // the others, in time order
  uint64_t marks_outside = 0;
  std::vector<uint32_t> hosts_outside;  // the first few hosts of those marks

  double x(int64_t t) const {
    return kLabelWidth + (static_cast<double>(t) - static_cast<double>(t0)) * kPlotWidth /
                             static_cast<double>(span);
  }
  int pixel(int64_t t) const {
    const double p = (static_cast<double>(t) - static_cast<double>(t0)) * (kPlotWidth - 1) /
                     static_cast<double>(span);
    return static_cast<int>(std::clamp(p, 0.0, kPlotWidth - 1.0));
  }
  // The first time that falls at pixel p. A span near the largest int64_t rounds up to 2^63 as a
  // double: the last pixel starts at t0 + span itself, the others strictly below it.
  int64_t pixel_start(int p) const {
    if (p >= kPlotWidth - 1) return time_plus(t0, span);
    return time_plus(t0, static_cast<int64_t>(static_cast<double>(span) / (kPlotWidth - 1) * p));
  }
};

void Timeline::draw_bands(const Layout& l, const std::vector<uint32_t>& by_start,
                          std::string& out) const {
  const int band_height = l.bottom - kTop;
  std::vector<uint32_t> number(bands_.size());
  for (size_t i = 0; i < by_start.size(); ++i)
    number[by_start[i]] = static_cast<uint32_t>(i + 1);
  if (bands_.size() - l.outliers.size() <= kBandsDrawn) {
    // Each incident a band, numbered in time order, labelled where there is room.
    double label_end = 0;
    for (const uint32_t a : by_start) {
      const Band& b = bands_[a];
      if (!l.band_drawn[a]) continue;
      const std::string n = std::to_string(number[a]);
      const double left = l.x(b.start_us) - 1.5;
      const double width = std::max(3.0, l.x(b.end_us) - l.x(b.start_us) + 3.0);
      const std::string color(class_color(b.cls));
      const std::string name(class_name(b.cls));
      out += "<g class=\"band\" data-n=\"" + n + "\" data-class=\"" + name + "\"><title>#" + n +
             " " + name + ", " + std::to_string(b.hosts) + (b.hosts == 1 ? " host" : " hosts") +
             ", from " + html_escape(incident_time(b.start_us)) + "</title>";
      out += "<rect x=\"" + px(left) + "\" y=\"" + std::to_string(kTop) + "\" width=\"" +
             px(width) + "\" height=\"" + std::to_string(band_height) + "\" fill=\"" + color +
             "\" fill-opacity=\"0.18\" stroke=\"" + color + "\" stroke-opacity=\"0.6\"/>";
      const std::string text = "#" + n + " " + name;
      const double label_width = 7.0 * static_cast<double>(text.size());
      const double label_x = std::min(left, kWidth - label_width - 4);
      if (label_x >= label_end) {
        out += "<text class=\"band-label\" x=\"" + px(label_x) + "\" y=\"" +
               std::to_string(kTop - 6) + "\" fill=\"" + color + "\" style=\"fill:" + color +
               "\">" + text + "</text>";
        label_end = label_x + label_width + 6;
      }
      out += "</g>\n";
    }
    return;
  }
  // Too many to draw one by one: per class, each stretch of pixels that incidents cover is one
  // band, with how many began in it; a click shows the first of them in the table.
  for (const IncidentClass cls : kClasses) {
    std::vector<int> covered(kPlotWidth + 1, 0);  // +1 where a span begins, -1 after it ends
    std::vector<uint32_t> began(kPlotWidth, 0);
    std::vector<uint32_t> first(kPlotWidth, 0);
    for (const uint32_t a : by_start) {
      const Band& b = bands_[a];
      if (b.cls != cls || !l.band_drawn[a]) continue;
      const int p = l.pixel(b.start_us);
      ++covered[p];
      --covered[l.pixel(b.end_us) + 1];
      if (began[p]++ == 0) first[p] = number[a];
    }
    const std::string color(class_color(cls));
    const std::string name(class_name(cls));
    std::vector<int> depth(kPlotWidth);
    std::partial_sum(covered.begin(), covered.end() - 1, depth.begin());
    for (int p = 0; p < kPlotWidth;) {
      if (depth[static_cast<size_t>(p)] == 0) {
        ++p;
        continue;
      }
      const int from = p;
      uint64_t count = 0;
      uint32_t first_n = 0;
      for (; p < kPlotWidth && depth[static_cast<size_t>(p)] > 0; ++p) {
        if (began[static_cast<size_t>(p)] && !first_n) first_n = first[static_cast<size_t>(p)];
        count += began[static_cast<size_t>(p)];
      }
      const double left = kLabelWidth + from * kPlotWidth / (kPlotWidth - 1.0) - 1.5;
      const double width = (p - from) * kPlotWidth / (kPlotWidth - 1.0) + 3.0;
      out += "<g class=\"band\" data-n=\"" + std::to_string(first_n) + "\" data-class=\"" + name +
             "\"><title>" + std::to_string(count) + " " + name +
             (count == 1 ? " incident" : " incidents") + " from " +
             html_escape(incident_time(l.pixel_start(from))) + "</title><rect x=\"" + px(left) +
             "\" y=\"" + std::to_string(kTop) + "\" width=\"" + px(width) + "\" height=\"" +
             std::to_string(band_height) + "\" fill=\"" + color +
             "\" fill-opacity=\"0.18\" stroke=\"" + color + "\" stroke-opacity=\"0.6\"/></g>\n";
    }
  }
}

void Timeline::draw_marks(const Layout& l, std::string& out) const {
  std::vector<Cell> cells(l.rows * kPlotWidth);
  marks_.for_each([&](const Mark& m) {
    if (!l.axis.fence().contains(m.time_us)) return;
    Cell& c = cells[l.row_of[m.host] * kPlotWidth + static_cast<size_t>(l.pixel(m.time_us))];
    ++c.count[m.kind == MarkKind::kVerdict ? 3 + m.verdict : static_cast<size_t>(m.kind)];
    if (c.host == kNoHost) c.host = m.host;
    c.other_hosts |= c.host != m.host;
  });
  static constexpr std::string_view kNames[] = {"port down", "port up", "other fault"};
  for (size_t r = 0; r < l.rows; ++r) {
    const int y = kTop + static_cast<int>(r) * kRowHeight;
    for (int p = 0; p < kPlotWidth; ++p) {
      const Cell& c = cells[r * kPlotWidth + static_cast<size_t>(p)];
      if (c.empty()) continue;
      // The title counts everything on this row and pixel; the mark shows the most telling:
      // a down, else another fault, else the gravest verdict, else an up.
      std::string what;
      int verdict = -1;
      for (size_t k = 0; k < c.count.size(); ++k) {
        if (!c.count[k]) continue;
        if (k >= 3) verdict = static_cast<int>(k - 3);
        what += (what.empty() ? "" : ", ") + std::to_string(c.count[k]) + " " +
                (k < 3 ? std::string(kNames[k]) : "verdict " + std::string(kVerdicts[k - 3]));
        if (k < 3 && c.count[k] > 1) what += "s";
      }
      const int64_t from = l.pixel_start(p);
      const std::string title = "<title>" + html_escape(short_time(from, l.span)) + " " +
                                html_escape(hosts_[c.host].name) +
                                (c.other_hosts ? " and other hosts" : "") + ": " + what +
                                "</title>";
      const double mx = kLabelWidth + p * kPlotWidth / (kPlotWidth - 1.0);
      if (c.count[0] || (!c.count[2] && verdict < 0)) {
        const bool down = c.count[0] > 0;
        out += "<line class=\"mark " + std::string(down ? "down" : "up") + "\" x1=\"" + px(mx) +
               "\" x2=\"" + px(mx) + "\" y1=\"" + std::to_string(y + 3) + "\" y2=\"" +
               std::to_string(y + kRowHeight - 3) + "\" stroke=\"" +
               (down ? "#c0392b" : "#27ae60") + "\" stroke-width=\"2\">" + title + "</line>\n";
      } else if (c.count[2]) {
        out += "<rect class=\"mark fault\" x=\"" + px(mx - 3.5) + "\" y=\"" +
               std::to_string(y + kRowHeight / 2 - 4) +
               "\" width=\"7\" height=\"7\" fill=\"#333\" transform=\"rotate(45 " + px(mx) + " " +
               std::to_string(y + kRowHeight / 2) + ")\">" + title + "</rect>\n";
      } else {
        out += "<circle class=\"mark verdict\" cx=\"" + px(mx) + "\" cy=\"" +
               std::to_string(y + kRowHeight / 2) + "\" r=\"4\" fill=\"" +
               std::string(kVerdictColors[static_cast<size_t>(verdict)]) + "\" stroke=\"#fff\">" +
               title + "</circle>\n";
      }
    }
  }
}

void Timeline::draw_table(const std::vector<uint32_t>& number, std::string& out) const {
  std::vector<const Detail*> rows;
  for (const Detail& d : details_)
    rows.push_back(&d);
  std::sort(rows.begin(), rows.end(), [&](const Detail* a, const Detail* b) {
    return number[a->arrival] > number[b->arrival];
  });
  out +=
      "<table id=\"incidents\">\n<thead><tr><th>#</th><th>start (UTC)</th><th>duration</th>"
      "<th>class</th><th>hosts</th><th>records</th><th>evidence</th></tr></thead>\n<tbody>\n";
  for (const Detail* d : rows) {
    const Band& b = bands_[d->arrival];
    const std::string n = std::to_string(number[d->arrival]);
    std::string hosts;
    for (const auto& h : d->hosts)
      hosts += (hosts.empty() ? "" : ", ") + html_escape(h);
    if (b.hosts > d->hosts.size())
      hosts += " and " + std::to_string(b.hosts - d->hosts.size()) + " more";
    const std::string cls(class_name(b.cls));
    out += "<tr class=\"incident\" id=\"incident-" + n + "\" data-class=\"" + cls + "\"><td>" + n +
           "</td><td>" + html_escape(incident_time(b.start_us)) + "</td><td>" +
           incident_duration(time_span(b.start_us, b.end_us)) +
           "</td><td class=\"class\" style=\"color:" + std::string(class_color(b.cls)) + "\">" +
           cls + "</td><td class=\"hosts\">" + std::to_string(b.hosts) + ": " + hosts +
           "</td><td>" + std::to_string(b.records) + "</td><td class=\"evidence\">" +
           html_escape(d->evidence) + "</td></tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (bands_.size() > rows.size()) {
    out += "<p class=\"meta\" id=\"table-note\">The newest " + std::to_string(rows.size()) +
           " of " + std::to_string(bands_.size()) +
           " incidents; <code>rdma-eventctl history --incidents</code> lists every one.</p>\n";
  }
}

std::string Timeline::html(std::string_view notice) const {
  Layout l;
  l.by_name.resize(hosts_.size());
  std::iota(l.by_name.begin(), l.by_name.end(), 0u);
  std::sort(l.by_name.begin(), l.by_name.end(),
            [&](uint32_t a, uint32_t b) { return hosts_[a].name < hosts_[b].name; });
  l.per_row = hosts_.size() <= max_rows_ ? 1 : (hosts_.size() + max_rows_ - 1) / max_rows_;
  l.rows = (hosts_.size() + l.per_row - 1) / l.per_row;
  l.row_of.resize(hosts_.size());
  for (size_t i = 0; i < l.by_name.size(); ++i)
    l.row_of[l.by_name[i]] = static_cast<uint32_t>(i / l.per_row);

  // The axis: over the incidents within the fence and the marks within it.
  std::vector<uint32_t> by_start(bands_.size());
  std::iota(by_start.begin(), by_start.end(), 0u);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](uint32_t a, uint32_t b) { return bands_[a].start_us < bands_[b].start_us; });
  std::vector<int64_t> starts;
  starts.reserve(bands_.size());
  for (const Band& b : bands_)
    starts.push_back(b.start_us);
  l.axis = AxisSpan(incidents_fence(std::move(starts)));
  l.band_drawn.resize(bands_.size());
  for (const uint32_t a : by_start) {
    const Band& b = bands_[a];
    l.band_drawn[a] = l.axis.fence().contains(b.start_us) && l.axis.fence().contains(b.end_us);
    if (!l.band_drawn[a]) {
      l.outliers.push_back(a);
      continue;
    }
    l.axis.add(b.start_us);
    l.axis.add(b.end_us);
  }
  marks_.for_each([&](const Mark& m) {
    if (l.axis.add(m.time_us)) return;
    ++l.marks_outside;
    if (l.hosts_outside.size() < 5 &&
        std::find(l.hosts_outside.begin(), l.hosts_outside.end(), m.host) == l.hosts_outside.end())
      l.hosts_outside.push_back(m.host);
  });
  l.t0 = l.axis.empty() ? 0 : l.axis.first();
  l.span = l.axis.empty() ? 1 : std::max<int64_t>(1, time_span(l.t0, l.axis.last()));
  l.bottom = kTop + static_cast<int>(l.rows) * kRowHeight;
  l.height = l.bottom + kBottom;

  PageCounts counts{
      .hosts = hosts_.size(), .rows = l.rows, .per_row = l.per_row, .incidents = bands_.size()};
  std::string out = page_head(counts, notice);
  if (!l.axis.empty()) {
    out += "<div class=\"meta\">" + html_escape(incident_time(l.t0)) + " to " +
           html_escape(incident_time(l.axis.last())) + "</div>\n";
  }
  out += legend();
  out += host_search();
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
         "\" height=\"" + std::to_string(l.height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) +
         " " + std::to_string(l.height) + "\" role=\"img\" aria-label=\"timeline\">\n";
  for (size_t r = 0; r < l.rows; ++r) {
    const int y = kTop + static_cast<int>(r) * kRowHeight;
    const size_t first = r * l.per_row;
    const size_t last = std::min(l.by_name.size(), first + l.per_row) - 1;
    const std::string& first_name = hosts_[l.by_name[first]].name;
    // The names escaped, the page's own ellipsis not.
    std::string label = first_name.empty() ? "-" : html_escape(first_name);
    if (last != first) {
      label += " \u2026 " + html_escape(hosts_[l.by_name[last]].name) + " (" +
               std::to_string(last - first + 1) + ")";
    }
    out += "<g class=\"row\" id=\"row-" + std::to_string(r + 1) + "\"><rect x=\"0\" y=\"" +
           std::to_string(y) + "\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
           std::to_string(kRowHeight) + "\" fill=\"" + (r % 2 ? "#f3f3f3" : "#fcfcfc") + "\"/>";
    out += "<text class=\"host\" x=\"6\" y=\"" + std::to_string(y + 13) + "\">" + label +
           "</text></g>\n";
  }
  draw_bands(l, by_start, out);
  draw_marks(l, out);
  // The time axis: six ticks.
  for (int i = 0; i <= 5 && !l.axis.empty(); ++i) {
    const int64_t t = l.t0 + l.span / 5 * i;
    const double tx = l.x(t);
    out += "<line x1=\"" + px(tx) + "\" x2=\"" + px(tx) + "\" y1=\"" + std::to_string(l.bottom) +
           "\" y2=\"" + std::to_string(l.bottom + 4) + "\" stroke=\"#999\"/>";
    out += "<text class=\"axis\" x=\"" + px(std::min(tx, kWidth - 80.0)) + "\" y=\"" +
           std::to_string(l.bottom + 16) + "\" text-anchor=\"" + (i == 0 ? "start" : "middle") +
           "\">" + html_escape(short_time(t, l.span)) + "</text>\n";
  }
  out += "</svg>\n";

  // What is not drawn, and why.
  std::vector<uint32_t> number(bands_.size());
  for (size_t i = 0; i < by_start.size(); ++i)
    number[by_start[i]] = static_cast<uint32_t>(i + 1);
  if (!l.outliers.empty()) {
    out += "<div class=\"meta\" id=\"outliers\">" + std::to_string(l.outliers.size()) +
           (l.outliers.size() == 1 ? " incident is" : " incidents are") +
           " far from the others (a host's clock?), not drawn:<ul>";
    for (size_t i = 0; i < l.outliers.size() && i < kOutliersListed; ++i) {
      const Band& b = bands_[l.outliers[i]];
      out += "<li>#" + std::to_string(number[l.outliers[i]]) + " " +
             html_escape(incident_time(b.start_us)) + " " + std::string(class_name(b.cls)) + ": " +
             (b.first_host == kNoHost ? "-" : html_escape(hosts_[b.first_host].name)) +
             (b.hosts > 1 ? " and " + std::to_string(b.hosts - 1) + " more" : "") + "</li>";
    }
    if (l.outliers.size() > kOutliersListed)
      out += "<li>and " + std::to_string(l.outliers.size() - kOutliersListed) + " more</li>";
    out += "</ul></div>\n";
  }
  if (l.marks_outside) {
    std::string who;
    for (const uint32_t h : l.hosts_outside)
      who += (who.empty() ? "" : ", ") + html_escape(hosts_[h].name);
    out += "<p class=\"meta\" id=\"marks-outside\">" + std::to_string(l.marks_outside) +
           (l.marks_outside == 1 ? " mark" : " marks") + " outside the timeline, not drawn (of " +
           who + (l.hosts_outside.size() == 5 ? " and others" : "") + ").</p>\n";
  }
  if (!marks_.error().empty()) {
    out += "<p class=\"meta notice\" id=\"marks-lost\">" +
           (marks_.lost() ? std::to_string(marks_.lost()) + " marks" : std::string("Marks")) +
           " not drawn: " + html_escape(marks_.error()) + "</p>\n";
  }
  draw_table(number, out);
  // The hosts the search knows, in name order (their rows follow from it), with what each has.
  out += "<datalist id=\"hostnames\">";
  for (const uint32_t h : l.by_name) {
    out += "<option value=\"" + html_escape(hosts_[h].name) + "\" data-marks=\"" +
           std::to_string(hosts_[h].marks) + "\" data-incidents=\"" +
           std::to_string(hosts_[h].incidents) + "\"></option>";
  }
  out += "</datalist>\n";
  out += page_tail();
  return out;
}

}  // namespace rdma_eventd_fleet
