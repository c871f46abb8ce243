// rdma-eventctl report: hands rdma-eventd an affiliated async event an application read, for
// scripts and for applications that cannot link the client library (docs/protocol.md,
// "report").
#include <charconv>
#include <cstdio>

#include "commands.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kReportHelp = R"(Usage: rdma-eventctl report DEV[/PORT] EVENT [OPTIONS]

Reports an affiliated async event that an application read from its own device context,
which rdma-eventd cannot see: the daemon records it as an app_report record, with who
reported it, for its subscribers and the journal. EVENT is one of cq_err, qp_fatal,
qp_req_err, qp_access_err, path_mig_err, srq_err, wq_fatal, or its ibv_event_type number.

  rdma-eventctl report mlx5_0/1 qp_fatal --object 4660 --detail "rank 3 lost its peer"

Options:
  -o, --object N          the QP number (QP events), or the CQ, SRQ or WQ handle
  -d, --detail TEXT       what the application adds: at most 256 bytes, no control characters
  -t, --timeout DURATION  how long to wait for the daemon (default 5s)
  -q, --quiet             print nothing when the report was taken
      --socket PATH       the daemon's socket
  -h, --help              this text

Prints "reported: seq N", the record's seq. Who may report and how often:
reports.allow_users, reports.allow_groups and reports.max_per_second (rdma-eventd.json(5)).

Exit status:
  0   the daemon published the report
  64  bad command line
  69  the daemon cannot be reached, or it closed the connection
  76  the daemon refused the report (report_denied, rate_limited, bad_report, bad_request)
)";

namespace {

// "mlx5_0" or "mlx5_0/1" into the report's device and port.
void parse_target(std::string_view text, Report& r) {
  const size_t slash = text.find('/');
  r.device = std::string(text.substr(0, slash));
  if (r.device.empty()) throw UsageError{"no device in '" + std::string(text) + "'"};
  if (slash == std::string_view::npos) return;
  const std::string_view port = text.substr(slash + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), r.port);
  if (ec != std::errc() || end != port.data() + port.size() || r.port == 0) {
    throw UsageError{"bad port in '" + std::string(text) + "'"};
  }
}

int parse_event(std::string_view text) {
  if (const ReportableEvent* e = reportable_event(text)) return e->type;
  int type = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), type);
  if (ec == std::errc() && end == text.data() + text.size() && type >= 0) return type;
  throw UsageError{"'" + std::string(text) + "' is not a reportable event (see --help)"};
}

}  // namespace

int run_report(const Global& g, int argc, char** argv) {
  Global global = g;
  Report report;
  auto timeout = Client::Duration(std::chrono::seconds(5));
  bool quiet = false;
  std::vector<OptionSpec> options = {
      {"object", 'o', true,
       [&](const char* v) {
         const std::string_view s(v);
         uint32_t n = 0;
         const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
         if (ec != std::errc() || end != s.data() + s.size()) {
           throw UsageError{"--object: '" + std::string(s) + "' is not a number"};
         }
         report.object_id = n;
       }},
      {"detail", 'd', true, [&](const char* v) { report.detail = v; }},
      {"timeout", 't', true,
       [&](const char* v) {
         auto d = parse_duration(v);
         if (!d) throw UsageError{"--timeout: bad duration '" + std::string(v) + "'"};
         timeout = *d;
       }},
      flag_option("quiet", quiet, 'q'),
  };
  const auto args = parse_command_line(argc, argv, kReportHelp, global, std::move(options));
  if (!args) return kExitOk;
  if (args->size() != 2) throw UsageError{"report takes DEV[/PORT] and EVENT"};
  parse_target((*args)[0], report);
  report.event_type = parse_event((*args)[1]);

  uint64_t seq = 0;
  std::string error;
  const ClientStatus s = report_event(global.socket, report, timeout, &seq, &error);
  if (s != ClientStatus::kOk) {
    std::fprintf(stderr, "%s: %s\n", global.program.c_str(), error.c_str());
    return s == ClientStatus::kRefused || s == ClientStatus::kProtocol ? kExitProtocol
                                                                       : kExitUnavailable;
  }
  if (!quiet) std::printf("reported: seq %llu\n", static_cast<unsigned long long>(seq));
  return kExitOk;
}

}  // namespace rdma_eventctl
