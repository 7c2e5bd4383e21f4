#include "contend/common/spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "contend/common/units.h"

namespace contend {
namespace {

std::string bound_text(double v) {
  if (std::isinf(v)) {
    return "";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_text(const ParamDef& d) {
  const std::string lo = bound_text(d.min);
  const std::string hi = bound_text(d.max);
  if (d.type == ParamType::kSize) {
    return hi.empty() ? "a size of at least " + format_size(static_cast<std::uint64_t>(d.min))
                      : "a size from " + format_size(static_cast<std::uint64_t>(d.min)) + " to " +
                            format_size(static_cast<std::uint64_t>(d.max));
  }
  const bool whole = d.type == ParamType::kInteger || d.type == ParamType::kIntegerList;
  const std::string what = whole ? "a whole number" : "a number";
  return hi.empty() ? what + " >= " + lo : what + " from " + lo + " to " + hi;
}

// The value of `text` for `d`, or why not. Defaults are not range-checked: a default may stand for
// "unset" (kmax=0: every micro-batch) where a user must not write it.
Result<double> convert(const ParamDef& d, const std::string& text, bool given) {
  const auto bad = [&](const std::string& expected) {
    return make_error(Errc::kInvalidArgument, d.key + ": expected " + expected + ", got \"" + excerpt(text) + "\"");
  };
  double v = 0;
  switch (d.type) {
    case ParamType::kInteger: {
      long long n = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
        return bad(range_text(d));
      }
      v = static_cast<double>(n);
      break;
    }
    case ParamType::kNumber: {
      char* end = nullptr;
      v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v)) {
        return bad(range_text(d));
      }
      break;
    }
    case ParamType::kSize: {
      auto bytes = parse_size_bytes(text);
      if (!bytes) {
        return make_error(Errc::kInvalidArgument, d.key + ": " + bytes.error().message);
      }
      v = static_cast<double>(*bytes);
      break;
    }
    case ParamType::kChoice: {
      std::string list;
      for (const auto& c : d.choices) {
        if (c == text) {
          return 0.0;
        }
        list += (list.empty() ? "" : ", ") + c;
      }
      return bad("one of " + list);
    }
    case ParamType::kText:
      if (text.empty()) {
        return bad("a value");
      }
      return 0.0;
    case ParamType::kIntegerList:
      return 0.0;  // convert_list
  }
  if (given && (v < d.min || v > d.max)) {
    return bad(range_text(d));
  }
  return v;
}

// The entries of a kIntegerList value, or why not; the default "" is the empty list. Entries are
// digits only, so no sign, space or exponent gets through; defaults are not range-checked.
Result<std::vector<std::int64_t>> convert_list(const ParamDef& d, const std::string& text, bool given) {
  const std::string expected = "expected '/'-separated entries, each " + range_text(d);
  std::vector<std::int64_t> out;
  if (text.empty()) {
    if (given) {
      return make_error(Errc::kInvalidArgument, d.key + ": " + expected + ", got \"\"");
    }
    return out;
  }
  const std::size_t entries = static_cast<std::size_t>(std::count(text.begin(), text.end(), '/')) + 1;
  if (entries > d.max_entries) {
    return make_error(Errc::kInvalidArgument, d.key + ": " + std::to_string(entries) + " entries; expected at most " +
                                                  std::to_string(d.max_entries));
  }
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t slash = std::min(text.find('/', start), text.size());
    const std::string entry = text.substr(start, slash - start);
    const std::string which = d.key + ": entry " + std::to_string(out.size() + 1);
    long long n = 0;
    const bool digits =
        !entry.empty() && std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; });
    const auto [ptr, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), n);
    if (!digits || ec != std::errc() || (given && (static_cast<double>(n) < d.min || static_cast<double>(n) > d.max))) {
      return make_error(Errc::kInvalidArgument,
                        which + (entry.empty() ? " is empty" : " is \"" + entry + "\"") + "; " + expected);
    }
    out.push_back(n);
    start = slash + 1;
  }
  return out;
}

// Sets `v` (its text given or defaulted) to the value `d` declares: its number or its entries,
// and a list's text to its canonical form ("02/0" -> "2/0").
Result<void> fill(const ParamDef& d, Spec::Value& v) {
  if (d.type == ParamType::kIntegerList) {
    auto list = convert_list(d, v.text, v.given);
    if (!list) {
      return list.error();
    }
    v.list = std::move(*list);
    v.text.clear();
    for (const std::int64_t n : v.list) {
      v.text += (v.text.empty() ? "" : "/") + std::to_string(n);
    }
    return {};
  }
  auto number = convert(d, v.text, v.given);
  if (!number) {
    return number.error();
  }
  v.number = *number;
  return {};
}

const SpecEntry* find_entry(std::string_view name, const std::vector<const SpecEntry*>& entries) {
  for (const SpecEntry* e : entries) {
    if (e->name == name) {
      return e;
    }
  }
  return nullptr;
}

std::string known(const std::vector<const SpecEntry*>& entries) {
  std::string out;
  for (const SpecEntry* e : entries) {
    out += (out.empty() ? "" : ", ") + syntax(*e);
  }
  return out;
}

// Splits the text after ':' into (key, value) items; a bare value is the first parameter's.
Result<std::vector<std::pair<std::string, std::string>>> split_items(std::string_view rest, const SpecEntry& e) {
  std::vector<std::pair<std::string, std::string>> out;
  if (e.params.empty()) {
    return make_error(Errc::kInvalidArgument, e.name + " takes no parameters");
  }
  if (e.params.front().rest) {
    out.emplace_back(e.params.front().key, std::string(rest));
    return out;
  }
  std::size_t start = 0;
  while (start <= rest.size()) {
    const std::size_t comma = rest.find(',', start);
    const std::string item(
        rest.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos && out.empty() && (comma == std::string_view::npos)) {
      out.emplace_back(e.params.front().key, item);  // "kfkb:2"
    } else if (eq == std::string::npos || eq == 0) {
      return make_error(Errc::kInvalidArgument, "expected key=value, got \"" + excerpt(item) + "\"");
    } else {
      out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return out;
}

}  // namespace

ParamDef ParamDef::integer(std::string key, std::string help, std::optional<std::string> fallback, double min,
                           double max) {
  ParamDef d;
  d.key = std::move(key);
  d.type = ParamType::kInteger;
  d.help = std::move(help);
  d.fallback = std::move(fallback);
  d.min = min;
  d.max = max;
  return d;
}

ParamDef ParamDef::number(std::string key, std::string help, std::optional<std::string> fallback, double min,
                          double max) {
  ParamDef d = integer(std::move(key), std::move(help), std::move(fallback), min, max);
  d.type = ParamType::kNumber;
  return d;
}

ParamDef ParamDef::size(std::string key, std::string help, std::optional<std::string> fallback, double min) {
  ParamDef d = integer(std::move(key), std::move(help), std::move(fallback), min);
  d.type = ParamType::kSize;
  return d;
}

ParamDef ParamDef::choice(std::string key, std::string help, std::string fallback, std::vector<std::string> choices) {
  ParamDef d = integer(std::move(key), std::move(help), std::move(fallback), 0);
  d.type = ParamType::kChoice;
  d.choices = std::move(choices);
  return d;
}

ParamDef ParamDef::integer_list(std::string key, std::string help, std::optional<std::string> fallback, double min,
                                double max, std::size_t max_entries) {
  CONTEND_CHECK(min >= 0, "integer_list: entries are digits only, so min must be >= 0");
  ParamDef d = integer(std::move(key), std::move(help), std::move(fallback), min, max);
  d.type = ParamType::kIntegerList;
  d.max_entries = max_entries;
  return d;
}

ParamDef ParamDef::path(std::string key, std::string help) {
  ParamDef d = integer(std::move(key), std::move(help), std::nullopt, 0);
  d.type = ParamType::kText;
  d.rest = true;
  return d;
}

std::string syntax(const SpecEntry& entry) {
  std::string out = entry.name;
  std::string optional;
  std::string required;
  for (const ParamDef& d : entry.params) {
    std::string item = d.key + "=";
    switch (d.type) {
      case ParamType::kInteger:
        item += "N";
        break;
      case ParamType::kNumber:
        item += "X";
        break;
      case ParamType::kSize:
        item += "SIZE";
        break;
      case ParamType::kChoice: {
        std::string choices;
        for (const auto& c : d.choices) {
          choices += (choices.empty() ? "" : "|") + c;
        }
        item += choices;
        break;
      }
      case ParamType::kText:
        item = d.rest ? "PATH" : d.key + "=TEXT";
        break;
      case ParamType::kIntegerList:
        item += "N/N/...";
        break;
    }
    std::string& list = d.fallback ? optional : required;
    list += (list.empty() ? "" : ",") + item;
  }
  if (!required.empty()) {
    out += ":" + required;
  }
  if (!optional.empty()) {
    out += "[" + std::string(required.empty() ? ":" : ",") + optional + "]";
  }
  return out;
}

bool Spec::given(const std::string& key) const {
  for (const Value& v : values_) {
    if (v.key == key) {
      return v.given;
    }
  }
  return false;
}

bool Spec::declares(const std::string& key) const {
  return std::any_of(values_.begin(), values_.end(), [&](const Value& v) { return v.key == key; });
}

const Spec::Value& Spec::value(const std::string& key, ParamType type) const {
  for (const Value& v : values_) {
    if (v.key == key) {
      CONTEND_CHECK(v.type == type, name_ + ": parameter " + key + " read as another type");
      return v;
    }
  }
  CONTEND_CHECK(false, name_ + " declares no parameter " + key);
  return values_.front();
}

std::int64_t Spec::integer(const std::string& key) const {
  return static_cast<std::int64_t>(value(key, ParamType::kInteger).number);
}
double Spec::number(const std::string& key) const {
  return value(key, ParamType::kNumber).number;
}
std::uint64_t Spec::size(const std::string& key) const {
  return static_cast<std::uint64_t>(value(key, ParamType::kSize).number);
}
const std::vector<std::int64_t>& Spec::integers(const std::string& key) const {
  return value(key, ParamType::kIntegerList).list;
}
const std::string& Spec::text(const std::string& key) const {
  for (const Value& v : values_) {
    if (v.key == key && (v.type == ParamType::kChoice || v.type == ParamType::kText)) {
      return v.text;
    }
  }
  return value(key, ParamType::kText).text;
}

Result<Spec> parse_spec(std::string_view text, const std::vector<const SpecEntry*>& entries, const std::string& kind) {
  const std::string quoted = kind + " \"" + excerpt(text) + "\"";
  const std::size_t colon = text.find(':');
  const SpecEntry* entry = find_entry(text.substr(0, colon), entries);
  if (entry == nullptr) {
    return make_error(Errc::kInvalidArgument, quoted + ": unknown " + kind + "; known: " + known(entries));
  }
  Spec spec;
  spec.kind_ = entry->kind.empty() ? kind : entry->kind;
  spec.name_ = entry->name;
  spec.canonical_ = entry->name;
  std::vector<std::pair<std::string, std::string>> items;
  if (colon != std::string_view::npos) {
    auto split = split_items(text.substr(colon + 1), *entry);
    if (!split) {
      return with_context(split.error(), quoted);
    }
    items = std::move(*split);
  }
  for (const auto& [key, value] : items) {
    const bool declared = std::any_of(entry->params.begin(), entry->params.end(),
                                      [&key = key](const ParamDef& d) { return d.key == key; });
    if (!declared) {
      return make_error(Errc::kInvalidArgument,
                        quoted + ": unknown parameter \"" + excerpt(key) + "\"; expected " + syntax(*entry));
    }
    if (std::count_if(items.begin(), items.end(), [&key = key](const auto& i) { return i.first == key; }) > 1) {
      return make_error(Errc::kInvalidArgument, quoted + ": parameter " + key + " is given twice");
    }
  }
  for (const ParamDef& d : entry->params) {
    Spec::Value v{d.key, d.type, d.fallback.value_or(""), false, 0, {}};
    for (const auto& [key, value] : items) {
      if (key == d.key) {
        v.text = value;
        v.given = true;
      }
    }
    if (!v.given && !d.fallback) {
      return make_error(Errc::kInvalidArgument,
                        quoted + ": missing parameter " + d.key + "; expected " + syntax(*entry));
    }
    if (auto ok = fill(d, v); !ok) {
      return with_context(ok.error(), quoted);
    }
    if (v.given) {
      const bool first = spec.canonical_.size() == entry->name.size();
      spec.canonical_ += (first ? ":" : ",") + (d.rest ? v.text : d.key + "=" + v.text);
    }
    spec.values_.push_back(std::move(v));
  }
  return spec;
}

}  // namespace contend
