// contend: one binary, one subcommand per job. Parses, dispatches, and is the only catch-all.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "build_info.h"
#if CONTEND_BUILT_CUDA
#include "contend/pipeline_cuda/plugin.h"
#endif
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/transport/transport.h"
#include "dpdk_command.h"
#include "emu_command.h"
#include "flows_command.h"
#include "list_command.h"
#include "report_command.h"
#include "run_command.h"
#include "sim_command.h"
#include "worker_command.h"

namespace {

// Optional parts add themselves to their registries; those not built are noted, so that naming
// one says it is not built here rather than unknown.
void register_optional_parts() {
#if CONTEND_BUILT_CUDA
  contend::pipeline_cuda::register_cuda_plugin(CONTEND_BUILT_NCCL != 0);
#else
  contend::pipeline::backends().note_not_built("cuda", "the CUDA toolkit with cuBLAS");
#endif
#if !CONTEND_BUILT_NCCL
  contend::pipeline::transports().note_not_built("nccl", "the CUDA toolkit and NCCL");
#endif
}

void print_version() {
  std::printf("contend %s (commit %s)\n", CONTEND_VERSION, CONTEND_GIT_COMMIT);
  std::printf("optional parts: cuda=%s nccl=%s dpdk=%s\n", CONTEND_BUILT_CUDA ? "built" : "not built",
              CONTEND_BUILT_NCCL ? "built" : "not built", CONTEND_BUILT_DPDK ? "built" : "not built");
#if CONTEND_BUILT_CUDA
  auto plugin = contend::pipeline_cuda::cuda_plugin();
  std::printf("cuda: %s\n", plugin ? contend::pipeline_cuda::describe((*plugin)->device_info()).c_str()
                                   : plugin.error().message.c_str());
#endif
}

}  // namespace

int main(int argc, char** argv) {
  try {
    register_optional_parts();
    CLI::App app{
        "contend: pipeline-parallel training under network contention.\n"
        "Sizes take B/KiB/MiB/GiB/kB/MB/GB, rates bit/kbit/Mbit/Gbit (bits per second), "
        "durations ns/us/ms/s/min/h."};
    app.require_subcommand(0, 1);
    bool version = false;
    app.add_flag("--version", version, "Print the version and which optional parts (cuda, nccl, dpdk) are built");
    auto run_run = contend::tools::add_run_command(app);
    auto run_report = contend::tools::add_report_command(app);
    auto run_sim = contend::tools::add_sim_command(app);
    auto run_emu = contend::tools::add_emu_command(app);
    auto run_flows = contend::tools::add_flows_command(app);
    auto run_dpdk = contend::tools::add_dpdk_command(app);
    auto run_worker = contend::tools::add_worker_command(app);
    auto run_list = contend::tools::add_list_command(app);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    if (version) {
      print_version();
      return 0;
    }
    if (app.got_subcommand("run")) {
      return run_run();
    }
    if (app.got_subcommand("report")) {
      return run_report();
    }
    if (app.got_subcommand("sim")) {
      return run_sim();
    }
    if (app.got_subcommand("emu")) {
      return run_emu();
    }
    if (app.got_subcommand("flows")) {
      return run_flows();
    }
    if (app.got_subcommand("dpdk-source")) {
      return run_dpdk();
    }
    if (app.got_subcommand("worker")) {
      return run_worker();
    }
    if (app.got_subcommand("list")) {
      return run_list();
    }
    std::cout << app.help();
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "contend: %s\n", e.what());
    return 1;
  }
}
