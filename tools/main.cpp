// contend: one binary, one subcommand per job. Parses, dispatches, and is the only catch-all.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <utility>
#include <vector>

#include "build_info.h"
#if CONTEND_BUILT_CUDA
#include "contend/pipeline_cuda/plugin.h"
#endif
#include "commands.h"
#include "contend/pipeline/compute/backend.h"
#include "contend/pipeline/transport/transport.h"

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
    std::vector<std::pair<CLI::App*, std::function<int()>>> subcommands;
    for (const auto& c : contend::tools::commands().items()) {
      CLI::App* sub = app.add_subcommand(c.entry.name, c.entry.help);
      subcommands.emplace_back(sub, c.kind.add(*sub));
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    if (version) {
      print_version();
      return 0;
    }
    // A relative state folder names another folder from another working directory: a run made
    // here would not be found by `emu down` from there.
    if (const char* dir = std::getenv("CONTEND_STATE_DIR"); dir != nullptr && *dir != '\0' && *dir != '/') {
      std::fprintf(stderr,
                   "contend: CONTEND_STATE_DIR=%s: give an absolute path (a relative one is another folder "
                   "from elsewhere, and runs made here would not be found from there)\n",
                   dir);
      return 2;
    }
    for (const auto& [sub, run] : subcommands) {
      if (sub->parsed()) {
        return run();
      }
    }
    std::cout << app.help();
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "contend: %s\n", e.what());
    return 1;
  }
}
