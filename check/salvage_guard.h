// The promise of `check --salvage`: nothing is modified in place. Salvaging
// a damaged shard into a folder where its new shard or index would replace
// an input shard or index (the input folder itself, or a link to it) is
// refused before that shard is written, with or without --overwrite.
// Undamaged shards are never written, so a salvage folder that holds (or
// is) their folder is fine. Immutable after construction; thread-safe.
#ifndef SHARDFEED_CHECK_SALVAGE_GUARD_H_
#define SHARDFEED_CHECK_SALVAGE_GUARD_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace shardfeed {

class SalvageGuard {
 public:
  // Notes which files the input shards and their index files are.
  explicit SalvageGuard(const std::vector<std::string>& shards);

  // Where `shard` is salvaged to: salvage_dir/BASENAME.
  static std::string OutputFor(const std::string& shard, const std::string& salvage_dir);

  // INVALID_ARGUMENT naming the input that salvaging `shard` into
  // `salvage_dir` (its shard and .index) would replace.
  absl::Status Check(const std::string& shard, const std::string& salvage_dir) const;

 private:
  std::map<std::pair<dev_t, ino_t>, std::string> inputs_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_SALVAGE_GUARD_H_
