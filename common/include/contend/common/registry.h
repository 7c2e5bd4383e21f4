#pragma once
// Registry<Kind>: the one name -> variant table behind every plug-in family (schedules, policies,
// compute backends, transports, shaping disciplines, timeline patterns, subcommands). Each item is
// a SpecEntry (name, help, parameters: common/spec.h) and a `Kind`, the family's own struct of
// factories and facts (what it needs, what it can do), declared where the variant is, so no code
// elsewhere asks for a variant by name. Built-in variants are listed in one table at construction,
// one line each; optional parts (cuda, nccl) add themselves at startup with add(), or are noted as
// not built, so that naming them says why they are missing.
// Not thread-safe for add(); lookups after startup are.

#include <algorithm>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contend/common/result.h"
#include "contend/common/spec.h"

namespace contend {

template <typename Kind>
class Registry {
 public:
  struct Item {
    SpecEntry entry;
    Kind kind;
  };

  Registry(std::string kind, std::vector<Item> items) : kind_(std::move(kind)) {
    for (Item& item : items) {
      add(std::move(item.entry), std::move(item.kind));
    }
  }

  // Adds (or replaces) the item named entry.name. Items keep their addresses.
  void add(SpecEntry entry, Kind kind) {
    entry.kind = kind_;
    missing_.erase(
        std::remove_if(missing_.begin(), missing_.end(), [&](const auto& m) { return m.first == entry.name; }),
        missing_.end());
    for (Item& item : items_) {
      if (item.entry.name == entry.name) {
        item = Item{std::move(entry), std::move(kind)};
        return;
      }
    }
    items_.push_back(Item{std::move(entry), std::move(kind)});
  }
  // Notes an optional part that this build lacks, and what building it needs.
  void note_not_built(const std::string& name, const std::string& needs) { missing_.emplace_back(name, needs); }

  const Item* find(std::string_view name) const {
    for (const Item& item : items_) {
      if (item.entry.name == name) {
        return &item;
      }
    }
    return nullptr;
  }
  const Item* find(const Spec& spec) const { return spec.kind() == kind_ ? find(spec.name()) : nullptr; }

  // Every item, in registration order (the order help and errors list them in).
  const std::deque<Item>& items() const { return items_; }
  // The names, in order; with `has`, those whose kind has it.
  template <typename Has>
  std::vector<std::string> names(Has has) const {
    std::vector<std::string> out;
    for (const Item& item : items_) {
      if (has(item.kind)) {
        out.push_back(item.entry.name);
      }
    }
    return out;
  }
  std::vector<std::string> names() const {
    return names([](const Kind&) { return true; });
  }

  std::vector<const SpecEntry*> entries() const {
    std::vector<const SpecEntry*> out;
    for (const Item& item : items_) {
      out.push_back(&item.entry);
    }
    return out;
  }

  // parse_spec against this registry; a name noted as not built is kUnsupported saying so.
  Result<Spec> parse(std::string_view text) const {
    const std::string_view name = text.substr(0, text.find(':'));
    for (const auto& [missing, needs] : missing_) {
      if (missing == name) {
        return make_error(Errc::kUnsupported, kind_ + " \"" + std::string(text) + "\" is not built here (it needs " +
                                                  needs +
                                                  " at build time; `contend --version` lists the optional parts)");
      }
    }
    return parse_spec(text, entries(), kind_);
  }
  const std::string& kind() const { return kind_; }
  // Optional parts this build lacks: (name, what building it needs).
  const std::vector<std::pair<std::string, std::string>>& not_built() const { return missing_; }

 private:
  std::string kind_;
  std::deque<Item> items_;
  std::vector<std::pair<std::string, std::string>> missing_;
};

}  // namespace contend
