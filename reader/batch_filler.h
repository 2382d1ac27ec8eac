// BatchFiller: fills one slot's rows from records of indexed, uncompressed
// shards: both CRCs verified, each Example decoded straight into its row. No
// per-record allocation: one read buffer per filler, reused (its size: the
// most one batch read).
//
// How records are read: shuffled (records scattered over the dataset), the
// shards are memory-mapped (unless LoaderOptions::map_shards is false) and records are decoded in
// place: no system call and no copy per record (a read per record costs more
// than the decode). Mapped pages of the page cache count in the process's
// RSS as shared file pages (reclaimable, not allocated memory). In order
// (or with map_shards = false), records are pread with neighbours coalesced into one read
// (storage-friendly large reads). A shard truncated after it was mapped can
// raise SIGBUS, as with any mmap reader: shards must not be rewritten while
// a loader reads them.
//
// Threading: one BatchFiller per worker thread; ShardFiles is shared
// (pread is thread-safe). Errors: DATA_LOSS "FILE:OFFSET: what is wrong";
// with skip_corrupt the bad rows are dropped (order kept) and counted.
#ifndef SHARDFEED_READER_BATCH_FILLER_H_
#define SHARDFEED_READER_BATCH_FILLER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reader/dataset.h"
#include "reader/example_layout.h"
#include "reader/loader_options.h"
#include "reader/slot_ring.h"
#include "record/file.h"
#include "record/source.h"

namespace shardfeed {

// Every shard of a dataset, for pread or mapped, local files and remote
// objects alike (record/source.h). Descriptors are opened on demand and at
// most kMaxOpen local files stay open (least recently used closed first),
// so a dataset of thousands of shards does not exhaust the process's file
// descriptors; remote objects stay open from Open() on (no descriptor, and
// their version, the ETag taken then, must not change under a reader).
// Thread-safe except Map().
class ShardFiles {
 public:
  static constexpr size_t kMaxOpen = 64;
  // FAILED_PRECONDITION (with the reason) when a shard has no index or is
  // compressed: such datasets stream instead.
  static absl::StatusOr<std::unique_ptr<ShardFiles>> Open(const Dataset& dataset);
  ~ShardFiles();
  // Shard `shard`, open; the caller's reference keeps the descriptor open.
  absl::StatusOr<std::shared_ptr<RandomAccessSource>> file(size_t shard) const;
  size_t open_files() const;  // descriptors held now (<= kMaxOpen)
  // Maps every shard (for random access). Idempotent; not thread-safe. A
  // dataset with remote shards is not mapped (reads go through file()).
  absl::Status Map(bool random_access);
  bool mapped() const { return !maps_.empty(); }
  // The shard's bytes; valid after Map().
  absl::string_view bytes(size_t shard) const { return maps_[shard]; }
  // The shard's remote source (null: a local file); not thread-safe with
  // UseSource.
  std::shared_ptr<RandomAccessSource> remote(size_t shard) const { return remote_[shard]; }
  size_t shards() const { return remote_.size(); }
  // Serves remote shard `shard` through `source` from now on (the planned
  // loader's extent sources, reader/extent_source.h). Before any reader.
  void UseSource(size_t shard, std::shared_ptr<RandomAccessSource> source) {
    remote_[shard] = std::move(source);
  }

 private:
  std::vector<std::string> paths_;
  std::vector<uint64_t> sizes_;  // at Open
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<RandomAccessSource>> remote_;  // per shard; null if local
  mutable std::vector<std::shared_ptr<RandomAccessSource>> open_;  // per shard; guarded by mu_
  mutable std::vector<uint64_t> last_use_;                    // guarded by mu_
  mutable uint64_t uses_ = 0;
  mutable size_t open_count_ = 0;
  std::vector<absl::string_view> maps_;
};

struct FillCounters {
  int64_t skipped = 0;
  int64_t bytes = 0;
  double read_seconds = 0, crc_seconds = 0, decode_seconds = 0;
};

class BatchFiller {
 public:
  BatchFiller(const Dataset* dataset, const ShardFiles* files, const ResolvedOptions* options)
      : ds_(dataset), files_(files), r_(options), decoder_(&options->o.features) {}

  // Fills slot `s` with records `records` (dataset indices), row i from
  // records[i], the sample number of row i being first_sample + i. Returns
  // the rows kept (fewer only with skip_corrupt).
  absl::StatusOr<int64_t> Fill(const std::vector<int64_t>& records, SlotRing::Slot* s,
                               uint64_t first_sample, FillCounters* counters);
  // Bytes held for reads (pread path): at most 1.5x what one batch read.
  size_t read_capacity() const { return read_cap_; }

 private:
  struct Pending {
    int64_t row;
    size_t shard;
    uint64_t offset, size;
  };
  absl::Status ReadRuns(FillCounters* counters);
  // Record p failed (`failed`) on the pread path: when its source served it
  // from a local copy (a cached extent) it is read once more from the
  // origin and decoded again; otherwise, or when that fails too, the error.
  absl::Status RetryFromOrigin(const Pending& p, SlotRing::Slot* s, uint64_t sample,
                               FillCounters* counters, absl::Status failed);
  // Checks both CRCs of one framed record and decodes it into its row;
  // crc_weight > 0: time this record's CRCs and count them crc_weight times
  // (it stands for that many records of the batch).
  absl::Status DecodeRow(const Pending& p, const char* framed, SlotRing::Slot* s,
                         uint64_t sample, size_t crc_weight, FillCounters* counters);

  const Dataset* ds_;
  const ShardFiles* files_;
  const ResolvedOptions* r_;
  LayoutDecoder decoder_;  // the shared-layout fast path, then the general decoder
  std::vector<Pending> pending_;      // the batch's records in read order
  // Room for `more` bytes after the first `used` of read_buf_ (kept).
  char* ReserveRead(size_t used, size_t more);

  // The batch's reads, one after the other in one buffer: its size is what
  // the largest batch read (the old one string per run kept each run's
  // largest size ever: up to rows x kMaxRun bytes per filler).
  std::unique_ptr<char[]> read_buf_;
  size_t read_cap_ = 0;
  std::vector<size_t> run_of_;        // pending_[i] is in run run_of_[i]
  std::vector<uint64_t> run_start_;   // per run: shard offset of its first byte
  std::vector<size_t> run_at_, run_size_;  // per run: where in read_buf_, bytes read
  std::vector<char> ok_;              // per row
  std::vector<size_t> row_bytes_;     // per feature
  std::vector<std::vector<std::string>> var_rows_;  // per feature, per row
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_BATCH_FILLER_H_
