#pragma once
// Where contend finds the files it ships beside its binary (the report's script, ansible/, the
// fidelity suite's measurements): ../share/contend from the binary's folder, as `cmake --install`
// lays them out (PREFIX/bin/contend, PREFIX/share/contend/) and as the build tree mirrors it
// (build/PRESET/share/contend holds links to the source's reports/, ansible/ and experiments/).
// No source-tree path is compiled in. Thread-safe.

#include <string>

namespace contend::tools {

// $`env` when it is set, else `relative` under the data folder above.
std::string data_path(const char* env, const std::string& relative);

}  // namespace contend::tools
