#pragma once
// Specs: the one grammar of every name-with-options users type (schedules, policies, compute
// backends, transports): "name", "name:key=value[,key=value...]", or "name:value" for the entry's
// first parameter ("kfkb:2" is "kfkb:k=2"). A spec is parsed once, at the edge, against the
// registry entry its name picks, and then passed around as a value. Parsing is strict: unknown,
// repeated or missing keys, malformed numbers, non-integers where an integer is due and values
// out of range are errors that quote the spec and name the key. Plain values; thread-safe.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contend/common/result.h"

namespace contend {

enum class ParamType {
  kInteger,      // a whole number: "8"; "2.5" and "1e3" are errors
  kNumber,       // a finite decimal number: "0.05"
  kSize,         // a size with its unit: "64MiB"
  kChoice,       // one of `choices`
  kText,         // any text without ',' (or, with `rest`, the rest of the spec verbatim: csv:PATH)
  kIntegerList,  // whole numbers separated by '/': "0/2/1/0"; digits only (no sign, no space, no
                 // empty entry), each within [min, max], at most max_entries of them
};

struct ParamDef {
  std::string key;
  ParamType type = ParamType::kInteger;
  std::string help;                     // one line, with the unit or meaning
  std::optional<std::string> fallback;  // the default as text; nullopt: the key is required
  double min = 0;                       // kInteger, kNumber, kSize: the smallest value allowed
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // kChoice
  bool rest = false;                 // kText as the first parameter: takes everything after ':'
  std::size_t max_entries = 0;       // kIntegerList: the most entries allowed

  // The ways registries declare parameters; `fallback` nullopt makes the key required.
  static ParamDef integer(std::string key, std::string help, std::optional<std::string> fallback, double min,
                          double max = std::numeric_limits<double>::infinity());
  static ParamDef number(std::string key, std::string help, std::optional<std::string> fallback, double min,
                         double max);
  static ParamDef size(std::string key, std::string help, std::optional<std::string> fallback, double min);
  static ParamDef choice(std::string key, std::string help, std::string fallback, std::vector<std::string> choices);
  static ParamDef path(std::string key, std::string help);  // required, takes the rest: csv:PATH
  // A fallback of "" is the empty list (the registry says what that stands for).
  static ParamDef integer_list(std::string key, std::string help, std::optional<std::string> fallback, double min,
                               double max, std::size_t max_entries);
};

// What a registry knows of one name: enough to parse a spec and to document it.
struct SpecEntry {
  std::string kind;  // "schedule", "policy", "backend", "transport": names the entry in errors
  std::string name;
  std::string help;  // one line
  std::vector<ParamDef> params;
};

// "kfkb:k=N", "adaptive[:kmin=N,kmax=N,...]": how the entry is written, for help and errors.
std::string syntax(const SpecEntry& entry);

class Spec {
 public:
  Spec() = default;
  const std::string& kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // Whether `key` was written in the spec (otherwise its default applies).
  bool given(const std::string& key) const;
  // Whether the entry declares `key` (then its value, given or default, can be read).
  bool declares(const std::string& key) const;
  // The value of a declared parameter of that type; asking for an undeclared key or another type
  // is a bug (aborts). Defaults apply.
  std::int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  std::uint64_t size(const std::string& key) const;
  const std::string& text(const std::string& key) const;                    // kText and kChoice
  const std::vector<std::int64_t>& integers(const std::string& key) const;  // kIntegerList
  // The canonical text: the name, then the given keys in declaration order ("kfkb:2" -> "kfkb:k=2",
  // "adaptive" -> "adaptive"; a list's entries written as plain decimals, "slack:02/0" ->
  // "slack:extra=2/0"). Two specs are equal when their canonical texts are.
  const std::string& str() const { return canonical_; }
  bool operator==(const Spec& other) const { return canonical_ == other.canonical_; }

  struct Value {
    std::string key;
    ParamType type = ParamType::kInteger;
    std::string text;
    bool given = false;
    double number = 0;               // kInteger, kNumber, kSize
    std::vector<std::int64_t> list;  // kIntegerList
  };

 private:
  friend Result<Spec> parse_spec(std::string_view, const std::vector<const SpecEntry*>&, const std::string&);
  const Value& value(const std::string& key, ParamType type) const;
  std::string kind_;
  std::string name_;
  std::string canonical_;
  std::vector<Value> values_;  // one per declared parameter, in declaration order
};

// Parses `text` against the entry among `entries` whose name it starts with. `kind` names what is
// parsed in errors ("schedule"). kInvalidArgument quoting the text, naming the key and saying what
// is allowed (for an unknown name: every entry's syntax).
Result<Spec> parse_spec(std::string_view text, const std::vector<const SpecEntry*>& entries, const std::string& kind);

}  // namespace contend
