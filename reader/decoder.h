// Decodes one serialized Example straight into a batch row, following a
// feature spec: fixed-shape values are written to their row (no Example
// objects, one copy of each value), variable-length bytes are appended to a
// per-row buffer. Duplicate keys: the last wins, as in protobuf.
// Thread-safe (no state): decode workers fill disjoint rows concurrently.
#ifndef SHARDFEED_READER_DECODER_H_
#define SHARDFEED_READER_DECODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "reader/example_wire.h"
#include "reader/feature_spec.h"

namespace shardfeed {

// Per-record context for decoders that draw random numbers (image crops,
// audio crops): `sample` is the record's delivery number in the loader's order
// (0, 1, ... across epochs), so a sample's crop depends only on (seed,
// sample), never on thread timing, and is the same after resuming.
struct DecodeContext {
  uint64_t seed = 0;
  uint64_t sample = 0;
};

// The wire kind a spec reads: bytes for raw tensors (uint8, float64) and
// for decoded images and audio, else int64 or float.
FeatureKind WireKind(const FeatureSpec& f);

// fixed_rows[i]: where spec[i]'s row goes (row_bytes() bytes), for fixed
// features; var_values[i]: the buffer a variable-length spec[i] appends to
// (its value's bytes). Errors are INVALID_ARGUMENT saying which feature is
// wrong and how (the caller adds the record's file and offset).
absl::Status DecodeExampleRow(absl::string_view record, const std::vector<FeatureSpec>& spec,
                              char* const* fixed_rows, std::string* const* var_values,
                              const DecodeContext& context);
inline absl::Status DecodeExampleRow(absl::string_view record,
                                     const std::vector<FeatureSpec>& spec,
                                     char* const* fixed_rows, std::string* const* var_values) {
  return DecodeExampleRow(record, spec, fixed_rows, var_values, DecodeContext{});
}

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DECODER_H_
