#pragma once
// Progress of a run on stderr: one line per cell with the time elapsed and an estimate of what is
// left, redrawn in place on a terminal, plain lines otherwise (logs, CI). Not thread-safe.

#include <chrono>
#include <cstddef>
#include <string>

namespace contend::runner {

class Progress {
 public:
  explicit Progress(std::size_t total);
  // Cell `i` (0-based) of the matrix starts; `ran` cells ran before it in this process.
  void cell(std::size_t i, const std::string& id, std::size_t ran);
  // Ends the redrawn line (before anything else is printed).
  void end();

 private:
  std::size_t total_;
  bool tty_;
  bool open_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace contend::runner
