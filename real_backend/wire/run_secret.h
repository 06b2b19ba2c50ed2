#pragma once
// The secret of one run of the real backend: 32 random bytes that every rank of the run
// holds and nobody else does. The control plane's links prove knowledge of it at their hello
// (link_auth.h); a deployment's abort tokens may take their cluster key from it. It is never
// a constant in the source: whoever reads the code must learn nothing that lets them in.
//
// Where it comes from:
//   - a multi-process launch (WORLD_SIZE or SLURM_NTASKS above 1): the launcher's
//     environment, KVSIM_RUN_KEY as 64 hex digits, or a key file (`--key-file FILE`, the same
//     64 hex digits, readable by its owner only); the key file wins when both are given. The
//     launcher draws it once (`kvsim real --new-run-key`, libsodium's CSPRNG) and hands it to
//     every rank it starts. Neither present, or malformed: one launch_error line.
//   - one process: drawn afresh for the run.
// Error lines never show the key's characters, only where it came from and what is wrong.
//
// Where the key goes: nowhere it need not. KVSIM_RUN_KEY is taken out of the process's
// environment as the command starts (take_run_key_from_environment), before any thread or
// child exists: unset, and its characters overwritten where the kernel keeps the environment
// the process was started with (what /proc/PID/environ shows), so that no child inherits it
// and no reader of /proc finds it. Every hex copy is wiped once parsed; a --ranks N parent
// hands its children a fresh key of their own the same way, which they take out likewise.
//
// Each use derives its own key from the run's (libsodium's crypto_kdf, one context per use),
// so that a key that leaks from one use opens nothing of another.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/abort_token.h"
#include "real_backend/launch/launcher.h"

namespace kvsim::real {

inline constexpr std::size_t secret_bytes = 32;
inline constexpr const char* run_key_variable = "KVSIM_RUN_KEY";

// 32 secret bytes, wiped (sodium_memzero) when destroyed.
struct secret_key {
  std::array<std::uint8_t, secret_bytes> bytes{};

  secret_key() = default;
  secret_key(const secret_key&) = default;
  secret_key& operator=(const secret_key&) = default;
  ~secret_key();
};

struct run_secret : secret_key {};  // the run's own key
struct link_key : secret_key {};    // what the control plane's links prove they know

run_secret draw_run_secret();  // libsodium's CSPRNG
std::string to_hex(const run_secret& secret);
// 64 hex digits (either case; surrounding whitespace ignored). `source` names where the text
// came from in the error line ("KVSIM_RUN_KEY", "key file /x").
run_secret parse_run_secret(const std::string& text, const std::string& source);
// The file's 64 hex digits. Opened without following a symbolic link (O_NOFOLLOW: the last
// component of the path), then checked on the open descriptor, so that nothing can be
// swapped in between: refused, one launch_error line naming the file and what is wrong,
// unless it is a regular file owned by this process's user and closed to group and others.
run_secret read_run_key_file(const std::string& path);

// Overwrites `text` (sodium_memzero) and empties it: a hex copy of a key, once used.
void wipe(std::string& text);

// KVSIM_RUN_KEY as this process was started with it, taken out of the environment (above);
// empty when it was not set. The caller wipes it once used.
std::optional<std::string> take_run_key_from_environment();
// `env` with KVSIM_RUN_KEY answered from `taken` (a key taken out of the environment) rather
// than from the environment itself; every lookup a copy, which resolve_run_secret wipes.
// `taken` is wiped when the last copy of the environment returned goes.
environment with_run_key(environment env, std::optional<std::string> taken);

// The run's secret for this launch (see above); `key_file` is --key-file's value.
run_secret resolve_run_secret(const launch_config& launch, const environment& env,
                              const std::optional<std::string>& key_file);

link_key derive_link_key(const run_secret& secret);
// 16 hex digits of a key derived for naming (its own context): what belongs to one run on a
// machine (launched ranks' shared memory, launched_region.h) is named by it, and the name
// tells nothing of the run's key.
std::string derive_run_tag(const run_secret& secret);
core::cluster_key derive_token_key(const run_secret& secret);

}  // namespace kvsim::real
