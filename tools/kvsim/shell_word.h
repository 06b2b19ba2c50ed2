#pragma once
// A path or name as one word a user can paste into a shell: as is when it is plain, else
// single-quoted (a quote inside as '\''). For the commands kvsim prints for the user to run.
#include <string>

namespace kvsim::tools {

std::string shell_word(const std::string& text);

}  // namespace kvsim::tools
