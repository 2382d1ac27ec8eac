// The shardfeed subcommands and the shared exit-code convention:
//   0  success;
//   1  a data problem was found (DATA_LOSS: corrupt or invalid input data);
//   2  usage error, or an I/O error (missing file, permission, disk full).
#ifndef SHARDFEED_CLI_COMMAND_H_
#define SHARDFEED_CLI_COMMAND_H_

#include <string>

#include "absl/status/status.h"

namespace shardfeed::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDataProblem = 1;
inline constexpr int kExitUsageOrIo = 2;

// 0 for OK, 1 for DATA_LOSS, 2 for everything else.
int ExitCodeFor(const absl::Status& status);

// Prints "shardfeed COMMAND: MESSAGE" to stderr; returns ExitCodeFor(status).
int ReportError(const std::string& command, const absl::Status& status);

// ReportError, and with --json (json) also {"ok":false,"code":"DATA_LOSS",
// "error":"..."} on stdout, so scripts parsing stdout see the failure.
int ReportError(const std::string& command, const absl::Status& status, bool json);

// The whole command line (argv[0] is the program's name): the shardfeed
// binary's main(), and the Python package's console script. Returns the
// exit status.
int RunShardfeed(int argc, char** argv);

// Each takes the arguments after the subcommand name.
int RunBench(int argc, char** argv);
int RunCat(int argc, char** argv);
int RunCheck(int argc, char** argv);
int RunConvert(int argc, char** argv);
int RunCopy(int argc, char** argv);
int RunIndex(int argc, char** argv);
int RunMerge(int argc, char** argv);

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_COMMAND_H_
