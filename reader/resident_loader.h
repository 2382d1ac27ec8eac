// ResidentLoader: the Loader behind LoaderOptions::cache. The chosen
// features of every record are loaded once, through a streaming Loader, into
// a resident table (device memory on a GPU, else host memory); each epoch is
// then a seeded permutation of record indices (the same on every rank; rank
// r of W takes positions [r*M, (r+1)*M), M = floor(N / W), as EpochPlan
// does), copied to the device once per epoch, and each batch a gather
// kernel over the table into a ring slot, followed by the feature's image
// transform if any. Where only some features are resident, the others
// stream from a Loader delivering record indices, and the resident ones are
// gathered by those indices on the loader's stream after the streamed
// batch's copy (one event covers both).
//
// Batch order: a function of (seed, epoch, rank, world_size, batch size),
// never of timing. It differs from the streaming Loader's order (that one
// shuffles through a bounded buffer, this one the whole epoch).
//
// Threading and ownership: as Loader (Next/stats from one thread; batches
// released from any thread; batches may outlive the loader). Errors: as
// Loader; CUDA errors become Status.
#ifndef SHARDFEED_READER_RESIDENT_LOADER_H_
#define SHARDFEED_READER_RESIDENT_LOADER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reader/loader.h"

namespace shardfeed {

class ResidentLoader {
 public:
  // nullptr, with *note saying why, when the table does not fit the budget:
  // the caller then streams. *note also describes a cache that is used.
  static absl::StatusOr<std::unique_ptr<ResidentLoader>> Create(const Dataset& dataset,
                                                                const LoaderOptions& options,
                                                                std::string* note);
  ~ResidentLoader();

  absl::StatusOr<Batch> Next(absl::Duration timeout);
  LoaderStats stats() const;
  const std::vector<FeatureSpec>& features() const;
  int64_t batches_per_epoch() const;
  int device() const;
  const std::string& device_note() const;

 private:
  class Impl;
  explicit ResidentLoader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_RESIDENT_LOADER_H_
