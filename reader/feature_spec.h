// FeatureSpec: which features of each Example become which tensors.
//
// Fixed-shape features (the batch gets one row per record):
//   uint8  a single bytes value of exactly prod(shape) bytes, e.g. CIFAR's
//          image -> uint8 [3, 32, 32] (raw pixels, no decoding);
//   int64, float32  a list of exactly prod(shape) values (scalar: shape []).
// Variable-length bytes (e.g. JPEG files) become two host tensors: NAME, the
// values concatenated (uint8 [total]), and NAME/offsets (int64 [rows + 1]).
// A missing feature takes `default_value` when has_default, else it is an
// error naming the record's file and offset.
#ifndef SHARDFEED_READER_FEATURE_SPEC_H_
#define SHARDFEED_READER_FEATURE_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

// kFloat16 and kBFloat16 appear only as outputs of image transforms.
enum class DType { kUint8, kInt64, kFloat32, kFloat16, kBFloat16 };

const char* DTypeName(DType d);
size_t DTypeSize(DType d);

struct FeatureSpec {
  std::string name;
  DType dtype = DType::kUint8;
  std::vector<int64_t> shape;   // per record; [] is a scalar
  bool variable_length = false;  // bytes only: values + offsets
  bool has_default = false;
  double default_value = 0;      // fills every element when missing

  int64_t elements() const;      // prod(shape)
  size_t row_bytes() const { return elements() * DTypeSize(dtype); }
};

// The spec implied by a dataset's manifest: raw uint8 tensors for bytes
// features with a dtype/shape, scalars or fixed lists for numbers,
// variable-length bytes for the rest.
std::vector<FeatureSpec> SpecFromManifest(const Manifest& manifest);

// Parses "image:uint8[3,32,32],label:int64,jpeg:bytes,score:float32[2]=0".
// "=X" gives a default; "bytes" means variable-length.
absl::StatusOr<std::vector<FeatureSpec>> ParseSpec(const std::string& text);

std::string SpecToString(const std::vector<FeatureSpec>& spec);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_FEATURE_SPEC_H_
