// Application reports (docs/protocol.md, "report"): an application hands the daemon an
// affiliated async event that only it could read (QP, CQ, SRQ, WQ errors); the hub checks who
// it is and how often it reports, stamps what the kernel says about it, and has the daemon
// publish it as an app_report record, whose seq the reply carries.

#include <algorithm>

#include "core/clock.h"
#include "hub/hub.h"
#include "hub/subscriber.h"
#include "rdma_eventd/internal/small_file.h"

namespace rdma_eventd::daemon {
namespace {

// Reporting uids with a bucket at most: beyond it, a uid not seen for a second (whose bucket
// would be full again, so forgetting it loses nothing) is forgotten first.
constexpr size_t kMaxReportBudgets = 4096;
constexpr int64_t kBucketRefillUs = 1000000;

// /proc/PID/cgroup is one line under cgroup v2; a hybrid system has a dozen.
constexpr size_t kMaxCgroupFileBytes = 8192;

std::string device_names(const std::vector<const DeviceView*>& views) {
  std::string out;
  for (const DeviceView* d : views)
    out += (out.empty() ? "" : ", ") + d->name;
  return out.empty() ? "none" : out;
}

}  // namespace

void SubscriberHub::set_reports(const ReportsConfig& config) {
  if (config.max_per_second != reports_config_.max_per_second) report_budgets_.clear();
  reports_config_ = config;
  // The reporters' caps apply to the next connection; those connected stay, as subscribers do
  // when socket.max_subscribers is lowered.
  raise_fd_limit(wanted_fds());
}

bool SubscriberHub::take_report_token(uid_t uid) {
  auto it = report_budgets_.find(uid);
  if (it == report_budgets_.end()) {
    if (report_budgets_.size() >= kMaxReportBudgets) {
      std::erase_if(report_budgets_, [&](const auto& kv) {
        return clock_us_ - kv.second.last_us > kBucketRefillUs;
      });
    }
    if (report_budgets_.size() >= kMaxReportBudgets) return false;
    it = report_budgets_
             .emplace(uid, ReportBudget{TokenBucket(reports_config_.max_per_second, clock_us_),
                                        clock_us_})
             .first;
  }
  it->second.last_us = clock_us_;
  return it->second.bucket.take(clock_us_);
}

std::optional<RequestError> SubscriberHub::report_admission(const Subscriber& s, const Request& r) {
  const std::string op(op_name(r.op));
  if (!publish_report_) {
    return RequestError{ErrorCode::kReportDenied, "this daemon takes no reports", r.id, op};
  }
  const Peer peer{s.pid, s.uid, s.gid};
  if (auto why =
          report_refusal(reports_config_, peer, [&] { return peer_groups(s.fd.get(), peer); })) {
    ++report_stats_.denied;
    return RequestError{ErrorCode::kReportDenied, *why, r.id, op};
  }
  if (!take_report_token(s.uid)) {
    ++report_stats_.rate_limited;
    return RequestError{ErrorCode::kRateLimited,
                        "over reports.max_per_second (" +
                            std::to_string(reports_config_.max_per_second) + " for uid " +
                            std::to_string(s.uid) + "); the report was not published",
                        r.id, op};
  }
  return std::nullopt;
}

Reporter SubscriberHub::reporter_of(const Subscriber& s) const {
  // Read now, while the reporter is most likely alive: it has just sent the request. The pid is
  // the kernel's (SO_PEERCRED, in the daemon's pid namespace); comm is the process's to choose.
  Reporter who{s.pid, s.uid, s.gid, "", "", ""};
  const std::string proc = "/proc/" + std::to_string(s.pid);
  who.comm = process_name(s.pid);
  if (who.comm == "?") who.comm.clear();
  const internal::SmallFile cgroup =
      internal::read_small_file(proc + "/cgroup", kMaxCgroupFileBytes);
  if (cgroup.ok()) {
    who.cgroup = cgroup_path(cgroup.text);
    who.unit = unit_of_cgroup(who.cgroup);
  }
  return who;
}

void SubscriberHub::handle_report(Subscriber& s, const Request& r) {
  if (auto refused = report_admission(s, r)) {
    queue_error(s, *refused);
    return;
  }
  const Report& rep = r.report;
  const std::vector<const DeviceView*> views = state_.device_views();
  const auto device = std::find_if(views.begin(), views.end(),
                                   [&](const DeviceView* d) { return d->name == rep.device; });
  std::string invalid;
  if (device == views.end()) {
    invalid = "device: '" + rep.device + "' is not a device rdma-eventd watches (" +
              device_names(views) + ")";
  } else if (rep.port > (*device)->num_ports()) {
    invalid = "port: " + rep.device + " has " + std::to_string((*device)->num_ports()) + " ports";
  }
  if (!invalid.empty()) {
    ++report_stats_.invalid;
    queue_error(s, RequestError{ErrorCode::kBadReport, invalid, r.id, std::string(op_name(r.op))});
    return;
  }
  const ReportableEvent* event = reportable_event(rep.event_type);
  Record record;
  record.event = EventKind::kAppReport;
  record.event_type = rep.event_type;
  record.device = (*device)->name;
  record.node_guid = format_guid((*device)->node_guid);
  record.port = rep.port;
  record.object = std::string(event->object);
  record.object_id = rep.object_id;
  record.detail = rep.detail;
  record.reporter = reporter_of(s);
  // Published from the loop, not from here: publishing writes to every subscriber, this one
  // included, and writing goes on to its next requests while this one is being handled.
  s.report =
      std::make_unique<Subscriber::PendingReport>(Subscriber::PendingReport{std::move(record), r});
  loop_.defer([this, id = s.id] { publish_pending_report(id); });
}

void SubscriberHub::publish_pending_report(uint64_t subscriber_id) {
  const auto it = subscribers_.find(subscriber_id);
  if (it == subscribers_.end() || !it->second->report) return;
  Subscriber& s = *it->second;
  // Still set while publishing, so that writing to `s` handles none of its later requests.
  const uint64_t seq = publish_report_(std::move(s.report->record));
  ++report_stats_.accepted;
  const std::unique_ptr<Subscriber::PendingReport> done = std::move(s.report);
  if (s.closed) return;  // published all the same: the reporter need not wait for the reply
  s.out.push_control(
      std::make_shared<const std::string>(reply_line(Op::kReport, done->request, seq, nullptr)));
  handle_lines(s);  // the requests that waited for it
  s.pending_write = true;
  write(s);
}

}  // namespace rdma_eventd::daemon
