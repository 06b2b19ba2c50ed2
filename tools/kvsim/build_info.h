#pragma once
// What `kvsim --version` prints beyond the version: the git commit of the build
// (cmake/build_info.cmake; "unknown" outside a git checkout, "-dirty" with local changes).
namespace kvsim::tools {

const char* build_commit();

}  // namespace kvsim::tools
