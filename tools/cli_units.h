#pragma once
// CLI11 validators from common/units' parsers, so that a bad size, rate or duration fails at
// parse time with the parser's own message ("expected a duration like "250ms", got "10" ...").

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

}  // namespace contend::tools
