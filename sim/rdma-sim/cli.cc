// Parsing the rdma-sim command line: global flags, the command, its options; then the command
// table (cli_commands.cc) runs it.
#include "cli.h"

#include <cstdio>
#include <cstring>
#include <functional>

#include "cli_commands.h"

namespace rdmasim::cli {

using nlohmann::json;

namespace {

const Spec* find_spec(const std::string& name) {
  for (const Spec& s : specs())
    if (s.name == name) return &s;
  return nullptr;
}

// The commands named by two words ("port down", "counter add").
bool is_command_group(const std::string& word) {
  return word == "port" || word == "gid" || word == "module" || word == "counter" ||
         word == "devlink" || word == "rdma-netlink";
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v)
    if (x == s) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  Global g;
  std::vector<std::string> words;
  std::vector<std::string> trailing;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      trailing.assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--json") {
      g.json = true;
    } else if (arg == "--dir" || arg.rfind("--dir=", 0) == 0) {
      if (arg == "--dir" && i + 1 >= argc) {
        std::fprintf(stderr, "rdma-sim: --dir needs a directory\n");
        return kExitUsage;
      }
      g.dir = arg == "--dir" ? std::string(argv[++i]) : arg.substr(6);
    } else if (arg == "-h" || arg == "--help") {
      help = true;
    } else {
      words.push_back(arg);
    }
  }
  if (words.empty() || words[0] == "help") {
    if (words.size() > 1) {
      std::string name = words[1];
      if (words.size() > 2 && is_command_group(name)) name += " " + words[2];
      if (!print_command_help(name, stdout)) {
        std::fprintf(stderr, "rdma-sim: no command \"%s\"\n", name.c_str());
        return kExitUsage;
      }
      return kExitOk;
    }
    print_usage(help || !words.empty() ? stdout : stderr);
    return help || !words.empty() ? kExitOk : kExitUsage;
  }

  Args a;
  size_t next = 1;
  a.command = words[0];
  if (is_command_group(a.command) && words.size() > 1) a.command += " " + words[next++];
  const Spec* spec = find_spec(a.command);
  if (help) {
    if (!print_command_help(spec ? a.command : words[0], stdout)) print_usage(stdout);
    return kExitOk;
  }
  if (!spec) {
    std::fprintf(stderr, "rdma-sim: unknown command \"%s\" (see rdma-sim --help)\n",
                 a.command.c_str());
    return kExitUsage;
  }
  try {
    for (size_t i = next; i < words.size(); ++i) {
      std::string w = words[i];
      if (w == "-t") w = "--topology";
      if (w.size() > 2 && w.rfind("--", 0) == 0) {
        std::string value;
        const size_t eq = w.find('=');
        if (eq != std::string::npos) value = w.substr(eq + 1), w = w.substr(0, eq);
        if (contains(spec->flag_options, w) && eq == std::string::npos) {
          a.options[w] = "";
        } else if (contains(spec->value_options, w)) {
          if (eq == std::string::npos) {
            if (i + 1 >= words.size()) throw UsageError(w + " needs a value");
            value = words[++i];
          }
          a.options[w] = value;
        } else {
          throw UsageError("unknown option " + w + " for " + a.command);
        }
      } else {
        a.positional.push_back(w);
      }
    }
    a.trailing = trailing;
    if (a.positional.size() < spec->min_pos || a.positional.size() > spec->max_pos)
      throw UsageError("wrong number of arguments");
    if (!trailing.empty() && a.command != "run") throw UsageError("unexpected \"--\"");
    return spec->run(g, a);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "rdma-sim: %s: %s (usage: %s)\n", a.command.c_str(), e.what(),
                 command_usage(a.command).c_str());
    return kExitUsage;
  } catch (const NoSimulator& e) {
    if (g.json) std::printf("%s\n", json({{"ok", false}, {"error", e.what()}}).dump().c_str());
    std::fprintf(stderr, "rdma-sim: %s\n", e.what());
    return kExitNoSimulator;
  } catch (const std::exception& e) {
    if (g.json) std::printf("%s\n", json({{"ok", false}, {"error", e.what()}}).dump().c_str());
    std::fprintf(stderr, "rdma-sim: %s\n", e.what());
    return kExitFailed;
  }
}

}  // namespace rdmasim::cli
