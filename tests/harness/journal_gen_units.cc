#include "journal_gen_units.h"

#include <algorithm>
#include <ctime>
#include <string_view>

namespace rdma_journal_gen {
namespace {

constexpr int64_t kMs = 1'000;
constexpr int64_t kS = 1'000'000;

enum Kind : uint8_t { kSsh, kCron, kSlurm, kKernel, kTimer, kKinds };

// Entries of each kind of burst, and how often each kind comes (per 145 bursts): logins 30 (300
// entries), cron jobs 40 (120), job steps 15 (75), kernel messages 40 (40), timers 20 (60): of
// the entries, half a login's, a fifth cron's, an eighth slurm's, a tenth systemd's timers, the
// rest the kernel's.
constexpr uint8_t kSteps[kKinds] = {10, 3, 5, 1, 3};
constexpr uint32_t kWeights[kKinds] = {30, 40, 15, 40, 20};

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9e3779b97f4a7c15ULL + b + 0x632be59bd9b4e5ddULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A burst's own numbers (a port, a duration...), the same wherever its entries are made.
uint64_t burst_hash(size_t host, uint64_t seed, uint32_t burst) {
  return mix(mix(seed, host), burst);
}

// When each step of a burst comes after its first.
int64_t step_offset(uint8_t kind, uint8_t step, uint64_t h) {
  switch (kind) {
    case kSsh: {
      constexpr int64_t kAt[] = {0, 5, 8, 12, 0, 1, 2, 6, 8, 10};
      const int64_t session = 300 * kMs + static_cast<int64_t>(h % 5000) * kMs;
      return kAt[step] * kMs + (step >= 4 ? session : 0);
    }
    case kCron:
      return step == 0 ? 0 : step == 1 ? 2 * kMs : 500 * kMs + static_cast<int64_t>(h % 3000) * kMs;
    case kSlurm:
      return step < 4 ? step * 3 * kMs : 60 * kS + static_cast<int64_t>(h % 3540) * kS;
    case kTimer:
      return step == 0 ? 0 : 200 * kMs + static_cast<int64_t>(h % 800) * kMs + (step == 2);
    default:
      return 0;
  }
}

struct Process {
  std::string_view identifier, comm, exe;
  std::string cmdline;
  uint64_t pid;
  uint32_t uid;
  std::string unit, cgroup, slice;
  bool syslog;   // _TRANSPORT=syslog (with SYSLOG_PID, SYSLOG_TIMESTAMP), else journal
  int facility;  // SYSLOG_FACILITY, or -1
};

void field(std::string& out, std::string_view key, std::string_view value) {
  out.append(key).append("=").append(value).append("\n");
}
void field(std::string& out, std::string_view key, uint64_t value) {
  field(out, key, std::to_string(value));
}

void stamp(std::string& out, int64_t t, const HostIdentity& id) {
  field(out, "__REALTIME_TIMESTAMP", static_cast<uint64_t>(t));
  field(out, "__MONOTONIC_TIMESTAMP", static_cast<uint64_t>(t + id.monotonic_offset_us));
  field(out, "_BOOT_ID", id.boot_id);
  field(out, "_MACHINE_ID", id.machine_id);
  field(out, "_HOSTNAME", id.name);
}

// A process's entry: journald's fields of it, then SYSLOG_*, PRIORITY and MESSAGE.
void process_entry(std::string& out, const Process& p, int64_t t, int priority,
                   std::string_view message) {
  field(out, "_TRANSPORT", p.syslog ? "syslog" : "journal");
  field(out, "_UID", p.uid);
  field(out, "_GID", p.uid);
  field(out, "_COMM", p.comm);
  field(out, "_EXE", p.exe);
  field(out, "_CMDLINE", p.cmdline);
  field(out, "_PID", p.pid);
  field(out, "_CAP_EFFECTIVE", p.uid == 0 ? "1ffffffffff" : "0");
  field(out, "_SYSTEMD_CGROUP", p.cgroup);
  field(out, "_SYSTEMD_UNIT", p.unit);
  field(out, "_SYSTEMD_SLICE", p.slice);
  field(out, "SYSLOG_IDENTIFIER", p.identifier);
  if (p.facility >= 0) field(out, "SYSLOG_FACILITY", static_cast<uint64_t>(p.facility));
  if (p.syslog) {
    field(out, "SYSLOG_PID", p.pid);
    const time_t seconds = static_cast<time_t>(t / kS);
    struct tm tm {};
    gmtime_r(&seconds, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%b %e %H:%M:%S ", &tm);
    field(out, "SYSLOG_TIMESTAMP", when);
  }
  field(out, "PRIORITY", static_cast<uint64_t>(priority));
  field(out, "MESSAGE", message);
}

Process systemd() {
  return {"systemd",
          "systemd",
          "/usr/lib/systemd/systemd",
          "/sbin/init",
          1,
          0,
          "init.scope",
          "/init.scope",
          "-.slice",
          false,
          3};
}
Process logind(uint64_t host_hash) {
  return {"systemd-logind",
          "systemd-logind",
          "/lib/systemd/systemd-logind",
          "/lib/systemd/systemd-logind",
          600 + host_hash % 100,
          0,
          "systemd-logind.service",
          "/system.slice/systemd-logind.service",
          "system.slice",
          false,
          4};
}

// systemd's own entry about a unit, with its message id and code location.
void systemd_entry(std::string& out, int64_t t, std::string_view unit, std::string_view message_id,
                   std::string_view message, std::string_view extra = {}) {
  process_entry(out, systemd(), t, 6, message);
  field(out, "MESSAGE_ID", message_id);
  field(out, "UNIT", unit);
  field(out, "CODE_FILE", "src/core/unit.c");
  out.append(extra);
}

void ssh_entry(std::string& out, const OtherEntry& e, uint64_t h, uint64_t host_hash, int64_t t) {
  const uint64_t session = 1 + e.burst;
  const std::string s = std::to_string(session);
  const std::string scope = "session-" + s + ".scope";
  const std::string client =
      "10.1.0." + std::to_string(2 + h % 4) + " port " + std::to_string(32768 + (h >> 8) % 28000);
  Process sshd{"sshd",
               "sshd",
               "/usr/sbin/sshd",
               "sshd: monitor [priv]",
               4000 + (host_hash + 7 * e.burst) % 4'000'000,
               0,
               "ssh.service",
               "/system.slice/ssh.service",
               "system.slice",
               true,
               4};
  if (e.step >= 4) {  // the session's processes are in its scope by then
    sshd.unit = scope;
    sshd.cgroup = "/user.slice/user-1001.slice/" + scope;
    sshd.slice = "user-1001.slice";
  }
  const auto in_session = [&] {
    field(out, "_SYSTEMD_OWNER_UID", 1001);
    field(out, "_SYSTEMD_SESSION", s);
    field(out, "_AUDIT_SESSION", s);
    field(out, "_AUDIT_LOGINUID", 1001);
  };
  switch (e.step) {
    case 0:
      process_entry(out, sshd, t, 6,
                    "Accepted publickey for monitor from " + client +
                        " ssh2: ED25519 SHA256:Vq3k9fW0bX7o1mQeZ2hY5tLrC8uJ4dNsAaPgKiTzE6c");
      break;
    case 1:
      sshd.facility = 10;
      process_entry(out, sshd, t, 6,
                    "pam_unix(sshd:session): session opened for user monitor(uid=1001) by (uid=0)");
      break;
    case 2:
      process_entry(out, logind(host_hash), t, 6, "New session " + s + " of user monitor.");
      field(out, "MESSAGE_ID", "8d45620c1a4348dbb17410da57c60c66");
      field(out, "SESSION_ID", s);
      field(out, "USER_ID", "monitor");
      field(out, "LEADER", sshd.pid);
      field(out, "CODE_FILE", "src/login/logind-session.c");
      break;
    case 3:
      systemd_entry(out, t, scope, "39f53479d3a045ac8e11786248231fbf",
                    "Started " + scope + " - Session " + s + " of User monitor.",
                    "JOB_TYPE=start\nJOB_RESULT=done\n");
      break;
    case 4:
      process_entry(out, sshd, t, 6,
                    "Received disconnect from " + client + ":11: disconnected by user");
      in_session();
      break;
    case 5:
      process_entry(out, sshd, t, 6, "Disconnected from user monitor " + client);
      in_session();
      break;
    case 6:
      sshd.facility = 10;
      process_entry(out, sshd, t, 6, "pam_unix(sshd:session): session closed for user monitor");
      in_session();
      break;
    case 7:
      systemd_entry(out, t, scope, "7ad2d189f7e94e70a38c781354912448",
                    scope + ": Deactivated successfully.");
      break;
    case 8:
      process_entry(out, logind(host_hash), t, 6,
                    "Session " + s + " logged out. Waiting for processes to exit.");
      break;
    default:
      process_entry(out, logind(host_hash), t, 6, "Removed session " + s + ".");
      field(out, "MESSAGE_ID", "3354939424b4456d9802ca8333ed424a");
      field(out, "SESSION_ID", s);
      break;
  }
}

void cron_entry(std::string& out, const OtherEntry& e, uint64_t h, uint64_t host_hash, int64_t t) {
  Process cron{"CRON",
               "cron",
               "/usr/sbin/cron",
               "/usr/sbin/CRON -f",
               5000 + (host_hash + 13 * e.burst) % 4'000'000,
               0,
               "cron.service",
               "/system.slice/cron.service",
               "system.slice",
               true,
               10};
  if (e.step == 0) {
    process_entry(out, cron, t, 6,
                  "pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)");
  } else if (e.step == 1) {
    cron.facility = 9;
    process_entry(out, cron, t, 6,
                  h % 5 == 0 ? "(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)"
                             : "(root) CMD (/usr/sbin/nhc)");
  } else {
    process_entry(out, cron, t, 6, "pam_unix(cron:session): session closed for user root");
  }
}

void slurm_entry(std::string& out, const OtherEntry& e, uint64_t h, uint64_t host_hash, int64_t t) {
  const std::string job = std::to_string(200000 + e.burst * 37 + host_hash % 37);
  Process slurmd{"slurmd",
                 "slurmd",
                 "/usr/sbin/slurmd",
                 "/usr/sbin/slurmd -D -s",
                 900 + host_hash % 100,
                 0,
                 "slurmd.service",
                 "/system.slice/slurmd.service",
                 "system.slice",
                 true,
                 3};
  switch (e.step) {
    case 0:
      process_entry(out, slurmd, t, 6,
                    "_run_prolog: run job script took usec=" + std::to_string(4000 + h % 9000));
      break;
    case 1:
      process_entry(out, slurmd, t, 6,
                    "_run_prolog: prolog with lock for job " + job + " ran for 0 seconds");
      break;
    case 2:
      process_entry(out, slurmd, t, 6,
                    "launch task StepId=" + job +
                        ".0 request from UID:1000 GID:1000 HOST:10.2.0.1 PORT:" +
                        std::to_string(40000 + h % 20000));
      break;
    case 3:
      process_entry(out, slurmd, t, 6,
                    "task/affinity: lllp_distribution: JobId=" + job +
                        " implicit auto binding: cores,one_thread, dist 8192");
      break;
    default: {
      const Process stepd{"slurmstepd",
                          "slurmstepd",
                          "/usr/sbin/slurmstepd",
                          "slurmstepd: [" + job + ".0]",
                          6000 + (host_hash + 11 * e.burst) % 4'000'000,
                          0,
                          "slurmstepd.scope",
                          "/system.slice/slurmstepd.scope/job_" + job + "/step_0/slurm",
                          "system.slice",
                          true,
                          3};
      process_entry(out, stepd, t, 6, "[" + job + ".0] done with job");
    }
  }
}

void kernel_entry(std::string& out, uint64_t h, int64_t t, const HostIdentity& id) {
  struct Message {
    int priority;
    const char* text;
    const char* device;  // a dev_printk's device, or null
  };
  static const Message kMessages[] = {
      {6,
       "perf: interrupt took too long (2503 > 2500), lowering "
       "kernel.perf_event_max_sample_rate to 79750",
       nullptr},
      {4,
       "EDAC MC1: 1 CE memory read error on CPU_SrcID#1_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 "
       "page:0x7b3c1 offset:0x0 grain:32 syndrome:0x0)",
       nullptr},
      {5, "nfs: server fs01 not responding, still trying", nullptr},
      {5, "nfs: server fs01 OK", nullptr},
      {6,
       "TCP: request_sock_TCP: Possible SYN flooding on port 6818. Sending cookies.  Check "
       "SNMP counters.",
       nullptr},
      {6,
       "a.out[31337]: segfault at 0 ip 000055d3c1a0e1b9 sp 00007ffd2c4b8e40 error 4 in "
       "a.out[55d3c1a0e000+1000]",
       nullptr},
      {6,
       "mlx5_core 0000:3b:00.0: mlx5_pcie_event:301:(pid 1234): PCIe slot advertised "
       "sufficient power (75W).",
       "0000:3b:00.0"},
  };
  const Message& m = kMessages[h % (sizeof kMessages / sizeof kMessages[0])];
  field(out, "_TRANSPORT", "kernel");
  field(out, "SYSLOG_FACILITY", uint64_t{0});
  field(out, "SYSLOG_IDENTIFIER", "kernel");
  field(out, "_SOURCE_MONOTONIC_TIMESTAMP",
        static_cast<uint64_t>(t + id.monotonic_offset_us - 300 - static_cast<int64_t>(h % 500)));
  if (m.device) {
    field(out, "_KERNEL_SUBSYSTEM", "pci");
    field(out, "_KERNEL_DEVICE", std::string("+pci:") + m.device);
    field(out, "_UDEV_SYSNAME", m.device);
  }
  field(out, "PRIORITY", static_cast<uint64_t>(m.priority));
  field(out, "MESSAGE", m.text);
}

void timer_entry(std::string& out, const OtherEntry& e, uint64_t h, int64_t t) {
  static const char* const kServices[][2] = {
      {"sysstat-collect.service", "system activity accounting tool"},
      {"logrotate.service", "Rotate log files"},
      {"man-db.service", "Daily man-db regeneration"},
      {"apt-daily.service", "Daily apt download activities"}};
  const auto& s = kServices[h % 8 < 5 ? 0 : 1 + h % 3];
  const std::string unit = s[0];
  if (e.step == 0) {
    systemd_entry(out, t, unit, "7d4958e842da4a758f6c1cdc7b36dcc5",
                  "Starting " + unit + " - " + s[1] + "...", "JOB_TYPE=start\n");
  } else if (e.step == 1) {
    systemd_entry(out, t, unit, "7ad2d189f7e94e70a38c781354912448",
                  unit + ": Deactivated successfully.");
  } else {
    systemd_entry(out, t, unit, "39f53479d3a045ac8e11786248231fbf",
                  "Finished " + unit + " - " + s[1] + ".", "JOB_TYPE=start\nJOB_RESULT=done\n");
  }
}

}  // namespace

std::vector<OtherEntry> plan_other_units(size_t host, uint64_t seed, size_t count, int64_t from_us,
                                         int64_t to_us) {
  // The bursts first (kind, start), then numbered in time order (session and job numbers grow
  // with time, as a host's do), then their entries.
  struct Burst {
    int64_t start;
    uint8_t kind;
  };
  std::vector<Burst> bursts;
  uint64_t state = mix(seed ^ 0x07e4, host);
  size_t planned = 0;
  const uint64_t span = static_cast<uint64_t>(std::max<int64_t>(1, to_us - from_us));
  while (planned < count) {
    state = mix(state, bursts.size());
    uint32_t pick = static_cast<uint32_t>(state % 145);
    uint8_t kind = 0;
    while (pick >= kWeights[kind])
      pick -= kWeights[kind++];
    bursts.push_back({from_us + static_cast<int64_t>((state >> 8) % span), kind});
    planned += kSteps[kind];
  }
  std::sort(bursts.begin(), bursts.end(),
            [](const Burst& a, const Burst& b) { return a.start < b.start; });
  std::vector<OtherEntry> entries;
  entries.reserve(planned);
  for (uint32_t b = 0; b < bursts.size(); ++b) {
    const uint64_t h = burst_hash(host, seed, b);
    for (uint8_t step = 0; step < kSteps[bursts[b].kind]; ++step) {
      // A burst that would run past the end is cut there (its last steps at the end).
      const int64_t t =
          std::min(bursts[b].start + step_offset(bursts[b].kind, step, h), to_us - 1 + step);
      entries.push_back({t, b, bursts[b].kind, step});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const OtherEntry& a, const OtherEntry& b) {
    return a.time_us != b.time_us ? a.time_us < b.time_us
           : a.burst != b.burst   ? a.burst < b.burst
                                  : a.step < b.step;
  });
  // Exactly `count`: the last entries in time left out.
  entries.resize(count);
  return entries;
}

std::string other_unit_entry(const OtherEntry& e, const HostIdentity& id, size_t host,
                             uint64_t seed) {
  std::string out;
  out.reserve(900);
  stamp(out, e.time_us, id);
  const uint64_t h = burst_hash(host, seed, e.burst);
  const uint64_t host_hash = mix(seed, host);
  switch (e.kind) {
    case kSsh:
      ssh_entry(out, e, h, host_hash, e.time_us);
      break;
    case kCron:
      cron_entry(out, e, h, host_hash, e.time_us);
      break;
    case kSlurm:
      slurm_entry(out, e, h, host_hash, e.time_us);
      break;
    case kKernel:
      kernel_entry(out, h, e.time_us, id);
      break;
    default:
      timer_entry(out, e, h, e.time_us);
  }
  out += "\n";
  return out;
}

}  // namespace rdma_journal_gen
