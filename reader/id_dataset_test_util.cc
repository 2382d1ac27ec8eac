#include "reader/id_dataset_test_util.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "record/index.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace testing {

std::string MakeIdDataset(int shards, int per_shard) {
  std::string dir = MakeTempDir();
  int64_t next = 0;
  for (int s = 0; s < shards; ++s) {
    std::string path = absl::StrCat(dir, "/data-", s, ".tfrecord");
    auto w = RecordWriter::Create(path, {});
    EXPECT_TRUE(w.ok());
    for (int k = 0; k < per_shard; ++k) {
      ExampleEncoder e;
      e.AddInt64("id", next++);
      EXPECT_TRUE((*w)->WriteRecord(e.Finish()).ok());
    }
    EXPECT_TRUE(WriteIndexFile(IndexPathFor(path), (*w)->index()).ok());
    EXPECT_TRUE((*w)->Close().ok());
  }
  return dir;
}

}  // namespace testing
}  // namespace shardfeed
