// A real systemd-journald for tests, private to the test process.
//
// sd_journal_send always writes to /run/systemd/journal/socket, so the test process moves into
// its own mount namespace (the host's /run, /etc and journal stay untouched), mounts a tmpfs
// on /run, points journald at a test configuration (volatile storage, no rate limit) and
// starts it. Every process the test starts afterwards (the daemon, journalctl) inherits the
// namespace. Needs root. The first call to instance() sets it up; it lasts until the test
// process exits.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.h"
#include "temp_dir.h"

namespace rdma_eventd::test {

// How the sandbox's journald keeps entries: in /run (memory), at most 512 MiB, unless a test
// that writes more says otherwise before the first instance().
struct JournalStorage {
  std::string max_use = "512M";  // RuntimeMaxUse=; entries beyond it rotate out
  bool on_disk = false;          // the journal files in the sandbox's scratch directory (/tmp)
};

class JournalSandbox {
 public:
  static JournalSandbox& instance();
  // Before the first instance() only.
  static void set_storage(const JournalStorage& wanted);

  // The entries matching every "FIELD=value" match, oldest first, as journalctl -o json
  // prints them (after journalctl --sync, so everything sent before this call is there).
  std::vector<nlohmann::json> entries(const std::vector<std::string>& matches);

  // journalctl's own output (for -x catalog checks, say), after --sync.
  std::string journalctl(const std::vector<std::string>& args);

  // The first `count` lines of `journalctl --follow` with `args` (matches, an output format
  // that prints one line per entry): waits for the entries as journald takes them, rather than
  // asking again and again. HarnessError with what came when they do not come in time.
  std::vector<std::string> follow(const std::vector<std::string>& args, size_t count,
                                  rdmatest::Duration timeout);

  // Stops and starts journald (its socket file stays behind while stopped, as on a host).
  void stop_journald();
  void start_journald();
  // Freezes journald (SIGSTOP: it takes no more entries, writers block once its socket is
  // full) or lets it go on (SIGCONT).
  void freeze_journald(bool frozen);

  // Installs a catalog file and indexes it, visible to journalctl -x in this namespace only.
  void install_catalog(const std::string& catalog_file);

  JournalSandbox(const JournalSandbox&) = delete;
  JournalSandbox& operator=(const JournalSandbox&) = delete;

 private:
  JournalSandbox();
  ~JournalSandbox();

  rdmatest::TempDir scratch_{"rdma-journal"};
  std::unique_ptr<rdmatest::Process> journald_;
};

}  // namespace rdma_eventd::test
