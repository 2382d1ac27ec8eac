// EpochPlan: which records of which shards one rank reads in one epoch.
//
// The epoch's shard order is a seeded permutation (seed, epoch) shared by
// all ranks; in that order the dataset is one sequence of N records, and rank
// r of W reads positions [r*M, (r+1)*M) with M = floor(N / W). So every rank
// gets a disjoint part of every epoch and exactly the same number of records
// (hence of batches): distributed training never hangs on a short rank. The
// N mod W records left over are not read in that epoch (with shuffling they
// differ from epoch to epoch); with W = 1 nothing is dropped.
#ifndef SHARDFEED_READER_EPOCH_PLAN_H_
#define SHARDFEED_READER_EPOCH_PLAN_H_

#include <cstdint>
#include <vector>

#include "reader/dataset.h"

namespace shardfeed {

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
