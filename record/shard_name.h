// What a file name says about a file in a folder of shards: a shard, its
// .index, a dataset manifest, or a writer's temporary.
//
// A shard is a name holding ".tfrecord" (".tfrecords", ".tfrecord.gz", ...)
// or following TensorFlow's `NAME-NNNNN-of-NNNNN` naming with or without an
// extension (ImageNet's `train-00000-of-01024`). Hidden names and writers'
// temporaries (".partial", ".tmp-") are never shards. Pure functions.
#ifndef SHARDFEED_RECORD_SHARD_NAME_H_
#define SHARDFEED_RECORD_SHARD_NAME_H_

#include <string>

#include "absl/strings/string_view.h"
#include "record/path_util.h"  // StripTrailingSlashes, for callers of this header

namespace shardfeed {

inline constexpr char kManifestName[] = "manifest.json";

// The last path component ("a/b/c.tfrecord" → "c.tfrecord").
absl::string_view BaseName(absl::string_view path);
// The folder part ("a/b/c" → "a/b"; "c" → ".").
std::string DirName(absl::string_view path);
// "dir" + "/" + "name", one slash between ("name" alone when dir is "." or "").
std::string JoinPath(absl::string_view dir, absl::string_view name);

bool IsIndexName(absl::string_view name);     // "*.index"
bool IsManifestName(absl::string_view name);  // "manifest.json"
// Hidden (".name"), or a writer's temporary (".partial", ".tmp-").
bool IsTemporaryName(absl::string_view name);

// A name a folder listing takes for a shard (see above).
bool IsShardName(absl::string_view name);

// For TensorFlow's `NAME-NNNNN-of-NNNNN[.ext]`: NAME ("train"), else "".
std::string TfShardPrefix(absl::string_view name);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_SHARD_NAME_H_
