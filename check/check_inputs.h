// The shards `shardfeed check` verifies, from the paths given (resolved by
// reader/shard_discovery.h), with what each is checked against: its
// manifest's entry and schema, or (shards without a manifest) the schema
// inferred from all of them. Problems found while resolving (a manifest that
// does not parse, a listed shard that is missing, a shard in a manifest's
// folder it does not list) are collected, not returned as errors.
#ifndef SHARDFEED_CHECK_CHECK_INPUTS_H_
#define SHARDFEED_CHECK_CHECK_INPUTS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "check/check.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

struct CheckInputs {
  std::vector<std::string> shards;  // sorted, unique
  // Those that parse, with their paths; every path (for the report).
  std::vector<std::pair<std::string, Manifest>> manifests;
  std::vector<std::string> manifest_paths;
  // shard path → its manifest entry and the index of its manifest
  std::map<std::string, std::pair<ShardInfo, size_t>> listed;
  std::vector<CheckProblem> problems;
};

// NOT_FOUND / INVALID_ARGUMENT for paths that do not exist or hold no shards.
absl::StatusOr<CheckInputs> ExpandCheckInputs(const std::vector<std::string>& paths);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_CHECK_INPUTS_H_
