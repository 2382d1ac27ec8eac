// shardfeed: one command, several subcommands (see Usage below). RunShardfeed
// is the binary's main() (shardfeed_main.cc) and the Python package's
// `shardfeed` console script (python/shardfeed_ext.cc).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>

#include "cli/command.h"
#include "cli/version.h"
#include "record/crc32c.h"
#include "record/remote/remote_files.h"

namespace shardfeed::cli {
namespace {

struct Subcommand {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

constexpr Subcommand kSubcommands[] = {
    {"convert", RunConvert, "pack a dataset into ~100 MB shards with index and manifest"},
    {"check", RunCheck, "verify shards, index files and manifest; salvage damaged shards"},
    {"bench", RunBench, "run the reader pipeline on a dataset; where does the time go?"},
    {"cat", RunCat, "print records as JSON lines (or count them)"},
    {"copy", RunCopy, "re-encode records into a new file (e.g. gzip <-> none)"},
    {"index", RunIndex, "write SHARD.index files, verifying every CRC"},
    {"merge", RunMerge, "one dataset from the parts of convert tasks (--task-index)"},
};

void PrintUsage(std::FILE* out) {
  std::fprintf(out,
               "Usage: shardfeed COMMAND [flags] [args]\n\n"
               "Packs small files into TFRecord shards, verifies them, and streams them\n"
               "to training jobs.\n\nCommands:\n");
  for (const Subcommand& c : kSubcommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\n'shardfeed COMMAND --help' describes each command.\n"
               "Paths may be local or remote: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX,\n"
               "https://HOST/PATH (credentials as the AWS CLI finds them; --no-sign, with\n"
               "any command, reads public buckets anonymously).\n"
               "Exit status: 0 success, 1 a data problem was found, 2 usage or I/O error.\n");
}

// The last line of defence for "no std::terminate": commands report errors
// as absl::Status, but the standard library throws when memory or threads
// run out; say so and exit 2 instead of aborting.
int RunGuarded(const Subcommand& c, int argc, char** argv) {
  try {
    return c.run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "shardfeed %s: out of memory (try smaller batches, fewer threads)\n",
                 c.name);
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "shardfeed %s: out of system resources: %s\n", c.name, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardfeed %s: %s\n", c.name, e.what());
  }
  return kExitUsageOrIo;
}

}  // namespace

int RunShardfeed(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsageOrIo;
  }
  const char* command = argv[1];
  if (!std::strcmp(command, "-h") || !std::strcmp(command, "--help") ||
      !std::strcmp(command, "help")) {
    PrintUsage(stdout);
    return kExitOk;
  }
  if (!std::strcmp(command, "--version") || !std::strcmp(command, "version")) {
    std::printf("shardfeed %s (crc32c: %s)\n", shardfeed::kVersion,
                shardfeed::crc32c::ImplementationName());
    return kExitOk;
  }
  // --no-sign, anywhere after the command: anonymous remote reads.
  int kept = 2;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-sign")) {
      shardfeed::remote::SetAnonymousAccess(true);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  for (const Subcommand& c : kSubcommands) {
    if (!std::strcmp(command, c.name)) return RunGuarded(c, argc - 2, argv + 2);
  }
  std::fprintf(stderr, "shardfeed: unknown command '%s'\n\n", command);
  PrintUsage(stderr);
  return kExitUsageOrIo;
}

}  // namespace shardfeed::cli
