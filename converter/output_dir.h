// The output folder of `convert`: what a run may replace, and where it may
// not write.
//
// A run replaces only a dataset that shardfeed wrote: the files listed by a
// shardfeed manifest.json in that folder (its shards, their indexes and the
// manifest itself), and only with `overwrite`. Any other file with a name
// this run could write (a TensorFlow-written PREFIX-NNNNN-of-NNNNN.tfrecord,
// a foreign manifest.json) makes the run refuse, naming the files, with or
// without `overwrite`. Stateless functions; errors are absl::Status
// (ALREADY_EXISTS for refusals, so the CLI exits 2).
#ifndef SHARDFEED_CONVERTER_OUTPUT_DIR_H_
#define SHARDFEED_CONVERTER_OUTPUT_DIR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shardfeed {

// Checks `dir` before a run that writes shards named
// PREFIX-NNNNN-of-NNNNN.tfrecord[.gz|.zlib][.index] for each of `prefixes`,
// and manifest.json. Returns the files (names in `dir`) of the previous
// shardfeed dataset there, which the run replaces or, if it does not write
// them again, removes once its own output is complete: none when `dir` holds
// no output. Fails (ALREADY_EXISTS) when `dir` holds such files and
// !overwrite, or files no shardfeed manifest there lists.
absl::StatusOr<std::vector<std::string>> PreviousDatasetToReplace(
    const std::string& dir, const std::vector<std::string>& prefixes, bool overwrite);

// Fails (INVALID_ARGUMENT) when `output` is `input` or inside it, or `input`
// is inside `output` (after resolving symbolic links and "..", for folders
// that do not exist yet as well). `what` names the input's role in the
// message ("image-folder reads every folder below --input").
absl::Status RefuseNestedFolders(const std::string& input, const std::string& output,
                                 const std::string& why);

// Fails (INVALID_ARGUMENT) when `output` is the folder that holds the
// tfrecord input `input` (a folder, a shard or manifest.json in it, or a glob
// naming shards in it) or a folder inside it: the new shards would land
// beside the input's (and replacing a previous dataset there could remove
// input shards), and the next run over that folder would read them as input.
absl::Status RefuseOutputInInputFolder(const std::string& input, const std::string& output);

// Whether `path` exists. For a bucket, a failed request (403 without the
// List or Read permission, 503s beyond the retries) is an error naming the
// path, not "absent": a refusal to replace what exists must not be skipped
// because the server could not be asked. NOT_FOUND (no such bucket) is
// absent. A local path: PathExists.
absl::StatusOr<bool> ExistsOrError(const std::string& path);

// RefuseOutputInInputFolder for a bucket output (s3://, gs://): refused
// when `output` is the folder (key prefix) of a remote tfrecord `input` (a
// prefix, a glob, a shard or a manifest) or inside it.
absl::Status RefuseBucketOutputInInput(const std::string& input, const std::string& output);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_OUTPUT_DIR_H_
