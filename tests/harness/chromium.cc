#include "chromium.h"

#include <chrono>
#include <sstream>

#include "process.h"
#include "temp_dir.h"

namespace rdmatest {

Browsed browse(const std::string& url, const std::vector<std::string>& extra) {
  TempDir profile("rdma-chromium");
  std::vector<std::string> argv = {"chromium",
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + profile.path(),
                                   "--enable-logging=stderr",
                                   "--v=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(url);
  const CommandResult r = run_command(argv, {}, std::chrono::seconds(120));
  Browsed b{r.exit_code(), r.out, {}};
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    if (line.find(":CONSOLE") != std::string::npos) b.console.push_back(line);
  }
  return b;
}

}  // namespace rdmatest
