#pragma once
// The files a command writes (--json, --junit, --out, -o, --trace): checked before any work
// starts, so a typo in a path costs nothing, and written whole or not at all.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

namespace kvsim::tools {

// "-" names standard output wherever a command takes an output FILE.
inline bool is_stdout(const std::string& path) { return path == "-"; }

// Throws input_error (one line naming `flag` and the path) unless `path` can be written: "-";
// or not a directory, in a directory that exists and that we may write to (a regular file
// there is replaced, a device or pipe written through).
void check_output_file(const std::string& flag, const std::string& path);

// As check_output_file, for a trace: it is written atomically to a file, never to "-".
void check_trace_output(const std::string& flag, const std::string& path);

// Creates `dir` (and its parents) and checks we may write in it; input_error otherwise.
std::filesystem::path prepare_output_dir(const std::string& flag, const std::string& dir);

// A report's --json and --junit files (explore, merge), checked up front; at most one of them
// may be "-", and then the table goes to standard error so standard output holds the report.
struct report_outputs {
  std::optional<std::string> json;
  std::optional<std::string> junit;

  // Reads and checks both flags of `flags` (a cli_args).
  template <typename Flags>
  static report_outputs checked(const Flags& flags) {
    report_outputs outputs{flags.value("--json"), flags.value("--junit")};
    outputs.check();
    return outputs;
  }
  // Where the table goes: `out`, or standard error when a report goes to standard output.
  std::ostream& table_stream(std::ostream& out) const;

 private:
  void check() const;
};

// Writes `text` to `path`: standard output for "-", else atomically (sim::write_file_atomically:
// temp file + rename over a regular file, in place for a device or pipe). input_error on
// failure, naming the file and the system's reason ("No space left on device").
void write_output(const std::string& path, const std::string& text);

}  // namespace kvsim::tools
