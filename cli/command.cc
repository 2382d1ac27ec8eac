#include "cli/command.h"

#include <cstdio>

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

}  // namespace shardfeed::cli
