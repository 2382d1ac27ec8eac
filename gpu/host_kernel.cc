#include "gpu/host_kernel.h"

#include <map>
#include <mutex>

namespace shardfeed::gpu {
namespace {

struct Registry {
  std::mutex mu;
  std::map<const void*, HostKernel> kernels;  // guarded by mu
};

Registry& GetRegistry() {
  static Registry* registry = new Registry;  // never destroyed: used until exit
  return *registry;
}

}  // namespace

bool RegisterHostKernel(const void* stub, HostKernel kernel) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels[stub] = kernel;
  return true;
}

const HostKernel* FindHostKernel(const void* stub) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.kernels.find(stub);
  return it == r.kernels.end() ? nullptr : &it->second;
}

}  // namespace shardfeed::gpu
