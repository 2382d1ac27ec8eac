// After `check --salvage`: OUTDIR/manifest.json for the salvaged shards of a
// dataset, so that its schema (dtype and shape of raw tensors, class names,
// conversion options) travels with them and the Loader reads them as it
// read the dataset. It lists the salvaged shards only (their split, new
// record count, size and checksum): put the undamaged shards beside them
// and add them to it to rebuild the whole dataset. Single-threaded; reads
// and writes files.
#ifndef SHARDFEED_CHECK_SALVAGE_MANIFEST_H_
#define SHARDFEED_CHECK_SALVAGE_MANIFEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "check/check.h"
#include "check/check_inputs.h"

namespace shardfeed {

// The manifest written (its path), or "" when no salvaged shard is listed by
// a manifest. INVALID_ARGUMENT when the salvaged shards come from two
// datasets (one folder, one manifest); I/O errors as they come
// (ALREADY_EXISTS for an OUTDIR/manifest.json without `overwrite`).
absl::StatusOr<std::string> WriteSalvageManifest(const CheckInputs& in,
                                                 const std::vector<ShardResult>& shards,
                                                 const std::string& salvage_dir, bool overwrite);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_SALVAGE_MANIFEST_H_
