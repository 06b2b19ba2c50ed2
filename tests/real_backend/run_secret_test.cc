// The run's key: drawn at random, never a constant; a launch of several ranks takes it from
// KVSIM_RUN_KEY or a key file and refuses to start without it, with one line that never shows
// the key; each use gets a key of its own derived from it.
#include "real_backend/wire/run_secret.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "real_backend/errors.h"
#include "real_backend/real_command.h"

namespace kvsim::real::run_secret_test {
namespace {

constexpr const char* some_key = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

environment vars(const std::map<std::string, std::string>& values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    const auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

launch_config ranks(std::uint32_t world_size) {
  launch_config config;
  config.world_size = world_size;
  return config;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const launch_error& e) {
    return e.what();
  }
  return "no error";
}

std::string key_file(const std::string& name, const std::string& text, mode_t mode) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("kvsim_run_secret_" + name)).string();
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(RunSecret, DrawnAtRandomAndReadBackFromHex) {
  const run_secret a = draw_run_secret();
  const run_secret b = draw_run_secret();
  EXPECT_NE(a.bytes, b.bytes);
  EXPECT_EQ(to_hex(a).size(), 64u);
  EXPECT_EQ(parse_run_secret(to_hex(a), "KVSIM_RUN_KEY").bytes, a.bytes);
  EXPECT_EQ(parse_run_secret(std::string(some_key) + "\n", "x").bytes[31], 0xff);
}

TEST(RunSecret, AMultiProcessLaunchNeedsTheKeyAndSaysHowToGetOne) {
  EXPECT_EQ(error_of([] { (void)resolve_run_secret(ranks(4), vars({}), std::nullopt); }),
            "launcher: a launch of 4 ranks needs the run's key: set KVSIM_RUN_KEY (64 hex "
            "digits, the same for every rank: 'kvsim real --new-run-key' draws one) or pass "
            "--key-file FILE");
  // One process draws its own.
  const run_secret alone = resolve_run_secret(ranks(1), vars({}), std::nullopt);
  EXPECT_NE(alone.bytes, run_secret{}.bytes);
  EXPECT_EQ(resolve_run_secret(ranks(4), vars({{"KVSIM_RUN_KEY", some_key}}), std::nullopt).bytes,
            parse_run_secret(some_key, "x").bytes);
}

TEST(RunSecret, AMalformedKeyIsOneLineThatDoesNotShowIt) {
  const std::string secretish = std::string(some_key).substr(0, 62) + "zz";
  const std::string line = error_of([&] {
    (void)resolve_run_secret(ranks(2), vars({{"KVSIM_RUN_KEY", secretish}}), std::nullopt);
  });
  EXPECT_EQ(line,
            "launcher: KVSIM_RUN_KEY must be 64 hex digits (the run's key, e.g. from 'kvsim "
            "real --new-run-key'): character 63 is not a hex digit");
  EXPECT_EQ(line.find("00112233"), std::string::npos);
  EXPECT_EQ(error_of([] { (void)parse_run_secret("abc", "KVSIM_RUN_KEY"); }),
            "launcher: KVSIM_RUN_KEY must be 64 hex digits (the run's key, e.g. from 'kvsim "
            "real --new-run-key'): it has 3 character(s)");
}

TEST(RunSecret, AKeyFileWinsAndMustBeTheOwnersAlone) {
  const std::string good = key_file("good", std::string(some_key) + "\n", 0600);
  EXPECT_EQ(resolve_run_secret(ranks(2), vars({{"KVSIM_RUN_KEY", "not used"}}), good).bytes,
            parse_run_secret(some_key, "x").bytes);
  const std::string open = key_file("open", some_key, 0644);
  EXPECT_EQ(error_of([&] { (void)read_run_key_file(open); }),
            "launcher: key file " + open +
                " is open to group or others (mode 0644; chmod 600 it): refused");
  EXPECT_EQ(error_of([] { (void)read_run_key_file("/nonexistent/kvsim.key"); }),
            "launcher: cannot read key file /nonexistent/kvsim.key: No such file or directory");
  std::filesystem::remove(good);
  std::filesystem::remove(open);
}

// The key file is opened without following a symbolic link and checked on what was opened:
// a regular file, this user's, closed to group and others. Each refusal is one line naming
// the file and what is wrong with it, and never hangs (a FIFO in its place).
TEST(RunSecret, AKeyFileIsRefusedUnlessItIsARegularFileOfThisUsersAlone) {
  const std::string good = key_file("alone", some_key, 0600);
  EXPECT_EQ(read_run_key_file(good).bytes, parse_run_secret(some_key, "x").bytes);

  const std::string link = good + ".link";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(good, link);
  EXPECT_EQ(
      error_of([&] { (void)read_run_key_file(link); }),
      "launcher: key file " + link + " is a symbolic link (name the key file itself): refused");

  for (const mode_t mode : {0640, 0604, 0660, 0700 | 0001}) {
    const std::string open = key_file("open", some_key, mode);
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode));
    EXPECT_EQ(error_of([&] { (void)read_run_key_file(open); }),
              "launcher: key file " + open + " is open to group or others (mode " + text +
                  "; chmod 600 it): refused");
    std::filesystem::remove(open);
  }

  const std::string directory = good + ".d";
  std::filesystem::create_directories(directory);
  ::chmod(directory.c_str(), 0700);
  EXPECT_EQ(error_of([&] { (void)read_run_key_file(directory); }),
            "launcher: key file " + directory + " is not a regular file: refused");

  const std::string fifo = good + ".fifo";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { (void)read_run_key_file(fifo); }),
            "launcher: key file " + fifo + " is not a regular file: refused");

  for (const std::string& path : {good, link, directory, fifo}) std::filesystem::remove(path);
}

// Another user's file, however closed, is not this run's key: whoever owns it can change it.
// Only root can make a file another user's, so elsewhere there is nothing to try.
TEST(RunSecret, AKeyFileOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  const std::string theirs = key_file("theirs", some_key, 0600);
  constexpr uid_t nobody = 65534;
  ASSERT_EQ(::chown(theirs.c_str(), nobody, nobody), 0);
  EXPECT_EQ(error_of([&] { (void)read_run_key_file(theirs); }),
            "launcher: key file " + theirs +
                " is owned by uid 65534, not by this user (uid 0): "
                "refused");
  std::filesystem::remove(theirs);
}

// The command takes KVSIM_RUN_KEY out of the environment before anything else, whatever it
// is asked to do: no child it starts inherits it.
TEST(RunSecret, TheCommandTakesTheKeyOutOfTheEnvironment) {
  ::setenv("KVSIM_RUN_KEY", some_key, 1);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_real_command({"--help"}, out, err), 0);
  EXPECT_EQ(std::getenv("KVSIM_RUN_KEY"), nullptr);
  // Taken, not lost: the command still reads it (TheNcclCheckRefusesAMultiRankLaunch...,
  // below, is refused for what the taken key says).
}

TEST(RunSecret, EachUseDerivesAKeyOfItsOwn) {
  const run_secret secret = draw_run_secret();
  const link_key link = derive_link_key(secret);
  const core::cluster_key tokens = derive_token_key(secret);
  EXPECT_NE(link.bytes, secret.bytes);
  EXPECT_NE(tokens.bytes, secret.bytes);
  EXPECT_NE(link.bytes, tokens.bytes);
  EXPECT_EQ(derive_link_key(secret).bytes, link.bytes);  // the same on every rank
}

// The command, before any device is touched: a launch of two ranks without the key stops at
// once with that one line (exit 2), and --new-run-key prints a fresh key.
TEST(RunSecret, TheNcclCheckRefusesAMultiRankLaunchWithoutTheKey) {
  ::setenv("RANK", "1", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::unsetenv("KVSIM_RUN_KEY");
  std::ostringstream out;
  std::ostringstream err;
  const int status = run_real_command({"--nccl-check"}, out, err);
  ::setenv("KVSIM_RUN_KEY", "0123", 1);
  std::ostringstream out2;
  std::ostringstream err2;
  const int malformed = run_real_command({"--nccl-check"}, out2, err2);
  ::unsetenv("KVSIM_RUN_KEY");
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("MASTER_ADDR");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err.str(),
            "kvsim real: launcher: a launch of 2 ranks needs the run's key: set KVSIM_RUN_KEY (64 "
            "hex digits, the same for every rank: 'kvsim real --new-run-key' draws one) or pass "
            "--key-file FILE\n");
  EXPECT_EQ(malformed, 2);
  EXPECT_EQ(err2.str(),
            "kvsim real: launcher: KVSIM_RUN_KEY must be 64 hex digits (the run's key, e.g. from "
            "'kvsim real --new-run-key'): it has 4 character(s)\n");

  std::ostringstream fresh;
  std::ostringstream none;
  EXPECT_EQ(run_real_command({"--new-run-key"}, fresh, none), 0);
  EXPECT_EQ(fresh.str().size(), 65u);
  EXPECT_NO_THROW((void)parse_run_secret(fresh.str(), "--new-run-key"));
}

}  // namespace
}  // namespace kvsim::real::run_secret_test
