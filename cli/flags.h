// A small command-line flag parser for the shardfeed subcommands:
// "--name=value", "--name value", boolean "--name", "--" ends flags, and
// "-h"/"--help" asks for the generated help text. Not thread-safe.
//
// Example:
//   FlagParser flags("shardfeed cat [flags] FILE...", "Prints records.");
//   bool count = false;
//   flags.AddBool("count", &count, "print only the number of records");
//   std::vector<std::string> files;
//   RETURN_IF_ERROR(flags.Parse(argc, argv, &files));
#ifndef SHARDFEED_CLI_FLAGS_H_
#define SHARDFEED_CLI_FLAGS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shardfeed::cli {

// The values an integer flag accepts; Parse() refuses others, naming the
// flag and the range.
struct IntRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};

// The most threads any --threads style flag accepts: more only exhausts the
// process's thread and memory limits (std::system_error), never helps.
inline constexpr int64_t kMaxThreads = 1024;

class FlagParser {
 public:
  FlagParser(std::string usage, std::string description)
      : usage_(std::move(usage)), description_(std::move(description)) {}

  // The pointed-to variables hold the defaults and must outlive Parse().
  void AddBool(const std::string& name, bool* value, const std::string& help);
  void AddString(const std::string& name, std::string* value, const std::string& help,
                 const std::string& value_name = "VALUE");
  void AddInt(const std::string& name, int64_t* value, const std::string& help,
              const std::string& value_name = "N", IntRange range = {});
  void AddDouble(const std::string& name, double* value, const std::string& help,
                 const std::string& value_name = "X");

  // Parses argv[0..argc) (argv[0] is the first argument, not the program).
  // INVALID_ARGUMENT names the offending flag. On -h/--help, returns OK with
  // help_requested() set.
  absl::Status Parse(int argc, char** argv, std::vector<std::string>* positional);

  bool help_requested() const { return help_requested_; }
  std::string Help() const;

 private:
  enum class Kind { kBool, kString, kInt, kDouble };
  struct Flag {
    std::string name;
    Kind kind;
    void* value;
    std::string help;
    std::string value_name;
    std::string default_text;
    IntRange range;
  };
  const Flag* Find(const std::string& name) const;
  absl::Status Set(const Flag& flag, const std::string& text);

  std::string usage_;
  std::string description_;
  std::vector<Flag> flags_;
  bool help_requested_ = false;
};

// A byte count: a positive number with an optional unit, in any case:
// B, K/KB (1000), KiB (1024), M/MB, MiB, G/GB, GiB, T/TB, TiB ("100MB",
// "100mb", "1.5GiB", "4096"). INVALID_ARGUMENT for anything else (nan, inf,
// zero, negative, or more than 2^63 bytes).
absl::StatusOr<uint64_t> ParseByteSize(const std::string& text);

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_FLAGS_H_
