// An order-independent fingerprint of decoded records: the proof that a
// pipeline delivered every record exactly once. Each record's decoded
// feature values hash to 64 bits; the dataset's fingerprint is the count and
// the sum (mod 2^64) of those hashes, so any order, thread count or split
// over ranks (summed) gives the same value, and a lost or duplicated record
// changes it.
#ifndef SHARDFEED_READER_FINGERPRINT_H_
#define SHARDFEED_READER_FINGERPRINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "reader/feature_spec.h"
#include "reader/loader.h"

namespace shardfeed {

struct Fingerprint {
  int64_t records = 0;
  uint64_t sum = 0;
  void Add(uint64_t record_hash) {
    ++records;
    sum += record_hash;
  }
  void Merge(const Fingerprint& o) {
    records += o.records;
    sum += o.sum;
  }
  std::string ToString() const;  // "records=N fingerprint=0123456789abcdef"
};

// The hash of one record from the bytes of each feature's decoded value, in
// spec order.
uint64_t RecordHash(const std::vector<absl::string_view>& feature_bytes);

// Adds every row of a host batch (device batches: copy to host first).
void AddBatch(const Batch& batch, const std::vector<FeatureSpec>& spec, Fingerprint* fp);
// The same over `rows` rows of host tensors (e.g. a device batch's copies).
void AddRows(const std::vector<Tensor>& tensors, int64_t rows,
             const std::vector<FeatureSpec>& spec, Fingerprint* fp);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_FINGERPRINT_H_
