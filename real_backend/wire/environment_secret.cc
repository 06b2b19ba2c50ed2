#include "real_backend/wire/environment_secret.h"

#include <sodium.h>
#include <unistd.h>  // environ (_GNU_SOURCE)

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace kvsim::real {
namespace {

// Where the environment the process was started with lies (/proc/self/stat's env_start and
// env_end, fields 50 and 51); empty when it cannot be read.
struct address_range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  bool holds(const char* p) const {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return a >= begin && a < end;
  }
};

address_range initial_environment() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: count from its closing one.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  address_range range;
  for (int n = 3; n <= 51 && fields >> field; ++n) {
    if (n == 50) range.begin = std::strtoull(field.c_str(), nullptr, 10);
    if (n == 51) range.end = std::strtoull(field.c_str(), nullptr, 10);
  }
  return range.begin < range.end ? range : address_range{};
}

}  // namespace

std::optional<std::string> take_environment_secret(const char* name) {
  const std::size_t name_bytes = std::strlen(name);
  std::vector<char*> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, name, name_bytes) == 0 && (*e)[name_bytes] == '=') entries.push_back(*e);
  }
  if (entries.empty()) return std::nullopt;
  std::string value(entries.front() + name_bytes + 1);
  ::unsetenv(name);  // every entry of that name
  // An entry set by setenv lives in the C library's heap, which may keep it for reuse: only
  // the kernel's copy, the one /proc shows, is overwritten.
  const address_range initial = initial_environment();
  for (char* entry : entries) {
    if (initial.holds(entry)) sodium_memzero(entry, std::strlen(entry));
  }
  return value;
}

}  // namespace kvsim::real
