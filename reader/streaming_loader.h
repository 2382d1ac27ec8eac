// The streaming Loader path, for shards without random access (ZLIB/GZIP)
// or without an index: I/O threads read each rank's part of the epoch
// (PlanEpoch) sequentially, a seeded shuffle buffer of `shuffle_buffer`
// records mixes them, a producer thread batches them into ring slots with a
// decode pool. Batches keep their place in the plan: batch k covers
// positions [k*B, (k+1)*B) of this rank's record stream, skipped records
// included, so every rank gets the same number of batches (skip_corrupt
// makes batches short, never fewer). Resume: same world size only (the
// stream is re-read up to the state's batch). Threading/errors: as Loader.
#ifndef SHARDFEED_READER_STREAMING_LOADER_H_
#define SHARDFEED_READER_STREAMING_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "reader/device_context.h"
#include "reader/loader_backend.h"
#include "reader/loader_options.h"

namespace shardfeed {

absl::StatusOr<std::unique_ptr<Loader::Backend>> CreateStreamingLoader(
    const Dataset& dataset, const ResolvedOptions& options, std::shared_ptr<DeviceContext> ctx,
    std::string device_note);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_STREAMING_LOADER_H_
