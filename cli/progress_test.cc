#include "cli/progress.h"

#include "gtest/gtest.h"

namespace shardfeed::cli {
namespace {

TEST(FormatProgress, CountsInTheGivenUnit) {
  EXPECT_EQ(FormatProgress("bench", 50, 200, 5000000, "batches", 2.0),
            "bench: 50/200 batches  5.0 MB  2.5 MB/s  ETA 6s");
  EXPECT_EQ(FormatProgress("train", 128, 600, 400000, "records", 1.0),
            "train: 128/600 records  400.0 kB  400.0 kB/s  ETA 4s");
}

TEST(FormatProgress, BytesAreLabelledAsBytes) {
  const std::string line = FormatProgress("check", 250000000, 1000000000, 0, nullptr, 5.0);
  EXPECT_EQ(line, "check: 250.0 MB/1.00 GB  50.0 MB/s  ETA 15s");
  EXPECT_EQ(line.find("records"), std::string::npos);
}

TEST(FormatProgress, UnknownTotal) {
  EXPECT_EQ(FormatProgress("copy", 7, 0, 3000, "records", 1.0), "copy: 7 records  3.0 kB  3.0 kB/s");
}

}  // namespace
}  // namespace shardfeed::cli
