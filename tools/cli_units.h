#pragma once
// CLI11 validators from common/units' and the registries' parsers, so that a bad size, rate,
// duration or spec fails at parse time with the parser's own message ("expected a duration like
// "250ms", got "10" ...").

#include <CLI/CLI.hpp>
#include <string>

#include "contend/common/units.h"

namespace contend::tools {

template <typename Parse>
CLI::Validator unit_validator(const char* name, Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        auto r = parse(text);
        return r ? std::string() : r.error().message;
      },
      name);
}

inline CLI::Validator duration_check() {
  return unit_validator("DURATION", parse_duration);
}
inline CLI::Validator rate_check() {
  return unit_validator("RATE", parse_rate_bps);
}
inline CLI::Validator size_check() {
  return unit_validator("SIZE", parse_size_bytes);
}

// A spec (common/spec.h) checked by the parser of its registry, e.g.
// spec_check("SCHEDULE", pipeline::parse_schedule_or_policy).
template <typename Parse>
CLI::Validator spec_check(const char* name, Parse parse) {
  return unit_validator(name, parse);
}

}  // namespace contend::tools
