#include "reader/epoch_plan.h"

#include <algorithm>
#include <random>

namespace shardfeed {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T>
void Shuffle(std::vector<T>* v, uint64_t key) {
  std::mt19937_64 rng(key);
  for (size_t i = v->size(); i > 1; --i) std::swap((*v)[i - 1], (*v)[rng() % i]);
}

constexpr int64_t kQuasiBlock = 64;  // records read together in kQuasi order

}  // namespace

uint64_t EpochKey(uint64_t seed, int64_t epoch) {
  return SplitMix64(SplitMix64(seed) ^ static_cast<uint64_t>(epoch) * 0xd1342543de82ef95ull);
}

IndexShuffle::IndexShuffle(uint64_t key, int64_t n) : key_(key), n_(n) {
  int bits = 2;
  while (bits < 62 && (int64_t{1} << bits) < n) ++bits;
  half_bits_ = (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
}

uint64_t IndexShuffle::Round(uint64_t key, int round, uint64_t half) const {
  return SplitMix64(key ^ (static_cast<uint64_t>(round) << 56) ^ half) & half_mask_;
}

int64_t IndexShuffle::operator()(int64_t i) const {
  uint64_t x = static_cast<uint64_t>(i);
  do {  // cycle walking: the domain is at most 4n, so a few steps
    uint64_t left = x >> half_bits_, right = x & half_mask_;
    for (int r = 0; r < 4; ++r) {
      const uint64_t next = left ^ Round(key_, r, right);
      left = right;
      right = next;
    }
    x = (left << half_bits_) | right;
  } while (x >= static_cast<uint64_t>(n_));
  return static_cast<int64_t>(x);
}

EpochOrder::EpochOrder(ShuffleMode mode, uint64_t seed, int64_t epoch,
                       const std::vector<int64_t>& shard_records, int64_t window,
                       const std::vector<int64_t>* extents)
    : mode_(mode), shuffle_(EpochKey(seed, epoch), 1) {
  for (int64_t r : shard_records) n_ += r;
  const uint64_t key = EpochKey(seed, epoch);
  if (mode_ == ShuffleMode::kGlobal) shuffle_ = IndexShuffle(key, std::max<int64_t>(1, n_));
  if (mode_ != ShuffleMode::kQuasi) return;
  if (extents != nullptr) {
    PermuteBlocks(*extents, key);
  } else {
    ShuffleShardBlocks(shard_records, key);
  }
  window = std::max<int64_t>(1, window);
  for (int64_t lo = 0; lo < n_; lo += window) {
    const int64_t len = std::min(window, n_ - lo);
    std::vector<int64_t> part(table_.begin() + lo, table_.begin() + lo + len);
    IndexShuffle in_window(key ^ SplitMix64(lo), len);
    for (int64_t i = 0; i < len; ++i) table_[lo + i] = part[in_window(i)];
  }
}

void EpochOrder::PermuteBlocks(const std::vector<int64_t>& block_records, uint64_t key) {
  std::vector<int64_t> start(block_records.size(), 0);
  for (size_t b = 1; b < start.size(); ++b) start[b] = start[b - 1] + block_records[b - 1];
  std::vector<size_t> blocks(block_records.size());
  for (size_t b = 0; b < blocks.size(); ++b) blocks[b] = b;
  Shuffle(&blocks, key);
  table_.reserve(n_);
  for (size_t b : blocks) {
    for (int64_t i = 0; i < block_records[b]; ++i) table_.push_back(start[b] + i);
  }
}

void EpochOrder::ShuffleShardBlocks(const std::vector<int64_t>& shard_records, uint64_t key) {
  // Shuffled shards, shuffled blocks within each.
  std::vector<int64_t> start(shard_records.size(), 0);
  for (size_t s = 1; s < start.size(); ++s) start[s] = start[s - 1] + shard_records[s - 1];
  std::vector<size_t> shards(shard_records.size());
  for (size_t s = 0; s < shards.size(); ++s) shards[s] = s;
  Shuffle(&shards, key);
  table_.reserve(n_);
  for (size_t s : shards) {
    std::vector<int64_t> blocks((shard_records[s] + kQuasiBlock - 1) / kQuasiBlock);
    for (size_t b = 0; b < blocks.size(); ++b) blocks[b] = static_cast<int64_t>(b);
    Shuffle(&blocks, key ^ (s + 1));
    for (int64_t b : blocks) {
      const int64_t lo = b * kQuasiBlock, hi = std::min(shard_records[s], lo + kQuasiBlock);
      for (int64_t i = lo; i < hi; ++i) table_.push_back(start[s] + i);
    }
  }
}

int64_t EpochOrder::RecordAt(int64_t position) const {
  switch (mode_) {
    case ShuffleMode::kGlobal:
      return shuffle_(position);
    case ShuffleMode::kQuasi:
      return table_[position];
    case ShuffleMode::kSequential:
      break;
  }
  return position;
}

int64_t RankBatchCount(int64_t start, int64_t n, int world, int64_t batch, bool drop_remainder) {
  const int64_t remaining = std::max<int64_t>(0, n - start);
  const int64_t round = static_cast<int64_t>(world) * batch;
  const int64_t full = remaining / round;
  const int64_t tail = (remaining - full * round) / world;
  return full + (tail > 0 && !drop_remainder ? 1 : 0);
}

PositionRange RankBatch(int64_t start, int64_t n, int world, int rank, int64_t batch,
                        int64_t k) {
  const int64_t round = static_cast<int64_t>(world) * batch;
  const int64_t full = (n - start) / round;
  if (k < full) return {start + k * round + rank * batch, batch};
  const int64_t tail = (n - start - full * round) / world;
  return {start + full * round + rank * tail, tail};
}

int64_t PositionAfter(int64_t start, int64_t n, int world, int64_t batch, int64_t k,
                      int64_t count) {
  if (k >= count) return n;
  return start + k * static_cast<int64_t>(world) * batch;
}

int64_t RecordsPerRank(const Dataset& dataset, int world_size) {
  return dataset.total_records() / std::max(1, world_size);
}

std::vector<WorkItem> PlanEpoch(const Dataset& dataset, uint64_t seed, int64_t epoch,
                                bool shuffle_shards, int rank, int world_size) {
  std::vector<size_t> order(dataset.shards.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (shuffle_shards) Shuffle(&order, EpochKey(seed, epoch));
  const int64_t per_rank = RecordsPerRank(dataset, world_size);
  const int64_t begin = static_cast<int64_t>(rank) * per_rank;
  const int64_t end = begin + per_rank;
  std::vector<WorkItem> items;
  int64_t position = 0;
  for (size_t shard : order) {
    const int64_t n = dataset.shards[shard].records;
    const int64_t lo = std::max(begin, position), hi = std::min(end, position + n);
    if (lo < hi) items.push_back({shard, lo - position, hi - lo});
    position += n;
  }
  return items;
}

}  // namespace shardfeed
