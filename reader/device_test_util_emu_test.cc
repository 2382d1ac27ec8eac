// device_test_util under SHARDFEED_REQUIRE_GPU=1 (tools/device_check.sh sets
// it on a GPU machine), on the emulated runtime with no device
// (SHARDFEED_CUDA_EMU_DEVICES=0, set by the BUILD rule): a GPU test that
// would skip or fall back to host memory fails instead. Before, nothing read
// the variable and such tests passed green on a silent fallback.
#include <cstdlib>
#include <string>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "reader/device_test_util.h"
#include "reader/id_dataset_test_util.h"
#include "reader/loader.h"

namespace shardfeed {
namespace {

class RequireGpu : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("SHARDFEED_REQUIRE_GPU"); }
};

TEST_F(RequireGpu, AMissingGpuIsAFailureNotASkip) {
  EXPECT_FALSE(DeviceAvailable(0));  // not required: no failure, the test may skip
  EXPECT_TRUE(DeviceAvailable(-1));
  setenv("SHARDFEED_REQUIRE_GPU", "1", 1);
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(DeviceAvailable(0)),
                          "SHARDFEED_REQUIRE_GPU=1 but GPU 0 is not available");
  EXPECT_TRUE(DeviceAvailable(-1));  // the host is always there
}

TEST_F(RequireGpu, ALoaderFallingBackToHostMemoryIsAFailure) {
  auto ds = Dataset::Open({testing::MakeIdDataset(1, 16)});
  ASSERT_TRUE(ds.ok()) << ds.status();
  LoaderOptions o;
  o.features = *ParseSpec("id:int64");
  o.batch_size = 4;
  o.device = 0;
  auto loader = Loader::Create(*ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ(-1, (*loader)->device());  // the emulator has no device here
  EXPECT_TRUE(FellBackToHost(**loader));  // not required: allowed
  setenv("SHARDFEED_REQUIRE_GPU", "1", 1);
  EXPECT_NONFATAL_FAILURE(EXPECT_TRUE(FellBackToHost(**loader)),
                          "SHARDFEED_REQUIRE_GPU=1 but the loader fell back to host memory");
}

}  // namespace
}  // namespace shardfeed
