#include "converter/pickle_reader.h"

#include "gtest/gtest.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

// A hand-written protocol-2 pickle of {b'labels': [3, 300, 70000],
// b'data': numpy uint8 array of shape (2, 3)}, in the opcode layout CIFAR's
// python batches use.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);  // keeps embedded NULs
}

std::string CifarLikePickle() {
  return Bytes("\x80\x02}q\x01(U\x06labelsq\x02]q\x03(K\x03M\x2c\x01J\x70\x11\x01\x00" "e"
               "U\x04" "dataq\x04"
               "cnumpy.core.multiarray\n_reconstruct\nq\x05"
               "cnumpy\nndarray\nq\x06K\x00\x85U\x01" "b\x87R"
               "(K\x01K\x02K\x03\x86"
               "cnumpy\ndtype\nU\x02u1K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff"
               "\xff\xffK\x00tb"
               "\x89T\x06\x00\x00\x00" "abcdeftbu.");
}

TEST(Pickle, ParsesCifarLayout) {
  std::string bytes = CifarLikePickle();
  auto root = ParsePickle(bytes, "batch");
  ASSERT_TRUE(root.ok()) << root.status();
  const PickleValue* labels = (*root)->Find("labels");
  ASSERT_NE(labels, nullptr);
  ASSERT_EQ(3u, labels->items.size());
  EXPECT_EQ(3, labels->items[0]->integer);
  EXPECT_EQ(300, labels->items[1]->integer);
  EXPECT_EQ(70000, labels->items[2]->integer);
  const PickleValue* data = (*root)->Find("data");
  ASSERT_NE(data, nullptr);
  auto array = AsNumpyUint8Array(*data, "batch");
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ((std::vector<int64_t>{2, 3}), array->shape);
  EXPECT_EQ("abcdef", array->data);
}

TEST(Pickle, EveryTruncationIsAnErrorWithFileAndOffset) {
  std::string bytes = CifarLikePickle();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto root = ParsePickle(bytes.substr(0, n), "cut");
    ASSERT_FALSE(root.ok()) << "length " << n;
    EXPECT_EQ(absl::StatusCode::kDataLoss, root.status().code());
    EXPECT_EQ(0u, root.status().message().find("cut:")) << root.status().message();
  }
}

TEST(Pickle, UnknownOpcodeIsRejected) {
  auto root = ParsePickle(std::string("\x80\x02\x95", 3), "f");  // FRAME (protocol 4)
  ASSERT_FALSE(root.ok());
  EXPECT_NE(std::string::npos, root.status().message().find("f:2: pickle opcode 0x95"));
}

TEST(Pickle, RealCifarBatchWhenAvailable) {
  const char* datasets = std::getenv("SHARDFEED_DATASETS");
  if (datasets == nullptr) GTEST_SKIP() << "SHARDFEED_DATASETS not set (../shared/datasets absent)";
  std::string bytes = testing::ReadBytes(std::string(datasets) + "/cifar10-py/data_batch_1");
  auto root = ParsePickle(bytes, "data_batch_1");
  ASSERT_TRUE(root.ok()) << root.status();
  auto array = AsNumpyUint8Array(*(*root)->Find("data"), "data_batch_1");
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ((std::vector<int64_t>{1017, 3072}), array->shape);
  EXPECT_EQ(1017u, (*root)->Find("labels")->items.size());
  std::string truncated =
      testing::ReadBytes(std::string(datasets) + "/cifar10-py/truncated/data_batch_1");
  auto cut = ParsePickle(truncated, "truncated/data_batch_1");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(std::string::npos, cut.status().message().find("truncated pickle")) << cut.status();
}

}  // namespace
}  // namespace shardfeed
