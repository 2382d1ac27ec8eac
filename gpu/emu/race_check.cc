#include "gpu/emu/race_check.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace shardfeed::gpu::emu {

void ReportRace(const std::string& message) {
  Machine& m = Machine::Get();
  // Read without the lock on stream threads: the mode only changes while
  // nothing is queued (Configure).
  const RaceMode mode = m.config.races;
  if (mode == RaceMode::kOff) return;
  const uint64_t count = ++m.races;
  if (mode == RaceMode::kAbort) Fatal(absl::StrCat("race: ", message));
  if (count > 5) return;  // counted; the first few are enough to read
  const std::string line = absl::StrCat("cuda_emu: race (counted", count == 5 ? "; further ones silently" : "", "): ", message, "\n");
  (void)!write(2, line.data(), line.size());
}

void RecordAccessLocked(Machine* m, Allocation* a, const Stream& s, uint64_t seq,
                        const VectorClock& clock, bool write, const std::string& what) {
  std::vector<Access>& list = a->accesses;
  // What the host saw finish precedes everything queued from now on.
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const Access& x) { return m->host.Get(x.stream) >= x.seq; }),
             list.end());
  for (const Access& x : list) {
    if (x.stream == s.id || (!write && !x.write)) continue;
    if (clock.Get(x.stream) >= x.seq) continue;  // ordered before this op
    ReportRace(absl::StrCat(what, " on the ", s.name, (write ? " writes" : " reads"),
                            " device memory ", Hex(a->ptr), " (",
                            a->size, " bytes) that ", x.what, (x.write ? " writes" : " reads"),
                            " with nothing ordering the two (no stream order, event wait or "
                            "synchronize between them)"));
  }
  for (Access& x : list) {
    if (x.stream == s.id && x.write == write) {
      x.seq = seq;
      x.what = absl::StrCat(what, " on the ", s.name);
      return;
    }
  }
  list.push_back(Access{s.id, seq, write, absl::StrCat(what, " on the ", s.name)});
}

uint64_t Fingerprint(const void* p, size_t n) {
  // FNV-1a over 8-byte words (and the tail), enough to notice an overwrite.
  const auto* b = static_cast<const unsigned char*>(p);
  uint64_t h = 1469598103934665603ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

void CheckSourceUnchanged(const void* p, size_t n, uint64_t fingerprint, const std::string& what) {
  if (Fingerprint(p, n) == fingerprint) return;
  ReportRace(absl::StrCat("the host wrote pinned memory ", Hex(p), " (", n, " bytes) after ", what,
                          " was queued and before the copy read it (wait for the copy's event "
                          "before refilling its source)"));
}

}  // namespace shardfeed::gpu::emu
