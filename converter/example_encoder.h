// ExampleEncoder: writes a serialized tf.train.Example directly in protobuf
// wire format, with features in sorted key order, so the same features always
// give the same bytes (protobuf's own map serialization order is unspecified)
// and no Example object is built on the converter's hot path. Values are
// copied once, into the output.
//
// Example:
//   ExampleEncoder e;
//   e.AddBytes("image", pixels);   // `pixels` must stay alive until Finish
//   e.AddInt64("label", 3);
//   std::string record = e.Finish();          // parses as shardfeed.Example
//   std::string framed = e2.FinishFramed();   // a whole TFRecord record
//
// Not thread-safe; cheap to construct, one per record.
#ifndef SHARDFEED_CONVERTER_EXAMPLE_ENCODER_H_
#define SHARDFEED_CONVERTER_EXAMPLE_ENCODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace shardfeed {

class ExampleEncoder {
 public:
  // Each Add replaces an earlier feature of the same key. Bytes values are
  // referenced, not copied: they must outlive Finish().
  void AddBytes(absl::string_view key, absl::string_view value);
  void AddBytesList(absl::string_view key, absl::Span<const std::string> values);
  void AddInt64(absl::string_view key, int64_t value);
  void AddInt64List(absl::string_view key, absl::Span<const int64_t> values);
  void AddFloatList(absl::string_view key, absl::Span<const float> values);
  // A bytes value of `length` zero bytes: for sizing a record whose real
  // value is not at hand (a file known by its size), with FramedSize().
  void AddZeroBytes(absl::string_view key, size_t length);

  // The size FinishFramed() would return now, without building the record.
  size_t FramedSize();

  // The serialized Example. The encoder is empty afterwards.
  std::string Finish();
  // The Example framed as one TFRecord record (length, masked CRCs): what
  // RecordWriter::WriteFramedRecord takes. Lets worker threads do the CRCs.
  std::string FinishFramed();
  // FinishFramed() in two steps, so that the CRCs can be computed elsewhere
  // (e.g. with Python's GIL released): the Example behind room for the
  // record header; FrameInPlace() then fills the header and adds the footer.
  std::string FinishUnframed();
  static void FrameInPlace(std::string* unframed);

 private:
  struct Entry {
    std::string key;
    int list_field;                        // 1 bytes, 2 float, 3 int64
    std::vector<absl::string_view> bytes;  // bytes values (referenced)
    std::vector<size_t> zero_bytes;        // AddZeroBytes lengths, after `bytes`
    std::string packed;                    // packed numbers
  };
  Entry& Slot(absl::string_view key, int list_field);
  size_t ListSize(const Entry& e) const;
  // Sorts the entries; the sizes of each list and entry, and of Features.
  size_t Sizes(std::vector<size_t>* list_sizes, std::vector<size_t>* entry_sizes);
  std::string Serialize(size_t reserve_front);

  std::vector<Entry> entries_;
};

// Protobuf varint helpers (exposed for the reader's decoder tests).
void AppendVarint(std::string* out, uint64_t v);
size_t VarintSize(uint64_t v);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_EXAMPLE_ENCODER_H_
