// Helpers for tests of the record core and its users. Test-only.
#ifndef SHARDFEED_RECORD_TEST_UTIL_H_
#define SHARDFEED_RECORD_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "record/record_reader.h"
#include "record/record_writer.h"

namespace shardfeed::testing {

// A fresh empty directory under $TEST_TMPDIR (or /tmp), unique per call.
std::string MakeTempDir();

// Writes `records` to `path` with the given options; fails the test on error.
void WriteRecords(const std::string& path, const std::vector<std::string>& records,
                  const RecordWriterOptions& options = {});

// Reads all records until OUT_OF_RANGE; the first other error is returned.
absl::StatusOr<std::vector<std::string>> ReadAllRecords(const std::string& path,
                                                        const RecordReaderOptions& options = {});

// Raw file helpers.
std::string ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, const std::string& bytes);

// Deterministic pseudo-random bytes.
std::string RandomBytes(size_t n, uint64_t seed);

// Path of a file under the workspace's runfiles (e.g. "testdata/interop/x").
std::string RunfilePath(const std::string& workspace_relative);

}  // namespace shardfeed::testing

#endif  // SHARDFEED_RECORD_TEST_UTIL_H_
