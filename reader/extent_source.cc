#include "reader/extent_source.h"

#include <algorithm>
#include <cstring>

#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<size_t> ExtentSource::ReadAt(uint64_t offset, char* dst, size_t n) const {
  const uint64_t size = source_->size();
  if (offset >= size) return 0;
  n = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  const ExtentTable& table = prefetcher_->plan().table();
  size_t done = 0;
  while (done < n) {
    const uint64_t at = offset + done;
    const int64_t id = table.ExtentAt(shard_, at);
    if (id < 0) {  // not a record's byte: straight from the object
      ASSIGN_OR_RETURN(size_t got, source_->ReadAt(at, dst + done, n - done));
      return done + got;
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const ExtentCache::Entry> entry, prefetcher_->Acquire(id));
    const absl::string_view bytes = entry != nullptr ? entry->bytes() : absl::string_view();
    const uint64_t within = at - table[id].offset;
    if (within >= bytes.size()) break;  // the object ends inside this extent
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n - done, bytes.size() - within));
    std::memcpy(dst + done, bytes.data() + within, take);
    done += take;
  }
  return done;
}

absl::StatusOr<bool> ExtentSource::RefetchFromOrigin(uint64_t offset, uint64_t n) const {
  const ExtentTable& table = prefetcher_->plan().table();
  bool again = false;
  for (uint64_t at = offset; at < offset + n;) {
    const int64_t id = table.ExtentAt(shard_, at);
    if (id < 0) break;
    ASSIGN_OR_RETURN(bool dropped, prefetcher_->Refetch(static_cast<size_t>(id)));
    again = again || dropped;
    at = table[id].offset + table[id].length;
  }
  return again;
}

}  // namespace shardfeed
