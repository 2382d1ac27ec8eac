// ExampleEncoder: writes a serialized tf.train.Example directly in protobuf
// wire format, with features in sorted key order, so the same features always
// give the same bytes (protobuf's own map serialization order is unspecified)
// and no Example object is built on the converter's hot path.
//
// Example:
//   ExampleEncoder e;
//   e.AddBytes("image", pixels);
//   e.AddInt64("label", 3);
//   std::string record = e.Finish();  // parses as shardfeed.Example
//
// Not thread-safe; cheap to construct, one per record.
#ifndef SHARDFEED_CONVERTER_EXAMPLE_ENCODER_H_
#define SHARDFEED_CONVERTER_EXAMPLE_ENCODER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace shardfeed {

class ExampleEncoder {
 public:
  // Each Add replaces an earlier feature of the same key.
  void AddBytes(absl::string_view key, absl::string_view value);
  void AddBytesList(absl::string_view key, absl::Span<const std::string> values);
  void AddInt64(absl::string_view key, int64_t value);
  void AddInt64List(absl::string_view key, absl::Span<const int64_t> values);
  void AddFloatList(absl::string_view key, absl::Span<const float> values);

  // The serialized Example. The encoder is empty afterwards.
  std::string Finish();

 private:
  // key → serialized Feature message.
  std::map<std::string, std::string, std::less<>> features_;
};

// Protobuf varint helpers (exposed for the reader's decoder tests).
void AppendVarint(std::string* out, uint64_t v);
size_t VarintSize(uint64_t v);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_EXAMPLE_ENCODER_H_
