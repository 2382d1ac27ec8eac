// Test helper: a dataset of indexed shards whose records carry one int64
// feature "id" = 0, 1, 2, ... in dataset order (shard by shard), so a test
// can check which records a reader delivered. Writes into a new temporary
// folder and returns it; failures are reported through gtest.
#ifndef SHARDFEED_READER_ID_DATASET_TEST_UTIL_H_
#define SHARDFEED_READER_ID_DATASET_TEST_UTIL_H_

#include <string>

namespace shardfeed {
namespace testing {

// Shards DIR/data-S.tfrecord (S = 0 .. shards-1), each with `per_shard`
// records and its .index file.
std::string MakeIdDataset(int shards, int per_shard);

}  // namespace testing
}  // namespace shardfeed

#endif  // SHARDFEED_READER_ID_DATASET_TEST_UTIL_H_
