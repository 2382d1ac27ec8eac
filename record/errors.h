// Error helpers: every data error names the file and the byte offset, in the
// form "FILE:OFFSET: what is wrong" that `shardfeed check` also prints.
#ifndef SHARDFEED_RECORD_ERRORS_H_
#define SHARDFEED_RECORD_ERRORS_H_

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

// DATA_LOSS "path:offset: message".
inline absl::Status DataLossAt(absl::string_view path, uint64_t offset,
                               absl::string_view message) {
  return absl::DataLossError(absl::StrCat(path, ":", offset, ": ", message));
}

// An I/O failure of `what` on `path`, from errno: NOT_FOUND, PERMISSION_DENIED,
// ALREADY_EXISTS, RESOURCE_EXHAUSTED (disk full) or UNAVAILABLE.
inline absl::Status IoError(absl::string_view what, absl::string_view path,
                            int error_number) {
  std::string message =
      absl::StrCat(path, ": ", what, ": ", std::strerror(error_number));
  switch (error_number) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case ENOSPC:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_ERRORS_H_
