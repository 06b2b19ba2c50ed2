// What a rank that serves the script's steps takes from the step link (script_request.h,
// transfer_steps.h): exactly the protocol's requests, and only indexes that name a request
// or gate of the scenario. Over the control plane the sender is authenticated; what it says
// is checked here before anything is indexed with it.
#include "real_backend/scripts/script_request.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "real_backend/errors.h"
#include "real_backend/scripts/transfer_steps.h"
#include "tests/real_backend/catalogue_lookup.h"

namespace kvsim::real::script_request_test {
namespace {

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const real_backend_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ScriptRequest, TheProtocolsRequestsParse) {
  const script_request ask = parse_script_request("ask 17 prealloc_and_publish 1");
  EXPECT_EQ(ask.verb, "ask");
  EXPECT_EQ(ask.id, 17u);
  EXPECT_EQ(ask.step, transfer_step::prealloc_and_publish);
  EXPECT_EQ(ask.r, 1u);
  const script_request watch = parse_script_request("watch 18446744073709551615 over 4294967295");
  EXPECT_EQ(watch.id, 18446744073709551615ULL);
  EXPECT_EQ(watch.r, 4294967295u);
  for (const char* verb : {"cancel", "findings", "events", "stop"}) {
    const script_request bare = parse_script_request(std::string(verb) + " 3");
    EXPECT_EQ(bare.verb, verb);
    EXPECT_EQ(bare.id, 3u);
  }
}

TEST(ScriptRequest, AnythingElseIsRefusedWithTheLine) {
  for (const std::string line :
       {"", "exit", "ask", "ask 1 abort", "ask 1 abort 0 0", "ask  1 abort 0", " ask 1 abort 0",
        "ask 1 abort 0 ", "ask x abort 0", "ask -1 abort 0", "ask 1 no_such_step 0",
        "ask 1 abort 4294967296", "ask 18446744073709551616 abort 0", "ask 1 abort 0x1", "stop",
        "stop 1 2", "cancel 1 abort 0", "fire 1", "ASK 1 abort 0"}) {
    EXPECT_EQ(refusal([&] { (void)parse_script_request(line); }), "the script sent '" + line + "'")
        << line;
  }
  const std::string long_line = "ask 1 " + std::string(200, 'a') + " 0";
  EXPECT_EQ(refusal([&] { (void)parse_script_request(long_line); }),
            "the script sent '" + long_line.substr(0, 77) + "...'");
}

// A line from the socketpair may hold any byte but a newline: the refusal shows a control
// character as \xNN, so that it stays one line and writes nothing to the terminal (found by
// the control_frame fuzz target: a carriage return split the line).
TEST(ScriptRequest, ARefusalShowsControlCharactersEscaped) {
  using namespace std::string_literals;
  EXPECT_EQ(refusal([] { (void)parse_script_request("D\r"); }), "the script sent 'D\\x0d'");
  EXPECT_EQ(refusal([] { (void)parse_script_request("ask 1\x1b[2Jabort\0 0"s); }),
            "the script sent 'ask 1\\x1b[2Jabort\\x00 0'");
  EXPECT_EQ(refusal([] { (void)parse_script_request("stop 1\x7f"); }),
            "the script sent 'stop 1\\x7f'");
  const std::string long_line = std::string(200, '\r');
  std::string shown;
  for (int i = 0; i < 77; ++i) shown += "\\x0d";
  EXPECT_EQ(refusal([&] { (void)parse_script_request(long_line); }),
            "the script sent '" + shown + "...'");
}

TEST(ScriptRequest, AStepsIndexMustNameARequestOrGateOfTheScenario) {
  const scenarios::scenario_spec page42 = testing::from_catalogue("page42");
  ASSERT_EQ(page42.requests.size(), 2u);
  ASSERT_EQ(page42.faults.gates.size(), 1u);
  check_step_index(page42, transfer_step::abort, 1);
  check_step_index(page42, transfer_step::check_at_gate, 0);
  check_step_index(page42, transfer_step::all_over, 0);
  EXPECT_EQ(refusal([&] { check_step_index(page42, transfer_step::abort, 2); }),
            "step 'abort' was given index 2, but the scenario has 2 request(s)");
  EXPECT_EQ(refusal([&] { check_step_index(page42, transfer_step::check_at_gate, 1); }),
            "step 'check_at_gate' was given index 1, but the scenario has 1 gate(s)");
  EXPECT_EQ(refusal([&] { check_step_index(page42, transfer_step::wire_quiet, 1); }),
            "step 'wire_quiet' was given index 1, but it takes none (0)");
  EXPECT_EQ(refusal([&] { check_step_index(page42, transfer_step::counted_text, 4294967295u); }),
            "step 'counted_text' was given index 4294967295, but the scenario has 2 request(s)");
}

}  // namespace
}  // namespace kvsim::real::script_request_test
