#include "incidents_page_text.h"

#include "incidents_html.h"
#include "rdma_eventd/internal/enum_names.h"

namespace rdma_eventd_fleet {
namespace {

const char* const kStyle = R"(<style>
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px}
.meta{color:#555;margin-bottom:8px}
.meta ul{margin:4px 0}
.notice{color:#a93226;font-weight:600}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
.search{margin:8px 0}
.search input{font:inherit;width:22em;padding:2px 4px}
.search output{margin-left:10px;color:#333}
svg{display:block;border:1px solid #ddd;background:#fcfcfc}
svg text{font-size:11px;fill:#333}
svg .host{font-family:monospace}
svg .axis{fill:#777}
svg .band{cursor:pointer}
svg .band-label{font-weight:600}
svg .row.found rect{fill:#ffe98a}
table{border-collapse:collapse;margin-top:14px;width:100%}
th,td{border-bottom:1px solid #e5e5e5;padding:4px 8px;text-align:left;vertical-align:top}
td:nth-child(-n+4){white-space:nowrap}
th{background:#f4f4f4}
td.class{font-weight:600}
tr.picked{background:#fff6d5}
</style>
)";

// The summary, the bands that show their incident in the table, the host search (also from
// #host=NAME), and the time the script ended (data-ready, in ms from the page's start: what
// bench/incidents_page.sh reads).
const char* const kScript = R"(<script>
(function () {
  var body = document.body;
  var incidents = Number(body.dataset.incidents), perRow = Number(body.dataset.perRow);
  var rows = document.querySelectorAll('svg .row');
  document.getElementById('summary').textContent =
      incidents + (incidents === 1 ? ' incident' : ' incidents') + ', ' +
      body.dataset.hosts + ' hosts in ' + rows.length + ' rows';
  var table = document.querySelectorAll('tr.incident');
  document.querySelectorAll('svg .band').forEach(function (band) {
    band.addEventListener('click', function () {
      var row = document.getElementById('incident-' + band.dataset.n);
      table.forEach(function (r) { r.classList.remove('picked'); });
      if (!row) return;
      row.classList.add('picked');
      row.scrollIntoView({block: 'nearest'});
    });
  });
  var options = document.querySelectorAll('#hostnames option');
  var names = Array.prototype.map.call(options, function (o) { return o.value; });
  var input = document.getElementById('find'), found = document.getElementById('found');
  function find(name) {
    rows.forEach(function (r) { r.classList.remove('found'); });
    var i = names.indexOf(name);
    if (i < 0) {
      found.textContent = name ? 'no host ' + name + ' on this page' : '';
      return;
    }
    var r = Math.floor(i / perRow), o = options[i].dataset;
    rows[r].classList.add('found');
    found.textContent = name + ': row ' + (r + 1) + ' of ' + rows.length + ', ' +
        o.marks + (o.marks === '1' ? ' mark, ' : ' marks, ') +
        o.incidents + (o.incidents === '1' ? ' incident' : ' incidents');
    rows[r].scrollIntoView({block: 'center'});
  }
  input.addEventListener('change', function () { find(input.value); });
  function fromAddress() {
    var m = /^#host=(.*)$/.exec(location.hash);
    if (!m) return;
    try { input.value = decodeURIComponent(m[1]); } catch (e) { input.value = m[1]; }
    find(input.value);
  }
  window.addEventListener('hashchange', fromAddress);
  fromAddress();
  body.dataset.ready = String(Math.round(performance.now()));
})();
</script>
)";

}  // namespace

std::string_view class_color(IncidentClass c) {
  // In IncidentClass's order: fabric, host, port, sm, application.
  static constexpr std::string_view kColors[] = {"#c0392b", "#8e44ad", "#d68910", "#16a085",
                                                 "#2471a3"};
  return rdma_eventd::internal::enum_name(kColors, c, "#555");
}

std::string page_head(const PageCounts& counts, std::string_view notice) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>rdma-eventd: incidents</title>\n";
  out += kStyle;
  out += "</head>\n<body data-hosts=\"" + std::to_string(counts.hosts) + "\" data-rows=\"" +
         std::to_string(counts.rows) + "\" data-per-row=\"" + std::to_string(counts.per_row) +
         "\" data-incidents=\"" + std::to_string(counts.incidents) + "\">\n";
  out += "<h1>rdma-eventd: incidents</h1>\n";
  if (!notice.empty()) out += "<p class=\"notice\" id=\"notice\">" + html_escape(notice) + "</p>\n";
  out += "<div class=\"meta\"><span id=\"summary\"></span></div>\n";
  return out;
}

std::string legend() {
  std::string out = "<div class=\"legend\">";
  for (const auto c : {IncidentClass::kFabric, IncidentClass::kHost, IncidentClass::kPort,
                       IncidentClass::kSm, IncidentClass::kApplication}) {
    out += "<span><i style=\"background:" + std::string(class_color(c)) + ";opacity:.5\"></i>" +
           std::string(class_name(c)) + "</span>";
  }
  out +=
      "<span><i style=\"background:#c0392b\"></i>port down</span>"
      "<span><i style=\"background:#27ae60\"></i>port up</span>"
      "<span><i style=\"background:#e67e22;border-radius:5px\"></i>verdict</span>"
      "<span><i style=\"background:#333;transform:rotate(45deg)\"></i>other fault</span>"
      "<span>one mark per row and pixel: its title counts them</span>";
  return out + "</div>\n";
}

std::string host_search() {
  return "<div class=\"search\"><label>Find a host: <input id=\"find\" list=\"hostnames\" "
         "autocomplete=\"off\" spellcheck=\"false\" placeholder=\"name, as shown\"></label>"
         "<output id=\"found\"></output></div>\n";
}

std::string page_tail() {
  return std::string(kScript) + "</body>\n</html>\n";
}

}  // namespace rdma_eventd_fleet
