#include "tools/kvsim/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <system_error>

#include "spec/one_line.h"
#include "sim/trace.h"
#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {
namespace {

// access(2) asks with the real ids, which is what a CLI run by its user wants; as root it
// still says no on a read-only file system.
bool may_write_in(const std::filesystem::path& dir) { return ::access(dir.c_str(), W_OK | X_OK) == 0; }

}  // namespace

void check_output_file(const std::string& flag, const std::string& path) {
  if (is_stdout(path)) return;
  if (path.empty()) throw usage_error(flag + " needs a file name (or - for standard output)");
  const std::filesystem::path file(path);
  std::error_code error;
  if (std::filesystem::is_directory(file, error)) {
    throw input_error(flag + " " + spec::echoed(path) + ": is a directory, not a file");
  }
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  if (!std::filesystem::is_directory(dir, error)) {
    throw input_error(flag + " " + spec::echoed(path) + ": the directory " + spec::echoed(dir.string()) + " does not exist");
  }
  if (std::filesystem::exists(file, error) && !std::filesystem::is_regular_file(file, error)) {
    // A device or pipe is written in place: we need write access to it, not to its directory.
    if (::access(file.c_str(), W_OK) != 0) {
      throw input_error(flag + " " + spec::echoed(path) + ": " + std::generic_category().message(errno));
    }
    return;
  }
  if (!may_write_in(dir)) {
    throw input_error(flag + " " + spec::echoed(path) + ": cannot write in " + spec::echoed(dir.string()) + " (" +
                      std::generic_category().message(errno) + ")");
  }
}

void check_trace_output(const std::string& flag, const std::string& path) {
  if (is_stdout(path)) {
    throw usage_error(flag + " takes a file: a trace is written whole to a file, not to standard output");
  }
  check_output_file(flag, path);
}

std::filesystem::path prepare_output_dir(const std::string& flag, const std::string& dir) {
  if (dir.empty()) throw usage_error(flag + " needs a directory name");
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir)) {
    throw input_error(flag + " " + spec::echoed(dir) + ": cannot create the directory" +
                      (error ? " (" + error.message() + ")" : std::string(" (a file is in the way)")));
  }
  if (!may_write_in(dir)) {
    throw input_error(flag + " " + spec::echoed(dir) + ": cannot write in the directory (" +
                      std::generic_category().message(errno) + ")");
  }
  return dir;
}

void report_outputs::check() const {
  if (json) check_output_file("--json", *json);
  if (junit) check_output_file("--junit", *junit);
  if (json && junit && is_stdout(*json) && is_stdout(*junit)) {
    throw usage_error("--json and --junit cannot both be - (standard output)");
  }
}

std::ostream& report_outputs::table_stream(std::ostream& out) const {
  return (json && is_stdout(*json)) || (junit && is_stdout(*junit)) ? std::cerr : out;
}

void write_output(const std::string& path, const std::string& text) {
  if (is_stdout(path)) {
    std::cout << text << std::flush;
    if (!std::cout) throw input_error("cannot write to standard output");
    return;
  }
  try {
    sim::write_file_atomically(path, text, "output");
  } catch (const sim::trace_error& e) {
    throw input_error(e.what());
  }
}

}  // namespace kvsim::tools
