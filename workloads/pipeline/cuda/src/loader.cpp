#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <optional>

#include "contend/pipeline_cuda/entries.h"
#include "contend/pipeline_cuda/plugin.h"

namespace contend::pipeline_cuda {
namespace {

// The folder of this process's executable: the plugin is built beside it.
std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    return ".";
  }
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

Result<const CudaPlugin*> load() {
  const std::string path = executable_dir() + "/" + kPluginFile;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return make_error(Errc::kUnsupported,
                      std::string("the CUDA plugin ") + path + " could not be loaded: " + ::dlerror());
  }
  using Entry = const CudaPlugin* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kPluginSymbol));
  if (entry == nullptr || entry() == nullptr || entry()->abi != kPluginAbi) {
    return make_error(Errc::kUnsupported,
                      "the CUDA plugin " + path + " is not this build's (rebuild: cmake --build --preset default)");
  }
  return entry();  // kept loaded for the process's life
}

// Whether a CUDA device is visible, asked of the driver directly (libcuda), so that checking
// costs no cuBLAS: what a runner asks before its first cell.
Result<void> device_visible() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    return make_error(Errc::kUnsupported,
                      std::string("the cuda backend needs a CUDA device: no CUDA driver here (") + ::dlerror() + ")");
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  auto init = reinterpret_cast<Init>(::dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<Count>(::dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  const int rc = init == nullptr || count == nullptr ? -1 : init(0);
  const int rc2 = rc == 0 ? count(&devices) : rc;
  ::dlclose(driver);
  if (rc2 != 0 || devices == 0) {
    return make_error(Errc::kUnsupported, "the cuda backend needs a CUDA device: " +
                                              (rc2 != 0 ? "the driver answered error " + std::to_string(rc2)
                                                        : std::string("none visible")));
  }
  return {};
}

}  // namespace

Result<const CudaPlugin*> cuda_plugin() {
  static std::mutex mutex;
  static std::optional<Result<const CudaPlugin*>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded) {
    loaded = load();
  }
  return *loaded;
}

void register_cuda_plugin(bool with_nccl) {
  pipeline::backends().add(
      cuda_backend_entry(),
      pipeline::BackendKind{.uses_model = true,
                            .needs_device = true,
                            .make = [](const Spec& spec, const pipeline::BackendContext& c,
                                       int rank) -> Result<std::unique_ptr<pipeline::ComputeBackend>> {
                              auto plugin = cuda_plugin();
                              if (!plugin) {
                                return plugin.error();
                              }
                              return (*plugin)->make_backend(spec, c, rank);
                            },
                            .available = device_visible});
  if (!with_nccl) {
    return;
  }
  pipeline::transports().add(
      nccl_transport_entry(),
      pipeline::TransportKind{
          .needs_device = true,
          .sent_when_delivered = true,
          .make = [](const Spec&, std::unique_ptr<pipeline::Transport> bootstrap, int rank, int world_size,
                     std::size_t message_floats) -> Result<std::unique_ptr<pipeline::Transport>> {
            auto plugin = cuda_plugin();
            if (!plugin) {
              return plugin.error();
            }
            if ((*plugin)->connect_nccl == nullptr) {
              return make_error(Errc::kUnsupported, "the CUDA plugin was built without NCCL");
            }
            return (*plugin)->connect_nccl(std::move(bootstrap), rank, world_size, message_floats);
          },
          .environment = nccl_environment});
}

}  // namespace contend::pipeline_cuda
