#include "cli/command.h"

#include <cstdio>

#include "record/json_text.h"

namespace shardfeed::cli {

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (absl::IsDataLoss(status)) return kExitDataProblem;
  return kExitUsageOrIo;
}

int ReportError(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "shardfeed %s: %s\n", command.c_str(),
               std::string(status.message()).c_str());
  return ExitCodeFor(status);
}

int ReportError(const std::string& command, const absl::Status& status, bool json) {
  if (json) {
    std::printf("{\"ok\":false,\"code\":%s,\"error\":%s}\n",
                JsonQuoted(absl::StatusCodeToString(status.code())).c_str(),
                JsonQuoted(status.message()).c_str());
  }
  return ReportError(command, status);
}

}  // namespace shardfeed::cli
