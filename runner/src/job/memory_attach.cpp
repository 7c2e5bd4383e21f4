#include "job/memory_attach.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace contend::runner {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "deny_cross_memory_attach: no audit architecture for this target"
#endif

}  // namespace

Result<void> deny_cross_memory_attach() {
  // On this architecture, either call returns EPERM; anything else (another architecture's
  // calling convention included: its numbers differ) is allowed.
  sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  };
  const sock_fprog fprog{static_cast<unsigned short>(std::size(program)), program};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0) {
    return {};
  }
  const int err = errno;
  const std::string why = std::string("seccomp: ") + std::strerror(err);
  if (err == EACCES) {
    return make_error(Errc::kPermission, why + " (a filter without CAP_SYS_ADMIN needs no_new_privs)");
  }
  return make_error(Errc::kUnsupported, why);
}

}  // namespace contend::runner
