#include "results/progress.h"

#include <unistd.h>

#include <cstdio>

namespace contend::runner {

Progress::Progress(std::size_t total) : total_(total), tty_(::isatty(2) != 0) {}

void Progress::cell(std::size_t i, const std::string& id, std::size_t ran) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = "?";
  if (ran > 0) {
    eta =
        std::to_string(static_cast<long>(elapsed / static_cast<double>(ran) * static_cast<double>(total_ - i))) + " s";
  }
  std::fprintf(stderr, "%s[%zu/%zu] %s  elapsed %ld s, about %s left%s", tty_ ? "\r\033[K" : "", i + 1, total_,
               id.c_str(), static_cast<long>(elapsed), eta.c_str(), tty_ ? "" : "\n");
  std::fflush(stderr);
  open_ = tty_;
}

void Progress::end() {
  if (open_) {
    std::fprintf(stderr, "\n");
    open_ = false;
  }
}

}  // namespace contend::runner
