// Headless Chromium (Debian's chromium) on a page: the DOM after its script ran, or a
// screenshot, and what the page logged to its console.
#pragma once

#include <string>
#include <vector>

namespace rdmatest {

struct Browsed {
  int code;
  std::string dom;                   // with --dump-dom
  std::vector<std::string> console;  // "CONSOLE" lines of Chromium's log
};

// Loads `url` (a file:// address, a #fragment allowed) with `extra` arguments (--dump-dom,
// --screenshot=FILE ...) in a profile of its own, no network, within two minutes.
Browsed browse(const std::string& url, const std::vector<std::string>& extra);

}  // namespace rdmatest
