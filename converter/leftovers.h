// Leftovers: the temporary files a shardfeed run writes into an output folder
// and renames away when it finishes. A run killed with SIGKILL (or a power
// cut) cannot remove them; these helpers name, find and remove them.
//
// `convert` writes, in DIR:
//   .PREFIX-NNNNN.partial-PID               a complete shard awaiting its name
//   .PREFIX-NNNNN.partial-PID.index         its index, awaiting its name
//   .PREFIX-NNNNN.partial-PID.tmp-PID-K     that shard while being written
//   PREFIX-NNNNN-of-NNNNN.tfrecord[.gz|.zlib].index.tmp-PID-K, manifest.json.tmp-PID-K
// Every other writer (copy, index, check --salvage) writes NAME.tmp-PID-K
// beside NAME (record/file.h, AtomicOutputFile).
//
// A temporary whose PID is a live process belongs to a run in progress and
// is never reported nor removed. Stateless functions; thread-compatible.
//
// Example:
//   ASSIGN_OR_RETURN(auto removed, RemoveConvertLeftovers("out", {"train", "test"}));
//   for (const auto& f : removed) warn("removed leftover " + f);
#ifndef SHARDFEED_CONVERTER_LEFTOVERS_H_
#define SHARDFEED_CONVERTER_LEFTOVERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shardfeed {

// DIR/.PREFIX-NNNNN.partial-PID for the running process: where convert
// writes shard `k` of `prefix` before it gets its final name.
std::string PartialShardPath(const std::string& dir, const std::string& prefix, int64_t k);

// True when `name` (a file name, no folder) is a temporary of `convert` for
// one of `prefixes` (or manifest.json's), written by a process that is gone.
bool IsConvertLeftover(const std::string& name, const std::vector<std::string>& prefixes);

// True when `name` is any shardfeed temporary (convert's, for any prefix, or
// a NAME.tmp-PID-K) whose process is gone.
bool IsShardfeedLeftover(const std::string& name);

// Paths (DIR/NAME) of every file in `dir` for which IsShardfeedLeftover holds,
// sorted. A folder that cannot be listed gives none.
std::vector<std::string> FindLeftovers(const std::string& dir);

// FindLeftovers over the folders holding `files` (each folder once).
std::vector<std::string> FindLeftoversBeside(const std::vector<std::string>& files);

// Removes convert's own leftovers for `prefixes` from `dir`; returns the
// names removed. A missing `dir` is not an error.
absl::StatusOr<std::vector<std::string>> RemoveConvertLeftovers(
    const std::string& dir, const std::vector<std::string>& prefixes);

// If `message` holds a temporary path of `partial_path` (itself or
// `partial_path`.tmp-PID-K), replaces it with `shown`: errors name what the
// user knows, not a hidden file.
std::string ReplaceTemporaryPath(const std::string& message, const std::string& partial_path,
                                 const std::string& shown);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_LEFTOVERS_H_
