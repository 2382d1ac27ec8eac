// Epoch plans: which records, in which order, each rank reads in an epoch.
// One seed mixing (EpochKey) for every path.
//
// Planned and resident paths (random access): the epoch's order is a pure
// function of (mode, seed, epoch): position p in [0, N) holds record
// RecordAt(p) (a dataset index: shards in order, records in shard order).
// Global shuffle is a stateless bijection (a keyed Feistel network with
// cycle walking, as Grain's index_shuffle): no table, O(1) per record.
// Ranks split the order in rounds of world_size * batch_size positions
// (RankBatch), so after k batches on every rank exactly the first k * W * B
// positions are consumed, whatever W: the state to resume is a position,
// and resuming with another world size W' delivers each remaining record of
// the epoch at most once. Every rank gets the same number of batches: the
// remainder that does not divide by W (after a resume at position p:
// (N - p) mod W') is not read in that epoch; no record is repeated to pad
// it (see LoaderOptions::rank).
//
// Streaming path (sequential shards): PlanEpoch gives each rank a
// contiguous part of the (shard-shuffled) sequence of N records.
#ifndef SHARDFEED_READER_EPOCH_PLAN_H_
#define SHARDFEED_READER_EPOCH_PLAN_H_

#include <cstdint>
#include <vector>

#include "reader/dataset.h"
#include "reader/loader.h"

namespace shardfeed {

// The key of one epoch's shuffles: the one seed mixing.
uint64_t EpochKey(uint64_t seed, int64_t epoch);

// A keyed bijection of [0, n).
class IndexShuffle {
 public:
  IndexShuffle(uint64_t key, int64_t n);
  int64_t operator()(int64_t i) const;

 private:
  uint64_t Round(uint64_t key, int round, uint64_t half) const;
  uint64_t key_;
  int64_t n_;
  int half_bits_;
  uint64_t half_mask_;
};

// The order of one epoch over `n` records in shards of `shard_records`.
class EpochOrder {
 public:
  // window: kQuasi's shuffle window (records). kQuasi without `extents`:
  // shuffled shards, shuffled blocks of 64 records within each, records
  // shuffled within windows. With `extents` (records per extent, in dataset
  // order: reader/extent_table.h, the planned path): the extents in one
  // seeded permutation of the whole dataset, records shuffled within windows
  // of `window` records, so each extent is read within about two windows
  // (fetched about once per epoch from a bucket).
  EpochOrder(ShuffleMode mode, uint64_t seed, int64_t epoch,
             const std::vector<int64_t>& shard_records, int64_t window,
             const std::vector<int64_t>* extents = nullptr);
  int64_t size() const { return n_; }
  int64_t RecordAt(int64_t position) const;

 private:
  // kQuasi's table before the windows are shuffled.
  void PermuteBlocks(const std::vector<int64_t>& block_records, uint64_t key);
  void ShuffleShardBlocks(const std::vector<int64_t>& shard_records, uint64_t key);

  ShuffleMode mode_;
  int64_t n_ = 0;
  IndexShuffle shuffle_;
  std::vector<int64_t> table_;  // kQuasi: the materialized order
};

// Positions [first, first + rows) of the epoch order.
struct PositionRange {
  int64_t first = 0;
  int64_t rows = 0;
};

// A rank's batches of an epoch segment that starts at position `start` of
// `n`: full rounds of W * B positions (rank r takes [r*B, (r+1)*B) of each),
// then, unless drop_remainder, one short batch splitting the tail equally.
int64_t RankBatchCount(int64_t start, int64_t n, int world, int64_t batch, bool drop_remainder);
PositionRange RankBatch(int64_t start, int64_t n, int world, int rank, int64_t batch, int64_t k);
// The epoch position after every rank delivered k batches of the segment
// (n when the segment is done).
int64_t PositionAfter(int64_t start, int64_t n, int world, int64_t batch, int64_t k,
                      int64_t count);

// --- streaming path ---------------------------------------------------------

struct WorkItem {
  size_t shard = 0;     // index into Dataset::shards
  int64_t first = 0;    // first record (in the shard's order)
  int64_t count = 0;
};

std::vector<WorkItem> PlanEpoch(const Dataset& dataset, uint64_t seed, int64_t epoch,
                                bool shuffle_shards, int rank, int world_size);

// Records per rank per epoch: floor(N / world_size).
int64_t RecordsPerRank(const Dataset& dataset, int world_size);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EPOCH_PLAN_H_
