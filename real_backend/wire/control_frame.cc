#include "real_backend/wire/control_frame.h"

#include <optional>
#include <string>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

constexpr std::uint8_t control_kind_max =
    static_cast<std::uint8_t>(core::control_kind::chunk_ready);
constexpr std::uint8_t kv_status_max = static_cast<std::uint8_t>(core::kv_status::success);

class writer {
 public:
  explicit writer(frame_type type) : bytes_(frame_header_bytes, 0) {
    bytes_[4] = static_cast<std::uint8_t>(type);
  }
  template <class T>
  void put(T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bytes_.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i)));
    }
  }
  void put_bytes(std::span<const std::uint8_t> data) {
    bytes_.insert(bytes_.end(), data.begin(), data.end());
  }
  std::vector<std::uint8_t> finish() {
    const auto payload = static_cast<std::uint32_t>(bytes_.size() - frame_header_bytes);
    for (std::size_t i = 0; i < 4; ++i) bytes_[i] = static_cast<std::uint8_t>(payload >> (8 * i));
    return std::move(bytes_);
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

class reader {
 public:
  reader(std::span<const std::uint8_t> payload, const char* what) : data_(payload), what_(what) {}

  template <class T>
  T get(const std::string& field) {
    need(sizeof(T), field);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) value |= std::uint64_t{data_[at_ + i]} << (8 * i);
    at_ += sizeof(T);
    return static_cast<T>(value);
  }
  void get_bytes(std::span<std::uint8_t> out, const std::string& field) {
    need(out.size(), field);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = data_[at_ + i];
    at_ += out.size();
  }
  bool get_flag(const std::string& field) {
    const std::size_t at = at_;
    const auto flag = get<std::uint8_t>(field);
    if (flag > 1)
      refuse("field '" + field + "' at offset " + std::to_string(at) + " must be 0 or 1 (got " +
             std::to_string(flag) + ")");
    return flag == 1;
  }
  std::size_t left() const { return data_.size() - at_; }
  std::size_t at() const { return at_; }
  void end() const {
    if (left() != 0) {
      refuse(std::to_string(left()) + " trailing byte(s) after the message at offset " +
             std::to_string(at_));
    }
  }
  [[noreturn]] void refuse(const std::string& why) const {
    throw control_plane_error(std::string("control plane: malformed ") + what_ + ": " + why);
  }

 private:
  void need(std::size_t bytes, const std::string& field) const {
    if (left() < bytes) {
      refuse("truncated: field '" + field + "' needs " + std::to_string(bytes) +
             " byte(s) at offset " + std::to_string(at_) + ", " + std::to_string(left()) + " left");
    }
  }

  std::span<const std::uint8_t> data_;
  const char* what_;
  std::size_t at_ = 0;
};

// Where a step line breaks the step protocol's rules; npos when it keeps them. A control
// character (a newline above all) would split or forge a line on the socketpair the same
// protocol runs on.
std::size_t step_line_fault(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if (byte < 0x20 || byte == 0x7f) return i;
  }
  return std::string_view::npos;
}

// Where a collective note breaks its frame's rules (control_frame.h), as a refusal's clause;
// empty when it keeps them.
std::optional<std::string> collective_fault(const collective_note& note) {
  const bool has_line = !note.line.empty();
  switch (note.say) {
    case collective_say::entered:
      if (note.sequence == 0) return "an entered note names collective #0 (they count from 1)";
      if (has_line) return "an entered note carries a line";
      return std::nullopt;
    case collective_say::finished:
      if (note.value != 0 || has_line) return "a finished note carries a value or a line";
      if (note.sequence == 0 && note.kind != collective_kind::all_reduce_min)
        return "a finished note after no collective names a last kind";
      return std::nullopt;
    case collective_say::diverged:
      if (note.value != 0) return "a diverged note carries a value";
      if (note.line.empty() || note.line.size() > collective_line_max)
        return "a diverged note's line must be 1.." + std::to_string(collective_line_max) +
               " bytes (got " + std::to_string(note.line.size()) + ")";
      if (note.line.rfind("I5: ", 0) != 0) return "a diverged note's line is not an I5 finding";
      if (const std::size_t at = step_line_fault(note.line); at != std::string::npos)
        return "a diverged note's line has control character " +
               std::to_string(static_cast<unsigned char>(note.line[at])) + " at byte " +
               std::to_string(at);
      return std::nullopt;
  }
  return "unknown say " + std::to_string(static_cast<int>(note.say));
}

}  // namespace

const char* to_string(collective_say say) {
  switch (say) {
    case collective_say::entered:
      return "entered";
    case collective_say::finished:
      return "finished";
    case collective_say::diverged:
      return "diverged";
  }
  return "unknown";
}

const char* to_string(frame_type type) {
  switch (type) {
    case frame_type::hello:
      return "hello";
    case frame_type::control:
      return "control";
    case frame_type::nccl_id:
      return "nccl_id";
    case frame_type::challenge:
      return "challenge";
    case frame_type::proof:
      return "proof";
    case frame_type::step:
      return "step";
    case frame_type::collective:
      return "collective";
  }
  return "unknown";
}

const char* to_string(core::control_kind kind) {
  switch (kind) {
    case core::control_kind::metadata:
      return "METADATA";
    case core::control_kind::abort:
      return "ABORT";
    case core::control_kind::abort_ack:
      return "ABORT_ACK";
    case core::control_kind::status:
      return "STATUS";
    case core::control_kind::chunk_ready:
      return "CHUNK_READY";
  }
  return "unknown";
}

std::vector<std::uint8_t> encode_hello(const hello_fields& hello) {
  writer w(frame_type::hello);
  w.put<std::uint32_t>(hello_magic);
  w.put<std::uint16_t>(wire_version);
  w.put<std::uint32_t>(hello.rank);
  w.put_bytes(hello.nonce);
  return w.finish();
}

std::vector<std::uint8_t> encode_challenge(const challenge_fields& challenge) {
  writer w(frame_type::challenge);
  w.put<std::uint32_t>(challenge.rank);
  w.put_bytes(challenge.nonce);
  w.put_bytes(challenge.mac);
  return w.finish();
}

std::vector<std::uint8_t> encode_proof(const handshake_mac& mac) {
  writer w(frame_type::proof);
  w.put_bytes(mac);
  return w.finish();
}

std::vector<std::uint8_t> encode_control(const core::control_message& message) {
  writer w(frame_type::control);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(message.kind));
  w.put<std::uint32_t>(message.from);
  w.put<std::uint64_t>(message.key.room);
  w.put<std::uint32_t>(message.key.generation);
  w.put<std::uint8_t>(message.token ? 1 : 0);
  if (message.token) {
    const core::abort_token& t = *message.token;
    w.put<std::uint64_t>(t.key.room);
    w.put<std::uint32_t>(t.key.generation);
    w.put<std::uint32_t>(t.issuer);
    w.put<std::uint32_t>(t.audience);
    w.put<std::uint64_t>(t.epoch);
    w.put<std::uint64_t>(t.nonce);
    w.put_bytes(t.mac);
  }
  w.put<std::uint32_t>(static_cast<std::uint32_t>(message.pages.size()));
  for (core::page_index p : message.pages) w.put<std::uint32_t>(p);
  w.put<std::uint8_t>(message.status ? 1 : 0);
  if (message.status) w.put<std::uint8_t>(static_cast<std::uint8_t>(*message.status));
  w.put<std::uint8_t>(message.proof ? 1 : 0);
  if (message.proof) w.put_bytes(*message.proof);
  return w.finish();
}

std::vector<std::uint8_t> encode_id(const id_blob& id) {
  writer w(frame_type::nccl_id);
  w.put_bytes(id);
  return w.finish();
}

std::vector<std::uint8_t> encode_step(std::string_view line) {
  if (line.empty() || line.size() > step_line_max ||
      step_line_fault(line) != std::string_view::npos) {
    throw control_plane_error("control plane: a step line of " + std::to_string(line.size()) +
                              " byte(s) cannot be sent (1.." + std::to_string(step_line_max) +
                              " bytes, no control character)");
  }
  writer w(frame_type::step);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(line.size()));
  w.put_bytes({reinterpret_cast<const std::uint8_t*>(line.data()), line.size()});
  return w.finish();
}

std::vector<std::uint8_t> encode_collective(const collective_note& note) {
  if (const auto fault = collective_fault(note)) {
    throw control_plane_error("control plane: a collective note cannot be sent: " + *fault);
  }
  writer w(frame_type::collective);
  w.put<std::uint32_t>(note.group);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(note.say));
  w.put<std::uint64_t>(note.sequence);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(note.kind));
  w.put<std::int64_t>(note.value);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(note.line.size()));
  w.put_bytes({reinterpret_cast<const std::uint8_t*>(note.line.data()), note.line.size()});
  return w.finish();
}

frame_header decode_header(std::span<const std::uint8_t> header) {
  reader r(header, "frame header");
  const auto payload = r.get<std::uint32_t>("payload_length");
  const auto type = r.get<std::uint8_t>("type");
  r.end();
  if (type < static_cast<std::uint8_t>(frame_type::hello) ||
      type > static_cast<std::uint8_t>(frame_type::collective)) {
    r.refuse("unknown frame type " + std::to_string(type));
  }
  if (payload > frame_payload_max) {
    r.refuse("payload length " + std::to_string(payload) + " exceeds the limit of " +
             std::to_string(frame_payload_max) + " bytes");
  }
  return {static_cast<frame_type>(type), payload};
}

hello_fields decode_hello(std::span<const std::uint8_t> payload) {
  reader r(payload, "hello frame");
  const auto magic = r.get<std::uint32_t>("magic");
  if (magic != hello_magic) r.refuse("not a kvsim peer (magic " + std::to_string(magic) + ")");
  const auto version = r.get<std::uint16_t>("version");
  if (version != wire_version) {
    r.refuse("wire version " + std::to_string(version) + ", this kvsim speaks " +
             std::to_string(wire_version));
  }
  hello_fields hello;
  hello.rank = r.get<std::uint32_t>("rank");
  r.get_bytes(hello.nonce, "nonce");
  r.end();
  return hello;
}

challenge_fields decode_challenge(std::span<const std::uint8_t> payload) {
  reader r(payload, "challenge frame");
  challenge_fields challenge;
  challenge.rank = r.get<std::uint32_t>("rank");
  r.get_bytes(challenge.nonce, "nonce");
  r.get_bytes(challenge.mac, "mac");
  r.end();
  return challenge;
}

handshake_mac decode_proof(std::span<const std::uint8_t> payload) {
  reader r(payload, "proof frame");
  handshake_mac mac{};
  r.get_bytes(mac, "mac");
  r.end();
  return mac;
}

core::control_message decode_control(std::span<const std::uint8_t> payload) {
  reader r(payload, "control frame");
  core::control_message m;
  const auto kind = r.get<std::uint8_t>("kind");
  if (kind > control_kind_max) r.refuse("unknown control kind " + std::to_string(kind));
  m.kind = static_cast<core::control_kind>(kind);
  m.from = r.get<std::uint32_t>("from");
  m.key.room = r.get<std::uint64_t>("room");
  m.key.generation = r.get<std::uint32_t>("generation");
  if (r.get_flag("has_token")) {
    core::abort_token t;
    t.key.room = r.get<std::uint64_t>("token.room");
    t.key.generation = r.get<std::uint32_t>("token.generation");
    t.issuer = r.get<std::uint32_t>("token.issuer");
    t.audience = r.get<std::uint32_t>("token.audience");
    t.epoch = r.get<std::uint64_t>("token.epoch");
    t.nonce = r.get<std::uint64_t>("token.nonce");
    r.get_bytes(t.mac, "token.mac");
    m.token = t;
  }
  const auto pages = r.get<std::uint32_t>("page_count");
  if (std::size_t{pages} * 4 > r.left()) {
    r.refuse("truncated: " + std::to_string(pages) + " pages need " +
             std::to_string(std::size_t{pages} * 4) + " byte(s) at offset " +
             std::to_string(r.at()) + ", " + std::to_string(r.left()) + " left");
  }
  m.pages.reserve(pages);
  for (std::uint32_t i = 0; i < pages; ++i) {
    m.pages.push_back(r.get<std::uint32_t>("pages[" + std::to_string(i) + "]"));
  }
  if (r.get_flag("has_status")) {
    const std::size_t at = r.at();
    const auto status = r.get<std::uint8_t>("status");
    if (status > kv_status_max) {
      r.refuse("field 'status' at offset " + std::to_string(at) + " is not a kv_status (got " +
               std::to_string(status) + ")");
    }
    m.status = static_cast<core::kv_status>(status);
  }
  if (r.get_flag("has_proof")) {
    std::array<std::uint8_t, 32> proof{};
    r.get_bytes(proof, "proof");
    m.proof = proof;
  }
  r.end();
  return m;
}

id_blob decode_id(std::span<const std::uint8_t> payload) {
  reader r(payload, "nccl_id frame");
  id_blob id{};
  r.get_bytes(id, "id");
  r.end();
  return id;
}

std::string decode_step(std::span<const std::uint8_t> payload) {
  reader r(payload, "step frame");
  const auto length = r.get<std::uint32_t>("line_length");
  if (length == 0 || length > step_line_max) {
    r.refuse("field 'line_length' at offset 0 must be 1.." + std::to_string(step_line_max) +
             " (got " + std::to_string(length) + ")");
  }
  std::string line(length, '\0');
  r.get_bytes({reinterpret_cast<std::uint8_t*>(line.data()), line.size()}, "line");
  r.end();
  if (const std::size_t at = step_line_fault(line); at != std::string::npos) {
    r.refuse("field 'line' has control character " +
             std::to_string(static_cast<unsigned char>(line[at])) + " at offset " +
             std::to_string(4 + at));
  }
  return line;
}

collective_note decode_collective(std::span<const std::uint8_t> payload) {
  reader r(payload, "collective frame");
  collective_note note;
  note.group = r.get<std::uint32_t>("group");
  const auto say = r.get<std::uint8_t>("say");
  if (say < static_cast<std::uint8_t>(collective_say::entered) ||
      say > static_cast<std::uint8_t>(collective_say::diverged)) {
    r.refuse("field 'say' at offset 4 must be 1..3 (got " + std::to_string(say) + ")");
  }
  note.say = static_cast<collective_say>(say);
  note.sequence = r.get<std::uint64_t>("sequence");
  const auto kind = r.get<std::uint8_t>("kind");
  if (kind > collective_kind_max) {
    r.refuse("field 'kind' at offset 13 must be 0.." + std::to_string(collective_kind_max) +
             " (got " + std::to_string(kind) + ")");
  }
  note.kind = static_cast<collective_kind>(kind);
  note.value = r.get<std::int64_t>("value");
  const auto length = r.get<std::uint32_t>("line_length");
  if (length > collective_line_max) {
    r.refuse("field 'line_length' at offset 22 must be at most " +
             std::to_string(collective_line_max) + " (got " + std::to_string(length) + ")");
  }
  note.line.resize(length);
  r.get_bytes({reinterpret_cast<std::uint8_t*>(note.line.data()), note.line.size()}, "line");
  r.end();
  if (const auto fault = collective_fault(note)) r.refuse(*fault);
  return note;
}


}  // namespace kvsim::real
