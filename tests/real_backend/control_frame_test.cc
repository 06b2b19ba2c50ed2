// The control plane's wire format: every message kind round-trips byte for byte, and what a
// broken or hostile peer might send is refused with one line naming the field.
#include "real_backend/wire/control_frame.h"

#include <gtest/gtest.h>

#include "real_backend/errors.h"

namespace kvsim::real::control_frame_test {
namespace {

core::abort_token token() {
  core::abort_token t;
  t.key = {42, 3};
  t.issuer = 1;
  t.audience = 0x0a0b0c0d;
  t.epoch = 0x1112131415161718ULL;
  t.nonce = 0x0102030405060708ULL;
  for (std::size_t i = 0; i < t.mac.size(); ++i) t.mac[i] = static_cast<std::uint8_t>(200 + i);
  return t;
}

std::vector<core::control_message> every_kind() {
  return {
      {core::control_kind::metadata, 1, {42, 0}, std::nullopt, {6, 7, 4294967295u}, std::nullopt},
      {core::control_kind::abort, 1, {42, 3}, token(), {}, std::nullopt},
      {core::control_kind::abort_ack, 0, {42, 3}, token(), {}, std::nullopt},
      {core::control_kind::status, 0, {~0ULL, 9}, std::nullopt, {}, core::kv_status::failed},
      {core::control_kind::chunk_ready, 0, {7, 1}, std::nullopt, {}, core::kv_status::success},
      // A prefill rank's message with its proof (core/message_proof.h) travels whole.
      [] {
        core::control_message proven{core::control_kind::abort_ack, 0, {42, 3}, token(), {}, {}};
        proven.proof.emplace();
        for (std::size_t i = 0; i < proven.proof->size(); ++i) {
          (*proven.proof)[i] = static_cast<std::uint8_t>(0xa0 + i);
        }
        return proven;
      }(),
  };
}

void expect_same(const core::control_message& a, const core::control_message& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.from, b.from);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.token, b.token);
  EXPECT_EQ(a.pages, b.pages);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.proof, b.proof);
}

std::span<const std::uint8_t> payload_of(const std::vector<std::uint8_t>& frame) {
  return std::span(frame).subspan(frame_header_bytes);
}

std::string refusal(const std::function<void()>& decode) {
  try {
    decode();
  } catch (const control_plane_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ControlFrame, EveryMessageKindRoundTrips) {
  for (const core::control_message& m : every_kind()) {
    const std::vector<std::uint8_t> frame = encode_control(m);
    const frame_header h = decode_header(std::span(frame).first(frame_header_bytes));
    EXPECT_EQ(h.type, frame_type::control);
    EXPECT_EQ(h.payload_bytes, frame.size() - frame_header_bytes);
    expect_same(decode_control(payload_of(frame)), m);
  }
}

hello_fields hello_of(core::rank_id rank) {
  hello_fields hello{rank, {}};
  for (std::size_t i = 0; i < hello.nonce.size(); ++i)
    hello.nonce[i] = static_cast<std::uint8_t>(i);
  return hello;
}

TEST(ControlFrame, HandshakeFramesAndNcclIdRoundTrip) {
  const hello_fields hello = decode_hello(payload_of(encode_hello(hello_of(17))));
  EXPECT_EQ(hello.rank, 17u);
  EXPECT_EQ(hello.nonce, hello_of(17).nonce);
  challenge_fields challenge{9, hello_of(0).nonce, {}};
  challenge.mac.fill(0xa5);
  const auto challenge_frame = encode_challenge(challenge);
  EXPECT_EQ(decode_header(std::span(challenge_frame).first(frame_header_bytes)).type,
            frame_type::challenge);
  const challenge_fields back = decode_challenge(payload_of(challenge_frame));
  EXPECT_EQ(back.rank, 9u);
  EXPECT_EQ(back.nonce, challenge.nonce);
  EXPECT_EQ(back.mac, challenge.mac);
  const auto proof_frame = encode_proof(challenge.mac);
  EXPECT_EQ(decode_header(std::span(proof_frame).first(frame_header_bytes)).type,
            frame_type::proof);
  EXPECT_EQ(decode_proof(payload_of(proof_frame)), challenge.mac);
  id_blob id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(i * 3);
  const auto frame = encode_id(id);
  EXPECT_EQ(decode_header(std::span(frame).first(frame_header_bytes)).type, frame_type::nccl_id);
  EXPECT_EQ(decode_id(payload_of(frame)), id);
}

TEST(ControlFrame, IntegersAreLittleEndianOnTheWire) {
  const auto frame = encode_hello(hello_of(0x01020304));
  ASSERT_EQ(frame.size(), frame_header_bytes + 42);
  EXPECT_EQ(frame[0], 42);  // payload length, low byte first
  EXPECT_EQ(frame[4], static_cast<std::uint8_t>(frame_type::hello));
  EXPECT_EQ(frame[5], 'k');
  EXPECT_EQ(frame[8], 'm');
  EXPECT_EQ(frame[11], 0x04);
  EXPECT_EQ(frame[14], 0x01);
}

TEST(ControlFrame, EveryTruncationIsRefusedNamingTheField) {
  for (const core::control_message& m : every_kind()) {
    const std::vector<std::uint8_t> frame = encode_control(m);
    const auto payload = payload_of(frame);
    for (std::size_t cut = 0; cut < payload.size(); ++cut) {
      const std::string why = refusal([&] { (void)decode_control(payload.first(cut)); });
      EXPECT_NE(why.find("control plane: malformed control frame: truncated: "), std::string::npos)
          << "cut at " << cut << ": " << why;
    }
  }
  EXPECT_EQ(refusal([] {
              (void)decode_control(std::vector<std::uint8_t>{0, 1});
            }),
            "control plane: malformed control frame: truncated: field 'from' needs 4 byte(s) at "
            "offset 1, 1 left");
}

TEST(ControlFrame, HostileValuesAreRefused) {
  std::vector<std::uint8_t> frame = encode_control(every_kind()[0]);
  std::vector<std::uint8_t> payload(frame.begin() + frame_header_bytes, frame.end());

  auto bad_kind = payload;
  bad_kind[0] = 9;
  EXPECT_EQ(refusal([&] { (void)decode_control(bad_kind); }),
            "control plane: malformed control frame: unknown control kind 9");

  auto bad_flag = payload;
  bad_flag[17] = 2;  // has_token
  EXPECT_EQ(refusal([&] { (void)decode_control(bad_flag); }),
            "control plane: malformed control frame: field 'has_token' at offset 17 must be 0 or 1 "
            "(got 2)");

  auto huge_count = payload;
  huge_count[18] = 0xff;
  huge_count[19] = 0xff;
  huge_count[20] = 0xff;
  huge_count[21] = 0x7f;
  EXPECT_NE(refusal([&] { (void)decode_control(huge_count); }).find("pages need"),
            std::string::npos);

  auto trailing = payload;
  trailing.push_back(0);
  EXPECT_EQ(
      refusal([&] { (void)decode_control(trailing); }),
      "control plane: malformed control frame: 1 trailing byte(s) after the message at offset " +
          std::to_string(payload.size()));

  std::vector<std::uint8_t> status_frame = encode_control(every_kind()[3]);
  status_frame[status_frame.size() - 2] = 5;  // kv_status beyond success (before has_proof)
  EXPECT_NE(refusal([&] {
              (void)decode_control(payload_of(status_frame));
            }).find("is not a kv_status (got 5)"),
            std::string::npos);
}

TEST(ControlFrame, BadHeadersAndHellosAreRefused) {
  EXPECT_EQ(refusal([] {
              (void)decode_header(std::vector<std::uint8_t>{1, 0, 0, 0, 8});
            }),
            "control plane: malformed frame header: unknown frame type 8");
  EXPECT_EQ(refusal([] {
              (void)decode_header(std::vector<std::uint8_t>{1, 0, 0, 0x10, 2});
            }),
            "control plane: malformed frame header: payload length 268435457 exceeds the "
            "limit of 1048576 bytes");
  std::vector<std::uint8_t> hello = encode_hello(hello_of(1));
  hello[frame_header_bytes] ^= 0xff;
  EXPECT_NE(refusal([&] { (void)decode_hello(payload_of(hello)); }).find("not a kvsim peer"),
            std::string::npos);
  std::vector<std::uint8_t> old = encode_hello(hello_of(1));
  old[frame_header_bytes + 4] = 2;  // version 2's wire: no handshake, links in the clear
  EXPECT_EQ(refusal([&] { (void)decode_hello(payload_of(old)); }),
            "control plane: malformed hello frame: wire version 2, this kvsim speaks 6");
  EXPECT_NE(refusal([] { (void)decode_proof(std::vector<std::uint8_t>(31, 0)); }).find("truncated"),
            std::string::npos);
  EXPECT_NE(
      refusal([] { (void)decode_challenge(std::vector<std::uint8_t>(69, 0)); }).find("trailing"),
      std::string::npos);
  EXPECT_NE(refusal([] { (void)decode_id(std::vector<std::uint8_t>(127, 0)); }).find("truncated"),
            std::string::npos);
}

// Step frames (rank 0 driving rank 1 of a torchrun/srun launch): one line of the step
// protocol, length-prefixed, decoded strictly. A control character (a newline would make two
// lines of one on a socketpair), an empty or oversized line, a length that does not match the
// bytes, and trailing bytes are refused; nothing malformed can be encoded either.
TEST(ControlFrame, StepFramesCarryOneLineAndRefuseAnythingElse) {
  const std::string line = "ask 7 prealloc_and_publish 1";
  const std::vector<std::uint8_t> frame = encode_step(line);
  EXPECT_EQ(decode_header(std::span(frame).first(frame_header_bytes)).type, frame_type::step);
  EXPECT_EQ(frame[frame_header_bytes], line.size());  // the length, little-endian
  EXPECT_EQ(decode_step(payload_of(frame)), line);
  const std::string longest(step_line_max, 'x');
  EXPECT_EQ(decode_step(payload_of(encode_step(longest))), longest);

  std::vector<std::uint8_t> newline = encode_step("fired 1 x");
  newline[frame_header_bytes + 4 + 7] = '\n';
  EXPECT_EQ(refusal([&] { (void)decode_step(payload_of(newline)); }),
            "control plane: malformed step frame: field 'line' has control character 10 at "
            "offset 11");
  std::vector<std::uint8_t> del = encode_step("answer 3 1");
  del.back() = 0x7f;
  EXPECT_NE(refusal([&] { (void)decode_step(payload_of(del)); }).find("control character 127"),
            std::string::npos);
  EXPECT_EQ(refusal([] {
              (void)decode_step(std::vector<std::uint8_t>{0, 0, 0, 0});
            }),
            "control plane: malformed step frame: field 'line_length' at offset 0 must be "
            "1..524288 (got 0)");
  EXPECT_NE(refusal([] {
              (void)decode_step(std::vector<std::uint8_t>{1, 0, 8, 0, 'x'});
            }).find("must be 1..524288 (got 524289)"),
            std::string::npos);
  EXPECT_EQ(refusal([] {
              (void)decode_step(std::vector<std::uint8_t>{5, 0, 0, 0, 'a', 'b'});
            }),
            "control plane: malformed step frame: truncated: field 'line' needs 5 byte(s) at "
            "offset 4, 2 left");
  EXPECT_EQ(
      refusal([] {
        (void)decode_step(std::vector<std::uint8_t>{1, 0, 0, 0, 'a', 'b'});
      }),
      "control plane: malformed step frame: 1 trailing byte(s) after the message at offset 5");
  EXPECT_NE(refusal([] {
              (void)decode_step(std::vector<std::uint8_t>{1, 0});
            }).find("truncated"),
            std::string::npos);

  EXPECT_NE(refusal([] { (void)encode_step("two\nlines"); }).find("cannot be sent"),
            std::string::npos);
  EXPECT_NE(refusal([] { (void)encode_step(""); }).find("cannot be sent"), std::string::npos);
  EXPECT_NE(refusal([&] { (void)encode_step(longest + "x"); }).find("cannot be sent"),
            std::string::npos);
}

// Collective frames (the members of a rank group in processes of their own, wire_group.h):
// each note round-trips byte for byte; a say or kind out of range, a note that breaks its
// say's rules (an entry numbered 0, a line where none belongs, a diverged line that is not one
// I5 line), an oversized line, truncation and trailing bytes are refused naming why; nothing
// malformed can be encoded either.
TEST(ControlFrame, CollectiveNotesRoundTripAndRefuseAnythingElse) {
  const std::vector<collective_note> notes = {
      {3, collective_say::entered, 1, collective_kind::all_reduce_min, -5, {}},
      {0, collective_say::entered, ~0ULL, collective_kind::barrier, INT64_MAX, {}},
      {0, collective_say::finished, 0, collective_kind::all_reduce_min, 0, {}},
      {0, collective_say::finished, 2, collective_kind::barrier, 0, {}},
      {0, collective_say::diverged, 2, collective_kind::barrier, 0, "I5: rank 1 waits"},
  };
  for (const collective_note& note : notes) {
    const std::vector<std::uint8_t> frame = encode_collective(note);
    EXPECT_EQ(decode_header(std::span(frame).first(frame_header_bytes)).type,
              frame_type::collective);
    EXPECT_EQ(decode_collective(payload_of(frame)), note);
  }
  const std::vector<std::uint8_t> frame = encode_collective(notes[0]);
  EXPECT_EQ(frame[frame_header_bytes], 3);        // group, little-endian
  EXPECT_EQ(frame[frame_header_bytes + 14], 0xfb);  // value -5, two's complement
  const std::string longest = "I5: " + std::string(collective_line_max - 4, 'x');
  const collective_note longest_note{0, collective_say::diverged, 1, collective_kind::barrier, 0,
                                     longest};
  EXPECT_EQ(decode_collective(payload_of(encode_collective(longest_note))).line, longest);

  const auto changed = [&](std::size_t at, std::uint8_t byte) {
    std::vector<std::uint8_t> bad = encode_collective(notes[4]);
    bad[frame_header_bytes + at] = byte;
    return refusal([&] { (void)decode_collective(payload_of(bad)); });
  };
  EXPECT_EQ(changed(4, 4), "control plane: malformed collective frame: field 'say' at offset 4 "
                           "must be 1..3 (got 4)");
  EXPECT_EQ(changed(4, 0), "control plane: malformed collective frame: field 'say' at offset 4 "
                           "must be 1..3 (got 0)");
  EXPECT_EQ(changed(13, 3), "control plane: malformed collective frame: field 'kind' at offset "
                            "13 must be 0..2 (got 3)");
  EXPECT_EQ(changed(26 + 5, '\n'), "control plane: malformed collective frame: a diverged "
                                   "note's line has control character 10 at byte 5");
  EXPECT_EQ(changed(26, 'J'), "control plane: malformed collective frame: a diverged note's "
                              "line is not an I5 finding");
  EXPECT_EQ(changed(14, 1), "control plane: malformed collective frame: a diverged note "
                            "carries a value");
  EXPECT_EQ(changed(4, 1), "control plane: malformed collective frame: an entered note carries "
                           "a line");
  EXPECT_EQ(changed(4, 2), "control plane: malformed collective frame: a finished note carries "
                           "a value or a line");
  std::vector<std::uint8_t> zeroth = encode_collective(notes[0]);
  zeroth[frame_header_bytes + 5] = 0;
  EXPECT_EQ(refusal([&] { (void)decode_collective(payload_of(zeroth)); }),
            "control plane: malformed collective frame: an entered note names collective #0 "
            "(they count from 1)");
  std::vector<std::uint8_t> long_line = encode_collective(notes[4]);
  long_line[frame_header_bytes + 22 + 1] = 0x10;  // line_length 16 + 4096
  EXPECT_NE(refusal([&] { (void)decode_collective(payload_of(long_line)); })
                .find("field 'line_length' at offset 22 must be at most 4096"),
            std::string::npos);
  std::vector<std::uint8_t> trailing = encode_collective(notes[0]);
  trailing.push_back(0);
  EXPECT_EQ(refusal([&] { (void)decode_collective(payload_of(trailing)); }),
            "control plane: malformed collective frame: 1 trailing byte(s) after the message at "
            "offset 26");
  const std::vector<std::uint8_t> whole = encode_collective(notes[4]);
  for (std::size_t cut = 0; cut + frame_header_bytes < whole.size(); ++cut) {
    const std::span<const std::uint8_t> part = payload_of(whole).first(cut);
    EXPECT_NE(refusal([&] { (void)decode_collective(part); }).find("truncated"), std::string::npos)
        << cut;
  }

  EXPECT_NE(refusal([] {
              (void)encode_collective(
                  {0, collective_say::diverged, 1, collective_kind::barrier, 0, "two\nlines"});
            }).find("cannot be sent"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              (void)encode_collective({0, collective_say::diverged, 1, collective_kind::barrier,
                                       0, longest + "x"});
            }).find("cannot be sent"),
            std::string::npos);
  EXPECT_NE(refusal([] {
              (void)encode_collective({0, collective_say::entered, 0, collective_kind::barrier, 0, {}});
            }).find("cannot be sent"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsim::real::control_frame_test
