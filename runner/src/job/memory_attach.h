#pragma once
// Cross-memory attach: process_vm_readv and process_vm_writev copy another process's memory
// directly. Between a job's ranks on one machine that moves tensors around the scenario's links,
// whatever network namespaces the ranks are in (PyTorch RPC's TensorPipe `cma` channel; the
// single-copy paths of Open MPI's shared memory and of UCX). The rank guard denies both calls to
// the job's whole tree before it starts the command (docs/own-job.md#paths-around-the-links).

#include "contend/common/result.h"

namespace contend::runner {

// Makes process_vm_readv and process_vm_writev fail with EPERM in this thread and every process
// it starts from now on (a seccomp filter, kept across fork and exec): a library that probes the
// calls (TensorPipe reads its own memory first) takes its socket transport instead. Fails with
// kPermission without CAP_SYS_ADMIN in this process's user namespace (a filter would then need
// no_new_privs, which would also take setuid programs from the job), with kUnsupported where the
// kernel has no seccomp filters; nothing is changed then.
Result<void> deny_cross_memory_attach();

}  // namespace contend::runner
