#pragma once
// CLI11 validators from common/units' and the registries' parsers, so that a bad size, rate,
// duration or spec fails at parse time with the parser's own message ("expected a duration like
// "250ms", got "10" ...").

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

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

// An option parsed once, as it is read: `parse(text)` (a Result) goes into `target`, and a bad
// value fails the command line with the parser's message. Repeating the option keeps the last.
template <typename T, typename Parse>
CLI::Option* add_parsed(CLI::App* app, const std::string& name, T& target, Parse parse, const std::string& help,
                        const char* type_name) {
  return app
      ->add_option_function<std::string>(
          name,
          [&target, parse, name](const std::string& text) {
            auto r = parse(text);
            if (!r) {
              throw CLI::ValidationError(name, r.error().message);
            }
            target = std::move(*r);
          },
          help)
      ->type_name(type_name);
}

// The same for a repeatable option: every value parsed into `target`, in order (the first use
// replaces the default).
template <typename T, typename Parse>
CLI::Option* add_parsed_list(CLI::App* app, const std::string& name, std::vector<T>& target, Parse parse,
                             const std::string& help, const char* type_name) {
  return app
      ->add_option_function<std::vector<std::string>>(
          name,
          [&target, parse, name](const std::vector<std::string>& texts) {
            target.clear();
            for (const std::string& text : texts) {
              auto r = parse(text);
              if (!r) {
                throw CLI::ValidationError(name, r.error().message);
              }
              target.push_back(std::move(*r));
            }
          },
          help)
      ->type_name(type_name);
}

}  // namespace contend::tools
