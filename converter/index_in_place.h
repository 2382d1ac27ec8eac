// IndexInPlace: gives existing TFRecord shards (TensorFlow's, any
// compression, with or without extension) what `shardfeed convert` writes
// beside its own, without copying a byte of them: SHARD.index for every
// shard and DIR/manifest.json (written last, atomically) with each shard's
// split, record count, size and checksum, and the schema inferred from all
// records (converter/tfrecord_scan.h). `shardfeed index --manifest`.
//
// All shards must be in one folder (manifest names are relative to it). An
// existing manifest.json there is replaced only with `overwrite`. Errors: a
// damaged shard (DATA_LOSS "FILE:OFFSET: ..."; nothing is written), usage
// and I/O errors.
#ifndef SHARDFEED_CONVERTER_INDEX_IN_PLACE_H_
#define SHARDFEED_CONVERTER_INDEX_IN_PLACE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

absl::StatusOr<Manifest> IndexInPlace(const std::vector<std::string>& inputs, bool overwrite);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_INDEX_IN_PLACE_H_
