#include "data_dir.h"

#include <cstdlib>
#include <filesystem>

namespace contend::tools {

std::string data_path(const char* env, const std::string& relative) {
  if (const char* set = std::getenv(env)) {
    return set;
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path().parent_path() / "share" / "contend" / relative).lexically_normal().string();
}

}  // namespace contend::tools
