// A fast path for decoding Examples that all share one wire layout.
//
// The records of a dataset usually differ only in their values: CIFAR's
// every record is the same keys, in the same order, with the same list kinds
// and sizes, and the same lengths in every tag/length prefix; only the pixel
// bytes and the label's varint change. ExampleLayout learns that skeleton
// from one record that the general decoder (DecodeExampleRow) decoded, and
// then decodes a record by checking that its bytes equal the skeleton
// everywhere except the value "holes" (one memcmp per stretch between
// holes, and each varint hole ending at the same byte), then copying the
// holes into the rows: no wire walk, no key comparisons.
//
// Why that gives byte-identical rows: a record whose non-value bytes equal
// the learned record's, and whose varints have the same widths, parses into
// the same structure (every tag, length and key is the same byte), so the
// general decoder would read the same features from the same places; the
// fast path writes what it would (raw bytes copied, varints decoded the same
// way, little-endian floats copied). Anything else is a mismatch, and the
// caller falls back to the general decoder: a record with an extra or a
// missing feature, another order, another length or varint width, a corrupt
// record. Rows are written only after the whole record matched.
//
// Layouts are learned only for what the fast path can reproduce exactly,
// else Learn returns nullopt (the general decoder then decodes every
// record): every feature of the spec fixed-shape, as stored (no image/audio
// decode, no padded list, no NAME/length, no variable length, no default
// taken), each read from exactly one map entry in the record (no duplicate
// keys), each entry being (key, Feature) in that order with one list.
// Features of the record the spec does not name are part of the skeleton.
//
// Thread-compatible: one LayoutDecoder per decode thread (BatchFiller).
#ifndef SHARDFEED_READER_EXAMPLE_LAYOUT_H_
#define SHARDFEED_READER_EXAMPLE_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "reader/decoder.h"
#include "reader/feature_spec.h"

namespace shardfeed {

class ExampleLayout {
 public:
  // The layout of `record`, which DecodeExampleRow decoded without error
  // under `spec` (the caller's duty); nullopt where the fast path cannot
  // reproduce the general decoder exactly (see above).
  static std::optional<ExampleLayout> Learn(absl::string_view record,
                                            const std::vector<FeatureSpec>& spec);
  // Whether any record could take the fast path under `spec` (a cheap check
  // on the spec alone, done once).
  static bool SpecSupported(const std::vector<FeatureSpec>& spec);

  // True: `record` has this layout and spec[i]'s row was written to
  // fixed_rows[i] for every i, exactly as DecodeExampleRow writes it. False:
  // it has another layout (or a row pointer is null) and nothing was
  // written.
  bool DecodeInto(absl::string_view record, char* const* fixed_rows) const;

  size_t holes() const { return holes_.size(); }

 private:
  struct Hole {
    uint32_t at;       // offset in the record
    uint32_t width;    // bytes in the record
    uint32_t feature;  // spec index
    uint32_t dest;     // byte offset in the feature's row
    bool varint;       // a varint to int64 (else bytes copied as they are)
  };
  struct Literal {
    uint32_t at, size;
  };
  friend class LayoutBuilder;

  std::string skeleton_;           // the learned record (its holes are not compared)
  std::vector<Literal> literals_;  // the stretches between holes
  std::vector<Hole> holes_;        // in record order
};

// DecodeExampleRow with the fast path in front: tries the layout learned
// last; on a mismatch decodes with the general decoder. The layout is
// learned from the first record, and learned again from a record that
// follows kMissesBeforeRelearn mismatches in a row: a dataset that changes
// layout (a shard written otherwise) moves to the new one, while a minority
// layout scattered among the records (shuffled 100-byte rows whose labels
// take 2 bytes instead of 3 in 1 record of 15) does not evict the common one.
// Learning costs about one general decode, so at most a quarter more than
// the fallbacks themselves. Records the fast path cannot take (Learn says
// no) are tried kMaxFailedLearns times, then the general decoder does all.
// Errors and rows are exactly DecodeExampleRow's.
class LayoutDecoder {
 public:
  static constexpr int kMissesBeforeRelearn = 4;
  static constexpr int kMaxFailedLearns = 16;
  explicit LayoutDecoder(const std::vector<FeatureSpec>* spec)
      : spec_(spec), supported_(ExampleLayout::SpecSupported(*spec)) {}

  absl::Status Decode(absl::string_view record, char* const* fixed_rows,
                      std::string* const* var_values, const DecodeContext& context);

  // Records decoded by the fast path / by the general decoder (for tests).
  int64_t fast() const { return fast_; }
  int64_t general() const { return general_; }

 private:
  const std::vector<FeatureSpec>* spec_;
  bool supported_;
  std::optional<ExampleLayout> layout_;
  int misses_in_a_row_ = 0;
  int failed_learns_ = 0;
  int64_t fast_ = 0, general_ = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXAMPLE_LAYOUT_H_
