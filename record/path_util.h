// The lowest layer of file helpers, below both //record and //record/remote
// (which //record itself depends on, so they cannot share //record's code):
// folder names as typed and whole small local files (config, credentials,
// token and manifest files).
//
// Pure functions, or one blocking read; thread-safe. Errors are
// absl::Status naming the path (record/errors.h's IoError).
//
// Example:
//   std::string dir = StripTrailingSlashes("out//");  // "out"
//   absl::StatusOr<std::string> text = ReadLocalFile(dir + "/manifest.json");
#ifndef SHARDFEED_RECORD_PATH_UTIL_H_
#define SHARDFEED_RECORD_PATH_UTIL_H_

#include <string>

#include "absl/status/statusor.h"

namespace shardfeed {

// "out/" and "out//" → "out" ("/" stays "/"): a folder as the user typed it,
// ready to be joined without doubled slashes. Also endpoint URLs.
std::string StripTrailingSlashes(std::string path);

// A whole local file's bytes (read to its end, even if it grew since it was
// opened). NOT_FOUND, PERMISSION_DENIED, ... naming the path;
// INVALID_ARGUMENT for a directory.
absl::StatusOr<std::string> ReadLocalFile(const std::string& path);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_PATH_UTIL_H_
