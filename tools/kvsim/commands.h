#pragma once
// The subcommands of `kvsim`. Each takes the arguments after its name and returns the exit
// code: 0 every expectation held / no finding / replay matched, 1 a finding or an unmet
// expectation, and throws usage_error or input_error (exit 2, one line) for bad input.
#include <ostream>
#include <string>
#include <vector>

namespace kvsim::tools {

using arguments = std::vector<std::string>;

int cmd_list(const arguments& args, std::ostream& out);
int cmd_run(const arguments& args, std::ostream& out);
int cmd_explore(const arguments& args, std::ostream& out);
int cmd_replay(const arguments& args, std::ostream& out);
int cmd_shrink(const arguments& args, std::ostream& out);
int cmd_export(const arguments& args, std::ostream& out);
int cmd_demo(const arguments& args, std::ostream& out);
int cmd_check_declarations(const arguments& args, std::ostream& out);
int cmd_merge(const arguments& args, std::ostream& out);
int cmd_check(const arguments& args, std::ostream& out);

}  // namespace kvsim::tools
