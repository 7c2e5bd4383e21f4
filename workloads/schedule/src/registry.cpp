#include "contend/schedule/registry.h"

#include <charconv>
#include <functional>
#include <map>
#include <optional>

#include "contend/schedule/generators.h"

namespace contend::schedule {
namespace {

struct Param {
  std::string key;
  std::optional<int> default_value;  // nullopt: required
};

struct Entry {
  GeneratorInfo info;
  std::vector<Param> params;
  std::function<Result<Schedule>(int ranks, int microbatches, const std::map<std::string, int>& values)> make;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> kTable = {
      {{"1f1b", "1f1b", "one forward, one backward (PipeDream-Flush); peak in-flight min(m, p-s)"},
       {},
       [](int p, int m, const auto&) -> Result<Schedule> { return one_f_one_b(p, m); }},
      {{"kfkb", "kfkb:k=N", "k forwards then k backwards (Ada-Grouper); peak in-flight min(m, k(p-s))"},
       {{"k", std::nullopt}},
       [](int p, int m, const auto& v) -> Result<Schedule> { return kfkb(p, m, v.at("k")); }},
      {{"gpipe", "gpipe", "all forwards, then all backwards; peak in-flight m"},
       {},
       [](int p, int m, const auto&) -> Result<Schedule> { return gpipe(p, m); }},
      {{"interleaved", "interleaved:v=N", "Megatron interleaved 1F1B, N >= 2 chunks per rank; m a multiple of p"},
       {{"v", 2}},
       [](int p, int m, const auto& v) -> Result<Schedule> { return interleaved_1f1b(p, m, v.at("v")); }},
  };
  return kTable;
}

std::string known_names() {
  std::string out;
  for (const auto& e : table()) {
    out += (out.empty() ? "" : ", ") + e.info.syntax;
  }
  return out;
}

Result<int> parse_positive(std::string_view text, const std::string& what) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1) {
    return make_error(Errc::kInvalidArgument,
                      what + ": expected a whole number >= 1, got \"" + std::string(text) + "\"");
  }
  return v;
}

}  // namespace

const std::vector<GeneratorInfo>& generators() {
  static const std::vector<GeneratorInfo> kInfos = [] {
    std::vector<GeneratorInfo> out;
    for (const auto& e : table()) {
      out.push_back(e.info);
    }
    return out;
  }();
  return kInfos;
}

Result<Schedule> make_schedule(std::string_view spec, int ranks, int microbatches) {
  const std::string quoted = "schedule \"" + std::string(spec) + "\"";
  if (ranks < 1 || microbatches < 1) {
    return make_error(Errc::kInvalidArgument, quoted + ": needs at least 1 stage and 1 micro-batch, got " +
                                                  std::to_string(ranks) + " and " + std::to_string(microbatches));
  }
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const Entry* entry = nullptr;
  for (const auto& e : table()) {
    if (e.info.name == name) {
      entry = &e;
    }
  }
  if (entry == nullptr) {
    return make_error(Errc::kInvalidArgument, quoted + ": unknown schedule; known: " + known_names());
  }
  std::map<std::string, int> values;
  if (colon != std::string_view::npos) {
    std::string_view rest = spec.substr(colon + 1);
    if (entry->params.empty()) {
      return make_error(Errc::kInvalidArgument, quoted + ": " + entry->info.name + " takes no parameters");
    }
    while (true) {
      const size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      const size_t eq = item.find('=');
      // "kfkb:2" is shorthand for the first parameter.
      const std::string key =
          eq == std::string_view::npos ? entry->params.front().key : std::string(item.substr(0, eq));
      const std::string_view value = eq == std::string_view::npos ? item : item.substr(eq + 1);
      bool known = false;
      for (const auto& p : entry->params) {
        known = known || p.key == key;
      }
      if (!known) {
        return make_error(Errc::kInvalidArgument,
                          quoted + ": unknown parameter \"" + key + "\"; expected " + entry->info.syntax);
      }
      auto parsed = parse_positive(value, quoted + ": " + key);
      if (!parsed) {
        return parsed.error();
      }
      values[key] = *parsed;
      if (comma == std::string_view::npos) {
        break;
      }
      rest = rest.substr(comma + 1);
    }
  }
  for (const auto& p : entry->params) {
    if (!values.count(p.key)) {
      if (!p.default_value) {
        return make_error(Errc::kInvalidArgument,
                          quoted + ": missing parameter " + p.key + "; expected " + entry->info.syntax);
      }
      values[p.key] = *p.default_value;
    }
  }
  return entry->make(ranks, microbatches, values);
}

}  // namespace contend::schedule
