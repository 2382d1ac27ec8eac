// The resident Loader path (LoaderOptions::cache). The chosen features of
// every record are loaded once, through a sequential Loader, into a
// resident table (device memory on a GPU, else host memory); each epoch is
// then planned as the planned path does (EpochOrder over the loaded records,
// RankBatch per rank) and each batch is a gather over the table into a ring
// slot (a kernel on the loader's stream on a GPU), followed by the feature's
// image transform if any. Where only some features are resident, the others
// stream from a Loader delivering record indices, and the resident ones are
// gathered by those indices after the streamed batch's copy.
//
// Threading and ownership: as Loader. Errors: as Loader; CUDA errors become
// Status.
#ifndef SHARDFEED_READER_RESIDENT_LOADER_H_
#define SHARDFEED_READER_RESIDENT_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "reader/device_context.h"
#include "reader/loader_backend.h"
#include "reader/loader_options.h"

namespace shardfeed {

// nullptr, with *cache_note saying why, when the table does not fit the
// budget: the caller then streams. *cache_note also describes a cache that
// is used.
absl::StatusOr<std::unique_ptr<Loader::Backend>> CreateResidentLoader(
    const Dataset& dataset, const ResolvedOptions& options, std::shared_ptr<DeviceContext> ctx,
    std::string device_note, std::string* cache_note);

// A resume state taken on another reading path than `path` ("resident",
// "planned", "streaming"): INVALID_ARGUMENT saying which, and why the path
// may change (with cache budget 0 whether the cache is used depends on the
// memory free at start). OK otherwise (CheckResume judges the rest).
absl::Status CheckResumePath(const ResolvedOptions& r, absl::string_view path);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_RESIDENT_LOADER_H_
