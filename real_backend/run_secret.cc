#include "real_backend/run_secret.h"

#include <sodium.h>
#include <sys/stat.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <string_view>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

void init_sodium() {
  // Idempotent and thread-safe.
  if (sodium_init() < 0) throw real_backend_error("libsodium could not be initialised");
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// crypto_kdf's contexts are exactly 8 characters: one per use of the run's key.
template <class Key>
Key derive(const run_secret& secret, const char (&context)[crypto_kdf_CONTEXTBYTES + 1]) {
  static_assert(secret_bytes == crypto_kdf_KEYBYTES);
  init_sodium();
  Key key;
  if (crypto_kdf_derive_from_key(key.bytes.data(), key.bytes.size(), 1, context,
                                 secret.bytes.data()) != 0) {
    throw real_backend_error("libsodium could not derive a key from the run's key");
  }
  return key;
}

}  // namespace

secret_key::~secret_key() { sodium_memzero(bytes.data(), bytes.size()); }

run_secret draw_run_secret() {
  init_sodium();
  run_secret secret;
  randombytes_buf(secret.bytes.data(), secret.bytes.size());
  return secret;
}

std::string to_hex(const run_secret& secret) {
  std::string text(secret.bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(text.data(), text.size(), secret.bytes.data(), secret.bytes.size());
  text.pop_back();
  return text;
}

run_secret parse_run_secret(const std::string& text, const std::string& source) {
  const std::string_view digits = trimmed(text);
  const auto refuse = [&](const std::string& why) {
    throw launch_error("launcher: " + source + " must be " + std::to_string(secret_bytes * 2) +
                       " hex digits (the run's key, e.g. from 'kvsim real --new-run-key'): " + why);
  };
  if (digits.size() != secret_bytes * 2) {
    refuse("it has " + std::to_string(digits.size()) + " character(s)");
  }
  run_secret secret;
  for (std::size_t i = 0; i < secret.bytes.size(); ++i) {
    const int high = hex_value(digits[2 * i]);
    const int low = hex_value(digits[2 * i + 1]);
    if (high < 0 || low < 0) {
      refuse("character " + std::to_string(2 * i + (high < 0 ? 1 : 2)) + " is not a hex digit");
    }
    secret.bytes[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return secret;
}

run_secret read_run_key_file(const std::string& path) {
  const std::string source = "key file " + path;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw launch_error("launcher: cannot read " + source);
  // Like ssh with its private keys: a key others can read is not this run's secret any more.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw launch_error("launcher: " + source +
                       " is open to group or others (chmod 600 it): refused");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw launch_error("launcher: cannot read " + source);
  // Far more than 64 digits and a newline is not a key file: read no further.
  std::string text(256, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  run_secret secret = parse_run_secret(text, source);
  sodium_memzero(text.data(), text.size());
  return secret;
}

run_secret resolve_run_secret(const launch_config& launch, const environment& env,
                              const std::optional<std::string>& key_file) {
  if (key_file) return read_run_key_file(*key_file);
  if (const std::optional<std::string> text = env(run_key_variable)) {
    return parse_run_secret(*text, run_key_variable);
  }
  if (launch.world_size > 1) {
    throw launch_error("launcher: a launch of " + std::to_string(launch.world_size) +
                       " ranks needs the run's key: set " + run_key_variable +
                       " (64 hex digits, the same for every rank: 'kvsim real --new-run-key' "
                       "draws one) or pass --key-file FILE");
  }
  return draw_run_secret();
}

link_key derive_link_key(const run_secret& secret) { return derive<link_key>(secret, "kvsmlink"); }

std::string derive_run_tag(const run_secret& secret) {
  const secret_key key = derive<secret_key>(secret, "kvsmname");
  constexpr std::size_t tag_bytes = 8;
  std::string text(tag_bytes * 2 + 1, '\0');
  sodium_bin2hex(text.data(), text.size(), key.bytes.data(), tag_bytes);
  text.pop_back();
  return text;
}

core::cluster_key derive_token_key(const run_secret& secret) {
  static_assert(sizeof(core::cluster_key{}.bytes) == secret_bytes);
  const secret_key key = derive<secret_key>(secret, "kvsmtokn");
  core::cluster_key out;
  out.bytes = key.bytes;
  return out;
}

}  // namespace kvsim::real
