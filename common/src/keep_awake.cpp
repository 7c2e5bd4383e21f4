#include "contend/common/keep_awake.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace contend {
namespace {

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

Result<std::unique_ptr<KeepAwake>> KeepAwake::start() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    return errno_error(errno, "sched_getaffinity");
  }
  std::unique_ptr<KeepAwake> k(new KeepAwake());
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) {
      continue;
    }
    k->threads_.emplace_back([self = k.get(), cpu] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      (void)::sched_setaffinity(0, sizeof one, &one);  // unpinned, it still keeps some CPU awake
      const sched_param none{};
      const bool lowered = ::sched_setscheduler(0, SCHED_IDLE, &none) == 0;  // this thread only
      if (!lowered) {
        self->refused_.store(errno);
      }
      self->ready_.fetch_add(1);
      while (lowered && !self->stop_.load(std::memory_order_relaxed)) {
        relax();
      }
    });
  }
  while (k->ready_.load() < static_cast<int>(k->threads_.size())) {
    std::this_thread::yield();
  }
  if (const int err = k->refused_.load(); err != 0) {
    return make_error(Errc::kUnsupported,
                      std::string("keeping the CPUs awake: SCHED_IDLE refused: ") + std::strerror(err));
  }
  return k;
}

KeepAwake::~KeepAwake() {
  stop_.store(true);
  for (std::thread& t : threads_) {
    t.join();
  }
}

}  // namespace contend
