#include "reader/epoch_plan.h"

#include <algorithm>
#include <random>

namespace shardfeed {

int64_t RecordsPerRank(const Dataset& dataset, int world_size) {
  return dataset.total_records() / std::max(1, world_size);
}

std::vector<WorkItem> PlanEpoch(const Dataset& dataset, uint64_t seed, int64_t epoch,
                                bool shuffle_shards, int rank, int world_size) {
  std::vector<size_t> order(dataset.shards.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (shuffle_shards) {
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(epoch) + 1);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  }
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
