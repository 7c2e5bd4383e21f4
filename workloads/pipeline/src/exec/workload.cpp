// The workload's one table: each member a row, read by parse_workload and written by
// workload_json from the same row, so the two cannot disagree.

#include "contend/pipeline/exec/workload.h"

#include <variant>

#include "contend/common/json.h"
#include "contend/common/units.h"
#include "contend/schedule/schedule.h"

namespace contend::pipeline {
namespace {

constexpr long long kMaxIterations = 1000000;

// A whole number in [lo, hi].
struct Count {
  long long lo;
  long long hi;
  int& (*at)(Workload&);
};
// A duration in (0, 1 h]: a stage that takes no time gives no measurement.
struct Duration {
  std::chrono::nanoseconds& (*at)(Workload&);
};
// A size in bytes, at most `hi`.
struct Size {
  std::uint64_t hi;
  std::uint64_t& (*at)(Workload&);
};
// A spec of a registry (backends, transports).
struct Named {
  Result<Spec> (*parse)(std::string_view);
  Spec& (*at)(Workload&);
};

// Which part of the workload a member describes: what a stage's costs depend on (its shape, its
// emulated times, its model) or only how long the run is.
enum class Part { kStage, kLength, kEmulated, kModel };

struct Field {
  const char* key;
  Part part;
  std::variant<Count, Duration, Size, Named> kind;
};

// clang-format off
const Field kFields[] = {
  {"stages", Part::kStage, Count{2, schedule::kMaxRanks, [](Workload& w) -> int& { return w.stages; }}},
  {"microbatches", Part::kLength, Count{1, schedule::kMaxMicrobatches, [](Workload& w) -> int& { return w.microbatches; }}},
  {"iterations", Part::kLength, Count{1, kMaxIterations, [](Workload& w) -> int& { return w.iterations; }}},
  {"warmup", Part::kLength, Count{0, kMaxIterations, [](Workload& w) -> int& { return w.warmup; }}},
  {"backend", Part::kStage, Named{[](std::string_view t) { return backends().parse(t); }, [](Workload& w) -> Spec& { return w.backend; }}},
  {"transport", Part::kStage, Named{[](std::string_view t) { return transports().parse(t); }, [](Workload& w) -> Spec& { return w.transport; }}},
  {"fwd", Part::kEmulated, Duration{[](Workload& w) -> std::chrono::nanoseconds& { return w.emulated.forward; }}},
  {"bwd", Part::kEmulated, Duration{[](Workload& w) -> std::chrono::nanoseconds& { return w.emulated.backward; }}},
  {"activation", Part::kEmulated, Size{kMaxActivationBytes, [](Workload& w) -> std::uint64_t& { return w.emulated.activation_bytes; }}},
  {"hidden", Part::kModel, Count{1, kMaxHidden, [](Workload& w) -> int& { return w.model.hidden; }}},
  {"layers", Part::kModel, Count{1, kMaxLayers, [](Workload& w) -> int& { return w.model.layers; }}},
  {"microbatch_size", Part::kModel, Count{1, kMaxTokens, [](Workload& w) -> int& { return w.model.microbatch_size; }}},
  {"seq_len", Part::kModel, Count{1, kMaxTokens, [](Workload& w) -> int& { return w.model.seq_len; }}},
};
// clang-format on

Result<void> read(const JsonReader& r, const char* key, const Count& c, Workload& w) {
  return read_count(r, key, c.lo, c.hi, c.at(w));
}

Result<void> read(const JsonReader& r, const char* key, const Duration& d, Workload& w) {
  auto v = r.optional_duration(key);
  if (!v || !*v) {
    return v ? Result<void>() : Result<void>(v.error());
  }
  if (**v <= std::chrono::nanoseconds(0) || **v > std::chrono::hours(1)) {
    return r.error_at(key,
                      "expected a duration above 0 and at most 1h (a stage that takes no time gives no "
                      "measurement), got " +
                          format_duration(**v));
  }
  d.at(w) = **v;
  return {};
}

Result<void> read(const JsonReader& r, const char* key, const Size& s, Workload& w) {
  auto v = r.optional_size_bytes(key);
  if (!v || !*v) {
    return v ? Result<void>() : Result<void>(v.error());
  }
  if (**v > s.hi) {
    return r.error_at(key, "expected at most " + format_size(s.hi) + ", got " + format_size(**v));
  }
  s.at(w) = **v;
  return {};
}

Result<void> read(const JsonReader& r, const char* key, const Named& n, Workload& w) {
  auto text = r.optional_string(key);
  if (!text || !*text) {
    return text ? Result<void>() : Result<void>(text.error());
  }
  auto spec = n.parse(**text);
  if (!spec) {
    return r.error_at(key, spec.error().message);
  }
  n.at(w) = std::move(*spec);
  return {};
}

nlohmann::ordered_json write(const Count& c, Workload& w) {
  return c.at(w);
}
nlohmann::ordered_json write(const Duration& d, Workload& w) {
  return std::to_string(d.at(w).count()) + "ns";
}
nlohmann::ordered_json write(const Size& s, Workload& w) {
  return std::to_string(s.at(w)) + "B";
}
nlohmann::ordered_json write(const Named& n, Workload& w) {
  return n.at(w).str();
}

// What no single member says: a shape the schedules take, a model that fits its stages.
Result<void> check_whole(const JsonReader& r, const Workload& w) {
  if (auto ok = schedule::check_shape(w.stages, w.microbatches); !ok) {
    return r.error(ok.error().message);
  }
  if (w.uses_model()) {
    if (auto ok = validate_model(w.model, w.stages); !ok) {
      return r.error(ok.error().message);
    }
  }
  return {};
}

}  // namespace

Workload::Workload()
    : backend(backends().parse("emulated").value()),
      transport(transports().parse("tcp").value()),
      emulated{std::chrono::milliseconds(10), std::chrono::milliseconds(20), 1 << 20} {}

bool Workload::uses_model() const {
  const auto* kind = backends().find(backend);
  return kind != nullptr && kind->kind.uses_model;
}

bool operator==(const Workload& a, const Workload& b) {
  return workload_json(a) == workload_json(b);
}

const std::vector<std::string>& workload_keys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (const Field& f : kFields) {
      keys.emplace_back(f.key);
    }
    return keys;
  }();
  return kKeys;
}

Result<Workload> parse_workload(const JsonReader& r) {
  if (auto ok = r.check_keys(workload_keys()); !ok) {
    return ok.error();
  }
  Workload w;
  for (const Field& f : kFields) {
    auto ok = std::visit([&](const auto& kind) { return read(r, f.key, kind, w); }, f.kind);
    if (!ok) {
      return ok.error();
    }
  }
  if (auto ok = check_whole(r, w); !ok) {
    return ok.error();
  }
  return w;
}

namespace {

// The members of the parts `keep` says, as parse_workload reads them.
nlohmann::ordered_json json_of(const Workload& w, bool (*keep)(Part, const Workload&)) {
  Workload copy = w;  // the rows' accessors reach members of a Workload they may change
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Field& f : kFields) {
    if (keep(f.part, w)) {
      out[f.key] = std::visit([&](const auto& kind) { return write(kind, copy); }, f.kind);
    }
  }
  return out;
}

}  // namespace

Result<Workload> parse_workload_json(const std::string& text, const std::string& source) {
  auto json = parse_json(text, source);
  if (!json) {
    return json.error();
  }
  return parse_workload(JsonReader(*json, source));
}

nlohmann::ordered_json workload_json(const Workload& w) {
  return json_of(w, [](Part, const Workload&) { return true; });
}

nlohmann::ordered_json stage_costs_json(const Workload& w) {
  return json_of(w, [](Part part, const Workload& of) {
    return part == Part::kStage || part == (of.uses_model() ? Part::kModel : Part::kEmulated);
  });
}

}  // namespace contend::pipeline
