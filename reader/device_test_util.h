// Value tests that run on the host and on GPU 0 (a real one, or the
// emulated runtime's in a *_emu test): the test parameter, and a batch's
// tensors copied back to the host for comparison.
//
//   class MyTest : public ::testing::TestWithParam<int> {
//     void SetUp() override { if (!DeviceAvailable(GetParam())) GTEST_SKIP() << "no CUDA device"; }
//   };
//   INSTANTIATE_TEST_SUITE_P(OnHostAndGpu, MyTest, ::testing::Values(-1, 0), DeviceParamName);
//   ... o.device = GetParam(); ... HostValues<int64_t>(*batch, "id") ...
#ifndef SHARDFEED_READER_DEVICE_TEST_UTIL_H_
#define SHARDFEED_READER_DEVICE_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "reader/loader.h"

namespace shardfeed {

// Whether the environment says a GPU must be there (SHARDFEED_REQUIRE_GPU=1,
// as tools/device_check.sh sets on a GPU machine): then a GPU test that
// would skip or fall back to host memory fails instead.
bool GpuRequired();

// Device -1 (host memory) always; a GPU ordinal where CUDA reports it. A
// GPU that is not there is a test failure (not a skip) when GpuRequired().
bool DeviceAvailable(int device);

// Whether `loader`, asked for a GPU, delivers host memory instead (no CUDA
// device): a test failure when GpuRequired(), so a silent fallback on a GPU
// machine never passes green.
bool FellBackToHost(const Loader& loader);

// "Host" for -1, "Gpu0" for 0.
std::string DeviceParamName(const ::testing::TestParamInfo<int>& info);

// The bytes of `t` (one of b's tensors) on the host. A device tensor is
// copied back after the batch's copy event; the calling thread's current
// device is left as it was.
std::vector<char> HostBytes(const Batch& b, const Tensor& t);

// A batch's tensors with every device tensor's data copied to the host
// (`tensors` point into `bytes`).
struct HostCopy {
  std::vector<std::vector<char>> bytes;
  std::vector<Tensor> tensors;
};
HostCopy CopyToHost(const Batch& b);

// HostBytes of the tensor named `name` as values of T.
template <typename T>
std::vector<T> HostValues(const Batch& b, const std::string& name) {
  const Tensor* t = b.Find(name);
  EXPECT_NE(nullptr, t) << name;
  if (t == nullptr) return {};
  std::vector<char> bytes = HostBytes(b, *t);
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DEVICE_TEST_UTIL_H_
