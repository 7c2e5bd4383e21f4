#include "contend/runner/experiment/experiment.h"

#include <cstdio>
#include <string_view>

#include "contend/common/fd.h"
#include "contend/common/fnv.h"
#include "contend/common/json.h"

namespace contend::runner {
namespace {

// A file as the fingerprint reads it: its JSON, keys in order, without "description" (layout and
// prose change no result), else its bytes.
std::string fingerprinted(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    return {};
  }
  auto json = parse_json(*text, path);
  if (!json || !json->is_object()) {
    return *text;
  }
  json->erase("description");
  return json->dump();
}

}  // namespace

std::string files_fingerprint(const Experiment& e) {
  std::uint64_t h = kFnv1aStart;
  std::vector<std::string> files{e.source};
  files.insert(files.end(), e.scenario_files.begin(), e.scenario_files.end());
  for (const std::string& file : files) {
    h = fnv1a(std::string_view("\0", 1), fnv1a(fingerprinted(file), h));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace contend::runner
