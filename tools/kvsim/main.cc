// kvsim: command-line entry point. Later issues add explore, replay, shrink, export, bench
// and real; until the simulator lands the main job is the ledger demonstration.
#include <iostream>
#include <string_view>

#include "tools/kvsim/ledger_demo.h"
#include "tools/kvsim/sim_demo.h"

namespace {

constexpr std::string_view usage =
    "usage: kvsim <command>\n"
    "commands:\n"
    "  demo       the page-42 shape on the page ledger, then a random search on the\n"
    "             simulator's test world, historical vs production release\n"
    "  --help     this text\n"
    "  --version  the kvsim version\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "kvsim: expected exactly one command (try 'kvsim --help')\n";
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "demo") {
    kvsim::tools::run_ledger_demo(std::cout);
    return kvsim::tools::run_sim_demo(std::cout);
  }
  if (command == "--help" || command == "-h") {
    std::cout << usage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "kvsim " << KVSIM_VERSION << "\n";
    return 0;
  }
  std::cerr << "kvsim: unknown command '" << command << "' (try 'kvsim --help')\n";
  return 2;
}
