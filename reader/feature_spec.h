// FeatureSpec: which features of each Example become which tensors.
//
// Fixed-shape features (the batch gets one row per record):
//   uint8  a single bytes value of exactly prod(shape) bytes, e.g. CIFAR's
//          image -> uint8 [3, 32, 32] (raw pixels, no decoding);
//   float64  a single bytes value of exactly 8 * prod(shape) bytes: raw
//          little-endian doubles (TFRecord has no double list; the Python
//          Writer stores float64 arrays so, exactly, dtype in the manifest);
//   int64, float32  a list of exactly prod(shape) values (scalar: shape []).
// Variable-length features become two host tensors: NAME, every row's values
// concatenated (bytes: uint8 [total bytes], e.g. JPEG files; int64/float32
// lists: [total values]; float64: [total values]), and NAME/offsets (int64
// [rows + 1]: row r is NAME[offsets[r]:offsets[r + 1]], in elements). A
// missing variable-length feature is an empty row when has_default (the
// manifest's optional features), else an error.
// A missing fixed feature takes `default_value` when has_default, else it is
// an error naming the record's file and offset.
// Decoded features (ApplyDecodeSpecs, reader/decode/decode_spec.h): a
// variable-length bytes feature becomes a fixed row decoded from its value
// (image -> uint8 [H, W, 3], WAV -> float32 [C, L]), a variable-length number
// list a padded int64/float32 [L]; audio and lists add NAME/length (int64
// scalar: values before padding), filled by the decoder of NAME.
#ifndef SHARDFEED_READER_FEATURE_SPEC_H_
#define SHARDFEED_READER_FEATURE_SPEC_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"
#include "reader/decode/decode_spec.h"

namespace shardfeed {

// kFloat16 and kBFloat16 appear only as outputs of image transforms;
// kFloat64 only as raw bytes (see above).
enum class DType { kUint8, kInt64, kFloat32, kFloat16, kBFloat16, kFloat64 };

const char* DTypeName(DType d);
size_t DTypeSize(DType d);

struct FeatureSpec {
  std::string name;
  DType dtype = DType::kUint8;
  std::vector<int64_t> shape;   // per record; [] is a scalar
  bool variable_length = false;  // values + offsets (any dtype but float16/bfloat16)
  bool has_default = false;
  double default_value = 0;      // fills every element when missing
  DecodeSpec decode;             // kind kNone: the value as it is
  std::string length_of;         // decode.kind == kLengthOf: the feature measured

  int64_t elements() const;      // prod(shape)
  size_t row_bytes() const { return elements() * DTypeSize(dtype); }
};

// True when a feature is a raw tensor stored as one bytes value (uint8 or
// float64): what it reads from the wire is bytes, whatever its dtype.
bool IsRawBytes(const FeatureSpec& f);

// The spec implied by a dataset's manifest: every feature. Raw tensors
// (bytes with a dtype uint8/float64 and a shape; a -1 dimension: variable)
// with their dtype and shape, scalars or fixed lists for numbers,
// variable-length (values + offsets) for bytes and for number lists whose
// length varies. An optional feature (missing from some records) is
// delivered variable-length, with an empty row where a record lacks it.
// `notes` (if given) gets one line per feature left out or delivered
// otherwise than its manifest entry suggests, and why.
std::vector<FeatureSpec> SpecFromManifest(const Manifest& manifest,
                                          std::vector<std::string>* notes = nullptr);

// Parses "image:uint8[3,32,32],label:int64,jpeg:bytes,score:float32[2]=0".
// "=X" gives a default; "bytes" means variable-length bytes, and empty
// brackets a variable-length list ("tokens:int64[]", "w:float32[]",
// "x:float64[]"), as the Python Writer's schema writes them.
absl::StatusOr<std::vector<FeatureSpec>> ParseSpec(const std::string& text);

// Applies {feature name -> decode spec text} (e.g. {"image/encoded":
// "image,random_resized_crop=224,flip"}) to `features`: image and audio specs
// turn a variable-length bytes feature into its decoded fixed shape; int64 /
// float32 list specs add (or reshape) a number feature; audio and lists add
// NAME/length after NAME. "optional" in a spec lets a record lack the
// feature (zeros / the pad value, length 0). Applying the same spec twice is
// a no-op. INVALID_ARGUMENT for a bad spec, an unknown feature, or a feature
// of the wrong kind.
absl::Status ApplyDecodeSpecs(const std::map<std::string, std::string>& decode,
                              std::vector<FeatureSpec>* features);

// "image/encoded=image,random_resized_crop=224,flip;label=int64,length=4":
// the CLI's --decode, several joined by ';'.
absl::StatusOr<std::map<std::string, std::string>> ParseDecodeOption(const std::string& text);

std::string SpecToString(const std::vector<FeatureSpec>& spec);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_FEATURE_SPEC_H_
