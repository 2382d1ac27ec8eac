// Walks the protobuf wire format of a serialized tf.train.Example without
// building Example objects: for each feature, its key and a view of its value
// list. Used by `shardfeed check` (schema) and the reader's decoder (values
// straight into batch slots).
//
// Accepts everything protobuf's own parser accepts for Example: packed and
// unpacked numeric lists, map entries with key and value in either order (or
// missing: empty key / empty Feature), unknown fields anywhere (skipped), and
// duplicate keys (the visitor sees both, in order; callers let the last one
// win, as protobuf does). Malformed wire data is INVALID_ARGUMENT.
// Views point into the input bytes. Thread-compatible (no shared state).
#ifndef SHARDFEED_READER_EXAMPLE_WIRE_H_
#define SHARDFEED_READER_EXAMPLE_WIRE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

enum class FeatureKind { kNone = 0, kBytes = 1, kFloat = 2, kInt64 = 3 };

const char* FeatureKindName(FeatureKind kind);

struct FeatureView {
  FeatureKind kind = FeatureKind::kNone;
  // The BytesList / FloatList / Int64List message (its fields), when the
  // Feature's chosen list occurs more than once the last one wins for the
  // kind, and protobuf merges lists of the same kind: `lists` holds each
  // occurrence of the last kind seen, in order.
  absl::InlinedVector<absl::string_view, 2> lists;  // no allocation in the usual case
};

// A reference to the caller's callable, valid for the call (no copy and no
// allocation per record, which std::function made for any lambda capturing
// more than two references).
using FeatureVisitor = absl::FunctionRef<absl::Status(absl::string_view, const FeatureView&)>;

// Calls visit(key, feature) for every map entry of Example.features.
//
// A tf.train.SequenceExample { Features context = 1; FeatureLists
// feature_lists = 2; } shares Example's field 1, so its context features are
// visited the same way. Its feature_lists, which an Example does not have,
// are refused: FAILED_PRECONDITION "a SequenceExample with feature_lists
// ('frames', ...): only Example features and SequenceExample context features
// can be read". (Field 2 that is not a FeatureLists is an unknown field of an
// Example, skipped as protobuf does.)
absl::Status WalkExample(absl::string_view example, const FeatureVisitor& visit);

// As WalkExample, but a SequenceExample's feature_lists are accepted: their
// keys are appended to *feature_list_keys (views into `record`).
absl::Status WalkExampleOrSequence(absl::string_view record, const FeatureVisitor& visit,
                                   std::vector<absl::string_view>* feature_list_keys);

// The number of values in a feature's list(s); INVALID_ARGUMENT on bad wire
// data.
absl::Status CountValues(const FeatureView& f, int64_t* count, int64_t* bytes_total);

// Decoders for one list kind, appending to `out` (merging all occurrences).
absl::Status DecodeInt64s(const FeatureView& f, std::vector<int64_t>* out);
absl::Status DecodeFloats(const FeatureView& f, std::vector<float>* out);
absl::Status DecodeBytes(const FeatureView& f, std::vector<absl::string_view>* out);

// Low-level reader of protobuf wire data, exposed for the decoder.
class WireReader {
 public:
  explicit WireReader(absl::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ >= end_; }
  // The next byte to read (for callers that record where fields lie).
  const char* position() const { return p_; }
  // Reads a tag; false on malformed data. The one-byte forms (every field
  // number below 16, every length below 128) are inline; longer ones go to
  // the out-of-line loops.
  bool ReadTag(uint32_t* field, uint32_t* wire_type) {
    if (p_ < end_ && static_cast<uint8_t>(*p_) < 0x80) {
      const uint32_t tag = static_cast<uint8_t>(*p_++);
      *field = tag >> 3;
      *wire_type = tag & 7;
      return *field != 0;
    }
    return ReadTagSlow(field, wire_type);
  }
  bool ReadVarint(uint64_t* v) {
    if (p_ < end_ && static_cast<uint8_t>(*p_) < 0x80) {
      *v = static_cast<uint8_t>(*p_++);
      return true;
    }
    return ReadVarintSlow(v);
  }
  bool ReadLengthDelimited(absl::string_view* v) {
    uint64_t len;
    if (!ReadVarint(&len) || len > static_cast<uint64_t>(end_ - p_)) return false;
    *v = absl::string_view(p_, len);
    p_ += len;
    return true;
  }
  bool ReadFixed32(uint32_t* v);
  // Skips a field of the given wire type.
  bool Skip(uint32_t wire_type);

 private:
  bool ReadTagSlow(uint32_t* field, uint32_t* wire_type);
  bool ReadVarintSlow(uint64_t* v);

  const char* p_;
  const char* end_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXAMPLE_WIRE_H_
