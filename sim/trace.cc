#include "sim/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string_view>
#include <system_error>

#include "spec/capped_read.h"
#include "spec/fault_kinds.h"
#include "spec/one_line.h"
#include "spec/unique_keys.h"
#include "spec/trace_format.h"
#include "spec/untrusted_json.h"

namespace kvsim::sim {
namespace {

using nlohmann::json;

constexpr std::uint32_t per_million_max = 1'000'000;
constexpr std::size_t label_chars_max = 200;
// In "fault_profile" beside the kinds (spec/trace_format.h).
const std::string faults_stop_field(spec::faults_stop_field);

std::string display(const std::filesystem::path& path) { return spec::echoed(path.string()); }

// --- writing ----------------------------------------------------------------------------

json fault_profile_json(const fault_profile& faults) {
  json object = json::object();
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    if (!spec::named_in_trace(spec::fault_kinds[i], faults.per_million[i])) continue;
    object[to_string(static_cast<fault_kind>(i))] = faults.per_million[i];
  }
  // Written only when faults stop, so a profile without a stop reads as before.
  if (faults.faults_stop_us != faults_never_stop) object[faults_stop_field] = faults.faults_stop_us;
  return object;
}

json finding_json(const finding& f) {
  return json{{"invariant", f.invariant},
              {"message", f.message},
              {"evidence", f.evidence},
              {"details", f.details}};
}

// Invalid UTF-8 (which can only come from free text such as a finding's message) is written
// as U+FFFD rather than failing the write: the trace of a finding must not be lost.
std::string dump(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

// `value` pretty-printed as the value of a top-level field (one level of indent deeper).
std::string nested(const json& value) {
  const std::string text = dump(value, 1);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out += c;
    if (c == '\n') out += ' ';  // JSON text has no raw newline inside a string
  }
  return out;
}

// One element per line: a trace has thousands of decisions and they read best as rows, as
// do the actors.
std::string rows(const json& array) {
  if (array.empty()) return "[]";
  std::string text = "[";
  for (std::size_t i = 0; i < array.size(); ++i) {
    text += i == 0 ? "\n  " : ",\n  ";
    text += dump(array[i], -1);
  }
  return text + "\n ]";
}

bool written_as_rows(std::string_view field) { return field == "decisions" || field == "actors"; }

std::string render(const json& document) {
  std::string text = "{";
  for (std::size_t i = 0; i < spec::trace_fields.size(); ++i) {
    if (!document.contains(std::string(spec::trace_fields[i]))) continue;  // an optional field left out
    const json& value = document.at(std::string(spec::trace_fields[i]));
    text += i == 0 ? "\n \"" : ",\n \"";
    text += spec::trace_fields[i];
    text += "\": ";
    text += written_as_rows(spec::trace_fields[i]) ? rows(value) : nested(value);
  }
  return text + "\n}\n";
}

// --- loading ----------------------------------------------------------------------------

class loader {
 public:
  explicit loader(const std::filesystem::path& path) : file_(display(path)) {}

  // Values in `what` come escaped and cut short (shortened, json_summary); the line itself
  // is held to one line here whatever a caller forgot.
  [[noreturn]] void fail(std::string_view what) const {
    throw trace_error(spec::error_line(file_ + ": " + std::string(what)));
  }

  // At most the trace cap + 1 byte is read (spec/input_caps.h): a bigger file is refused by
  // its size, before parsing costs ~16 times that.
  std::string read(const std::filesystem::path& path) const {
    try {
      return spec::read_capped(path, spec::trace_input);
    } catch (const spec::capped_read_error& e) {
      fail(e.what());
    }
  }

  json parse(const std::string& content) const {
    if (content.find_first_not_of(" \t\r\n") == std::string::npos) {
      fail("empty file, not a trace");
    }
    // Before the parser sees it: nlohmann recurses per level, and deep enough nesting
    // overflows the stack before any check of ours runs.
    if (const auto excess = spec::json_nesting_exceeds(content)) fail(describe(*excess));
    try {
      return spec::parse_with_unique_keys(content);
    } catch (const spec::duplicate_json_key& e) {
      fail(e.what());
    } catch (const json::parse_error& e) {
      fail("malformed or truncated JSON at byte " + std::to_string(e.byte) + " (" +
           spec::json_error_detail(e.what()) + ")");
    } catch (const json::exception& e) {
      // A number too large for any type (out_of_range): its whole text is in the message.
      fail("unreadable JSON (" + spec::json_error_detail(e.what()) + ")");
    }
  }

  void check_format_and_version(const json& document) const {
    if (!document.is_object()) fail("not a kvsim trace (the file is JSON but not an object)");
    const auto format = document.find("format");
    if (format == document.end()) fail("not a kvsim trace (no \"format\" field)");
    if (!format->is_string() || format->get_ref<const std::string&>() != spec::trace_format_name) {
      fail("not a kvsim trace (\"format\" is " + spec::json_summary(*format) + ", expected \"" +
           std::string(spec::trace_format_name) + "\")");
    }
    const std::uint64_t version = u64(member(document, "version", "version"), "version");
    if (version == 0) fail("trace format version 0 is not valid (versions start at 1)");
    if (version > static_cast<std::uint64_t>(spec::trace_format_version)) {
      fail("trace format version " + std::to_string(version) +
           " is newer than this kvsim supports (" + std::to_string(spec::trace_format_version) + ")");
    }
  }

  trace fields(const json& document) const {
    trace t;
    t.kvsim_version = label(member(document, "kvsim_version", "kvsim_version"), "kvsim_version");
    t.scenario = member(document, "scenario", "scenario");
    if (!t.scenario.is_object()) fail("field 'scenario' must be a JSON object");
    if (document.contains("origin")) {
      t.origin = string(document.at("origin"), "origin");
      if (t.origin != "real" && t.origin != "simulator") {
        fail("field 'origin' must be \"real\" or \"simulator\"");
      }
    }
    t.variant = label(member(document, "variant", "variant"), "variant");
    t.strategy = label(member(document, "strategy", "strategy"), "strategy");
    if (document.contains("checkers")) {
      t.checkers = string(document.at("checkers"), "checkers");
      if (t.checkers != "all" && t.checkers != "damage" && t.checkers != "rules") {
        fail("field 'checkers' must be \"all\", \"damage\" or \"rules\" (got \"" + spec::shortened(t.checkers) + "\")");
      }
    }
    t.seed = decimal(member(document, "seed", "seed"), "seed");
    t.faults = faults(member(document, "fault_profile", "fault_profile"));
    t.actors = actors(member(document, "actors", "actors"));
    t.decisions = decisions(member(document, "decisions", "decisions"));
    check_hash(member(document, "decision_hash", "decision_hash"), t.decisions);
    t.steps = u64(member(document, "steps", "steps"), "steps");
    t.events = strings(member(document, "events", "events"), "events");
    t.found = found(member(document, "finding", "finding"));
    return t;
  }

 private:
  const json& member(const json& object, const char* key, const std::string& name) const {
    const auto it = object.find(key);
    if (it == object.end()) fail("missing field '" + name + "'");
    return *it;
  }

  const json& object_of(const json& value, const std::string& name) const {
    if (!value.is_object()) fail("field '" + name + "' must be an object");
    return value;
  }

  const json& array_of(const json& value, const std::string& name) const {
    if (!value.is_array()) fail("field '" + name + "' must be an array");
    return value;
  }

  std::string string(const json& value, const std::string& name) const {
    if (!value.is_string()) fail("field '" + name + "' must be a string");
    return value.get<std::string>();
  }

  // A name that later lines print whole ("unknown core variant '...'"): kvsim writes short
  // ones ("B1+B7", "pct:3", "0.1.0"), so a long one is an edited file, refused here.
  std::string label(const json& value, const std::string& name) const {
    std::string text = string(value, name);
    if (text.size() > label_chars_max) {
      fail("field '" + name + "' is " + std::to_string(text.size()) + " characters long, more than " +
           std::to_string(label_chars_max));
    }
    return text;
  }

  std::uint64_t u64(const json& value, const std::string& name) const {
    if (!value.is_number_unsigned()) fail("field '" + name + "' must be a non-negative integer");
    return value.get<std::uint64_t>();
  }

  std::uint32_t u32(const json& value, const std::string& name) const {
    const std::uint64_t number = u64(value, name);
    if (number > 0xffffffffu) {
      fail("field '" + name + "' is " + std::to_string(number) + ", more than 4294967295");
    }
    return static_cast<std::uint32_t>(number);
  }

  // A 64-bit value that JSON tools reading numbers as doubles would round: written as a string
  // of decimal digits; a plain non-negative integer is accepted too (it parses exactly here).
  std::uint64_t decimal(const json& value, const std::string& name) const {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>();
    const std::string message =
        "field '" + name + "' must be a string of decimal digits (an unsigned 64-bit integer)";
    if (!value.is_string()) fail(message);
    const auto& text = value.get_ref<const std::string&>();
    if (text.empty() || text.size() > 20) fail(message);
    std::uint64_t number = 0;
    for (const char c : text) {
      if (c < '0' || c > '9') fail(message);
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (number > (UINT64_MAX - digit) / 10) fail(message);
      number = number * 10 + digit;
    }
    return number;
  }

  std::vector<std::string> strings(const json& value, const std::string& name) const {
    array_of(value, name);
    std::vector<std::string> out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      out.push_back(string(value[i], name + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

  fault_profile faults(const json& value) const {
    object_of(value, "fault_profile");
    fault_profile profile;
    for (std::size_t i = 0; i < fault_kind_count; ++i) {
      const std::string kind = to_string(static_cast<fault_kind>(i));
      const std::string name = "fault_profile." + kind;
      // Traces written before a kind existed lack it: off (spec/fault_kinds.h).
      const bool later_kind = !spec::fault_kinds[i].in_first_traces;
      if (later_kind && !value.contains(kind)) continue;
      profile.per_million[i] = u32(member(value, kind.c_str(), name), name);
      if (profile.per_million[i] > per_million_max) {
        fail("field '" + name + "' is " + std::to_string(profile.per_million[i]) +
             " per million, more than 1000000");
      }
    }
    if (value.contains(faults_stop_field)) {
      profile.faults_stop_us = u64(value.at(faults_stop_field), "fault_profile.faults_stop_us");
    }
    for (const auto& [kind, unused] : value.items()) {
      if (kind != faults_stop_field && !fault_kind_from_string(kind)) {
        fail("field 'fault_profile' names an unknown fault kind '" + spec::shortened(kind) + "'");
      }
    }
    return profile;
  }

  std::vector<actor_name> actors(const json& value) const {
    array_of(value, "actors");
    std::vector<actor_name> out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string name = "actors[" + std::to_string(i) + "]";
      object_of(value[i], name);
      const std::uint64_t id = u64(member(value[i], "id", name + ".id"), name + ".id");
      if (id != i) {
        fail("field '" + name + ".id' is " + std::to_string(id) + " but must equal its position " +
             std::to_string(i));
      }
      actor_name actor;
      actor.rank = u32(member(value[i], "rank", name + ".rank"), name + ".rank");
      actor.role = string(member(value[i], "role", name + ".role"), name + ".role");
      actor.index = u32(member(value[i], "index", name + ".index"), name + ".index");
      out.push_back(std::move(actor));
    }
    return out;
  }

  decision one_decision(const json& value, const std::string& name) const {
    const bool shaped = value.is_array() && value.size() == 4 && value[0].is_number_unsigned() &&
                        value[1].is_number_unsigned() && value[2].is_number_unsigned() &&
                        (value[3].is_string() || value[3].is_number_unsigned());
    if (!shaped) {
      fail("field '" + name +
           "' must be an array [kind, options, chosen, subject] of three numbers and a decimal "
           "string");
    }
    const std::uint64_t kind = value[0].get<std::uint64_t>();
    if (kind > static_cast<std::uint64_t>(decision_kind::data)) {
      fail("field '" + name + "' has decision kind " + std::to_string(kind) +
           ", not 0 (schedule), 1 (fault) or 2 (data)");
    }
    decision d;
    d.kind = static_cast<decision_kind>(kind);
    d.options = u32(value[1], name + "[1]");
    d.chosen = u32(value[2], name + "[2]");
    d.subject = decimal(value[3], name + "[3]");
    if (d.chosen >= d.options) {
      fail("field '" + name + "' chose option " + std::to_string(d.chosen) + " of only " +
           std::to_string(d.options));
    }
    return d;
  }

  std::vector<decision> decisions(const json& value) const {
    array_of(value, "decisions");
    std::vector<decision> out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      out.push_back(one_decision(value[i], "decisions[" + std::to_string(i) + "]"));
    }
    return out;
  }

  void check_hash(const json& value, const std::vector<decision>& decisions) const {
    const bool shaped = value.is_string() && value.get_ref<const std::string&>().size() == 16 &&
                        value.get_ref<const std::string&>().find_first_not_of("0123456789abcdef") ==
                            std::string::npos;
    if (!shaped) fail("field 'decision_hash' must be a string of 16 lowercase hex digits");
    const std::string computed = spec::hex16(decision_hash(decisions));
    if (value.get_ref<const std::string&>() != computed) {
      fail("decision_hash " + value.get<std::string>() +
           " does not match the decisions (they hash to " + computed +
           "): the trace was edited or corrupted");
    }
  }

  std::optional<finding> found(const json& value) const {
    if (value.is_null()) return std::nullopt;
    if (!value.is_object()) fail("field 'finding' must be null or an object");
    finding f;
    f.invariant = string(member(value, "invariant", "finding.invariant"), "finding.invariant");
    f.message = string(member(value, "message", "finding.message"), "finding.message");
    const json& evidence =
        array_of(member(value, "evidence", "finding.evidence"), "finding.evidence");
    for (std::size_t i = 0; i < evidence.size(); ++i) {
      f.evidence.push_back(static_cast<std::size_t>(
          u64(evidence[i], "finding.evidence[" + std::to_string(i) + "]")));
    }
    f.details = strings(member(value, "details", "finding.details"), "finding.details");
    return f;
  }

  std::string file_;
};

}  // namespace

json to_json(const trace& t) {
  json actors = json::array();
  for (std::size_t i = 0; i < t.actors.size(); ++i) {
    actors.push_back(json{{"id", i},
                          {"rank", t.actors[i].rank},
                          {"role", t.actors[i].role},
                          {"index", t.actors[i].index}});
  }
  json decisions = json::array();
  for (const decision& d : t.decisions) {
    decisions.push_back(json::array(
        {static_cast<unsigned>(d.kind), d.options, d.chosen, std::to_string(d.subject)}));
  }
  json document{{"format", spec::trace_format_name},
              {"version", spec::trace_format_version},
              {"kvsim_version", t.kvsim_version},
              {"scenario", t.scenario},
              {"variant", t.variant},
              {"strategy", t.strategy},
              {"seed", std::to_string(t.seed)},
              {"fault_profile", fault_profile_json(t.faults)},
              {"decision_hash", spec::hex16(decision_hash(t.decisions))},
              {"actors", std::move(actors)},
              {"decisions", std::move(decisions)},
              {"steps", t.steps},
              {"events", t.events},
              {"finding", t.found ? finding_json(*t.found) : json(nullptr)}};
  if (t.checkers != "all") document["checkers"] = t.checkers;
  if (t.origin != "simulator") document["origin"] = t.origin;
  return document;
}

void write_trace(const std::filesystem::path& path, const trace& t, link_policy links) {
  std::string text;
  try {
    text = render(to_json(t));
  } catch (const json::exception& e) {
    throw trace_error(display(path) + ": cannot write trace: " + spec::one_line(e.what()));
  }
  write_file_atomically(path, text, "trace", links);
}

trace load_trace(const std::filesystem::path& path) {
  const loader load(path);
  try {
    const json document = load.parse(load.read(path));
    load.check_format_and_version(document);
    return load.fields(document);
  } catch (const json::exception& e) {
    // Every shape is checked before it is read; this is the net under that promise.
    load.fail("unexpected JSON error: " + spec::json_error_detail(e.what()));
  }
}

}  // namespace kvsim::sim
