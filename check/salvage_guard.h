// The promise of `check --salvage`: nothing is modified in place. A salvage
// folder where a salvaged shard or its index would replace an input shard
// (the input folder itself, or a link to it) is refused before anything is
// written, with or without --overwrite. Stateless; thread-compatible.
#ifndef SHARDFEED_CHECK_SALVAGE_GUARD_H_
#define SHARDFEED_CHECK_SALVAGE_GUARD_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace shardfeed {

// INVALID_ARGUMENT naming the input shard that salvaging `shards` into
// `salvage_dir` (as salvage_dir/BASENAME and its .index) would replace.
absl::Status RefuseSalvageOverInputs(const std::vector<std::string>& shards,
                                     const std::string& salvage_dir);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_SALVAGE_GUARD_H_
