#include "spec/engine_parser.h"

#include "spec/scenario_names.h"

namespace kvsim::scenarios::detail {
namespace {

constexpr const char* engine_path = "engine";
// Bounds that keep a scenario's world small enough to search (each preemption adds a
// generation per request; each step a read of every page).
constexpr std::uint64_t decode_steps_max = 64;
constexpr std::uint64_t preemptions_max_max = 8;
constexpr std::uint64_t store_table_max = 1u << 16;

std::string engine_field(const char* key) { return member_path(engine_path, key); }

}  // namespace

engine_spec parse_engine(const json_reader& in, const nlohmann::json& value) {
  in.only_keys(value, engine_path,
               {"decode_steps", "store_on_finish", "preemption", "preemptions_max",
                "store_jobs_max", "store_completions_remembered", "pool_full"});
  engine_spec engine;
  if (const json* steps = json_reader::optional(value, "decode_steps")) {
    engine.decode_steps =
        static_cast<std::uint32_t>(in.integer(*steps, engine_field("decode_steps"), 0, decode_steps_max));
  }
  if (const json* store = json_reader::optional(value, "store_on_finish")) {
    engine.store_on_finish = in.boolean(*store, engine_field("store_on_finish"));
  }
  if (const json* mode = json_reader::optional(value, "preemption")) {
    engine.preemption =
        static_cast<preemption_mode>(in.one_of(*mode, engine_field("preemption"), preemption_names));
  }
  if (const json* most = json_reader::optional(value, "preemptions_max")) {
    engine.preemptions_max =
        static_cast<std::uint32_t>(in.integer(*most, engine_field("preemptions_max"), 1, preemptions_max_max));
  } else if (engine.preemption != preemption_mode::none) {
    engine.preemptions_max = 1;
  }
  if (const json* jobs = json_reader::optional(value, "store_jobs_max")) {
    engine.store_jobs_max =
        static_cast<std::uint32_t>(in.integer(*jobs, engine_field("store_jobs_max"), 1, store_table_max));
  }
  if (const json* kept = json_reader::optional(value, "store_completions_remembered")) {
    engine.store_completions_remembered = static_cast<std::uint32_t>(
        in.integer(*kept, engine_field("store_completions_remembered"), 1, store_table_max));
  }
  if (const json* policy = json_reader::optional(value, "pool_full")) {
    engine.pool_full =
        static_cast<pool_full_policy>(in.one_of(*policy, engine_field("pool_full"), pool_full_names));
  }
  return engine;
}

void check_engine(const json_reader& in, const scenario_spec& spec) {
  const engine_spec& engine = spec.engine;
  if (engine == engine_spec{}) return;
  if (spec.kind != scenario_kind::transfer) {
    in.fail_field(catalogue_problem::out_of_range, engine_path,
                  "is for transfer scenarios only (decode ranks run the requests)");
  }
  if (engine.preemption == preemption_mode::none && engine.preemptions_max > 0) {
    in.fail_field(catalogue_problem::out_of_range, engine_field("preemptions_max"),
                  "needs a preemption mode (engine.preemption recompute or offload)");
  }
  if (engine.preemption != preemption_mode::none) {
    if (engine.decode_steps < 2) {
      in.fail_field(catalogue_problem::out_of_range, engine_field("preemption"),
                    "needs engine.decode_steps of at least 2 (a step to preempt after, one to "
                    "resume for)");
    }
    if (spec.topology.concurrency < 2) {
      in.fail_field(catalogue_problem::out_of_range, engine_field("preemption"),
                    "needs topology.concurrency of at least 2: a rank preempts to make room for "
                    "another request");
    }
  }
  for (std::size_t r = 0; r < spec.requests.size(); ++r) {
    if (engine.runs_requests() && spec.requests[r].pin) {
      in.fail_field(catalogue_problem::out_of_range, engine_path,
                    "cannot run pinned requests (requests[" + std::to_string(r) +
                        "].pin): a logged timeline says where each page went");
    }
  }
}

nlohmann::json engine_json(const engine_spec& engine) {
  nlohmann::json out = nlohmann::json::object();
  const engine_spec plain;
  if (engine.decode_steps != plain.decode_steps) out["decode_steps"] = engine.decode_steps;
  if (engine.store_on_finish) out["store_on_finish"] = true;
  if (engine.preemption != plain.preemption) out["preemption"] = to_string(engine.preemption);
  if (engine.preemptions_max != plain.preemptions_max) out["preemptions_max"] = engine.preemptions_max;
  if (engine.store_jobs_max != plain.store_jobs_max) out["store_jobs_max"] = engine.store_jobs_max;
  if (engine.store_completions_remembered != plain.store_completions_remembered) {
    out["store_completions_remembered"] = engine.store_completions_remembered;
  }
  if (engine.pool_full != plain.pool_full) out["pool_full"] = to_string(engine.pool_full);
  return out;
}

}  // namespace kvsim::scenarios::detail
