#include "real_backend/wire/run_secret.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "real_backend/wire/environment_secret.h"
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
  const auto refuse = [&](const std::string& why) {
    throw launch_error("launcher: " + source + " " + why + ": refused");
  };
  // O_NONBLOCK: a FIFO put in the key file's place must not hang the open (it is refused
  // below, as anything but a regular file is).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP) refuse("is a symbolic link (name the key file itself)");
    throw launch_error("launcher: cannot read " + source + ": " + std::strerror(error));
  }
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  } closer{fd};
  // Checked on what was opened, not on the name: nothing can be swapped in between.
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    throw launch_error("launcher: cannot read " + source + ": " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) refuse("is not a regular file");
  if (info.st_uid != ::geteuid()) {
    refuse("is owned by uid " + std::to_string(info.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")");
  }
  // Like ssh with its private keys: a key others can read is not this run's secret any more.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    refuse(std::string("is open to group or others (mode ") + mode + "; chmod 600 it)");
  }
  // Far more than 64 digits and a newline is not a key file: read no further.
  std::string text(256, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      wipe(text);
      throw launch_error("launcher: cannot read " + source + ": " + std::strerror(error));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  try {
    run_secret secret = parse_run_secret(text, source);
    wipe(text);
    return secret;
  } catch (...) {
    wipe(text);
    throw;
  }
}

void wipe(std::string& text) {
  sodium_memzero(text.data(), text.size());
  text.clear();
}

std::optional<std::string> take_run_key_from_environment() {
  return take_environment_secret(run_key_variable);
}

environment with_run_key(environment env, std::optional<std::string> taken) {
  struct wiped_text {
    std::string text;
    ~wiped_text() { wipe(text); }
  };
  std::shared_ptr<const wiped_text> held;
  if (taken) {
    auto owned = std::make_shared<wiped_text>();
    owned->text.swap(*taken);  // the buffer itself moves: no copy is left behind
    held = std::move(owned);
  }
  return [env = std::move(env), held](std::string_view name) -> std::optional<std::string> {
    if (name != run_key_variable) return env(name);
    if (!held) return std::nullopt;
    return held->text;
  };
}

run_secret resolve_run_secret(const launch_config& launch, const environment& env,
                              const std::optional<std::string>& key_file) {
  if (key_file) return read_run_key_file(*key_file);
  if (std::optional<std::string> text = env(run_key_variable)) {
    try {
      run_secret secret = parse_run_secret(*text, run_key_variable);
      wipe(*text);
      return secret;
    } catch (...) {
      wipe(*text);
      throw;
    }
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
