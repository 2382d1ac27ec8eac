#include "record/test_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace shardfeed::testing {

std::string MakeTempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ = absl::StrCat(base ? base : "/tmp", "/shardfeed-XXXXXX");
  char* made = ::mkdtemp(templ.data());
  EXPECT_NE(made, nullptr) << "mkdtemp " << templ;
  return templ;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records,
                  const RecordWriterOptions& options) {
  auto writer = RecordWriter::Create(path, options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (const std::string& r : records) ASSERT_TRUE((*writer)->WriteRecord(r).ok());
  absl::Status s = (*writer)->Close();
  ASSERT_TRUE(s.ok()) << s;
}

absl::StatusOr<std::vector<std::string>> ReadAllRecords(const std::string& path,
                                                        const RecordReaderOptions& options) {
  auto reader = RecordReader::Open(path, options);
  if (!reader.ok()) return reader.status();
  std::vector<std::string> out;
  absl::string_view record;
  for (;;) {
    absl::Status s = (*reader)->ReadRecord(&record);
    if (absl::IsOutOfRange(s)) return out;
    if (!s.ok()) return s;
    out.emplace_back(record);
  }
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

std::string RunfilePath(const std::string& workspace_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr) return workspace_relative;
  return absl::StrCat(srcdir, "/", workspace ? workspace : "shardfeed", "/", workspace_relative);
}

}  // namespace shardfeed::testing
