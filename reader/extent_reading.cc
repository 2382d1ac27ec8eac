#include "reader/extent_reading.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "reader/extent_source.h"
#include "record/cache/extent_cache.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

absl::Status CheckLimit(const ResolvedOptions& r, ExtentPlan* plan,
                        const std::vector<std::shared_ptr<RandomAccessSource>>& sources,
                        uint64_t limit, int workers) {
  const ExtentTable& t = plan->table();
  uint64_t remote_bytes = 0;
  for (size_t id = 0; id < t.size(); ++id) {
    if (sources[t[id].shard] != nullptr) remote_bytes += t[id].length;
  }
  if (r.mode == ShuffleMode::kGlobal) {
    if (limit >= remote_bytes) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "cache_limit ", limit, " is too small for a global shuffle of this remote dataset: "
        "every extent is read all through the epoch, so its ", remote_bytes,
        " bytes must fit the cache (a smaller cache would fetch each extent about once per "
        "record); pass cache_limit >= ", remote_bytes,
        ", or shuffle=\"quasi\" (extents in a random order, records shuffled within a window "
        "of shuffle_buffer records: each extent fetched about once per epoch)"));
  }
  const uint64_t need = plan->WorkingSetBytes(workers + 1) + t.max_extent_bytes();
  if (limit >= need) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "cache_limit ", limit, " is too small for this plan: ", workers, " workers filling ",
      workers + 1, " batches at once read up to ", need - t.max_extent_bytes(),
      " bytes of extents, plus ", t.max_extent_bytes(), " for the next fetch; pass cache_limit >= ",
      need, " (or a smaller extent size or batch size)"));
}

}  // namespace

absl::StatusOr<std::shared_ptr<ExtentPrefetcher>> StartExtentReading(
    const ResolvedOptions& r, std::shared_ptr<ExtentPlan> plan, int workers, ShardFiles* files) {
  std::vector<std::shared_ptr<RandomAccessSource>> sources(files->shards());
  bool any = false;
  for (size_t s = 0; s < sources.size(); ++s) {
    sources[s] = files->remote(s);
    any = any || sources[s] != nullptr;
  }
  if (!any) return std::shared_ptr<ExtentPrefetcher>();
  ExtentCacheOptions co;
  co.dir = r.o.remote.cache_dir;
  co.limit_bytes = r.o.remote.cache_limit;
  const uint64_t limit = co.limit_bytes > 0 ? co.limit_bytes : kDefaultExtentCacheLimit;
  RETURN_IF_ERROR(CheckLimit(r, plan.get(), sources, limit, workers));
  ASSIGN_OR_RETURN(std::shared_ptr<ExtentCache> cache, ExtentCache::Open(co));
  ASSIGN_OR_RETURN(std::shared_ptr<ExtentPrefetcher> prefetcher,
                   ExtentPrefetcher::Start(plan, sources, std::move(cache),
                                           r.o.remote.max_requests));
  for (size_t s = 0; s < sources.size(); ++s) {
    if (sources[s] != nullptr) {
      files->UseSource(s, std::make_shared<ExtentSource>(prefetcher, s, sources[s]));
    }
  }
  return prefetcher;
}

}  // namespace shardfeed
