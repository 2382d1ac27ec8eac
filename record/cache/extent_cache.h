// ExtentCache: a bounded local folder of byte ranges ("extents") of remote
// objects, shared by the processes (ranks) of one machine.
//
// Keys: an object's URL (never credentials), its ETag and the byte range.
// A new ETag is a new key, so bytes of two versions of an object are never
// mixed. Each entry is one file in `dir`, written under a temporary name and
// renamed into place: no process ever sees a partial entry, and a crash
// leaves at most a temporary file that the next Open removes. Entries are
// not fsync'd (the data has another copy; a power loss leaves short files,
// which count as damaged). Files in `dir` that the cache did not name are
// never touched.
//
// Bound: the bytes of all entries in the folder never exceed limit_bytes()
// plus the bytes reserved for fetches in flight. Reserve(n) makes room
// before a fetch by evicting unpinned entries: first those whose next use
// (SetNextUse: a position in this process's epoch plan) is farthest, then
// entries without a hint, least recently used first. Entries pinned by a
// live Entry handle (in any process) are never evicted; when pinned bytes +
// every process's reservations + n exceed the limit, Reserve fails with
// RESOURCE_EXHAUSTED (evicting nothing) and a message that says what limit
// would work.
//
// Sharing: processes that open the same dir coordinate with file locks
// (flock), so ranks of one machine find what any of them stored, each key
// is stored once and the limit holds for the folder as a whole. Two ranks
// that miss the same extent at the same time both fetch it (the second
// Insert returns the first's entry): nothing yet tells a rank that another
// is fetching it. A cache belongs to the process
// that opened it: a forked child opens its own (there, the parent's refuses
// with FAILED_PRECONDITION).
//
// Threading: every method is thread-safe. Errors: absl::Status naming the
// file and what is wrong; a damaged entry (wrong size) is dropped and
// reported as a miss, never served.
#ifndef SHARDFEED_RECORD_CACHE_EXTENT_CACHE_H_
#define SHARDFEED_RECORD_CACHE_EXTENT_CACHE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

struct ExtentKey {
  std::string object;  // the object's URL, as messages may show it
  std::string etag;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct ExtentCacheOptions {
  std::string dir;           // empty: DefaultExtentCacheDir()
  uint64_t limit_bytes = 0;  // 0: kDefaultExtentCacheLimit
};

inline constexpr uint64_t kDefaultExtentCacheLimit = uint64_t{10} << 30;  // 10 GiB
inline constexpr uint64_t kNoNextUse = std::numeric_limits<uint64_t>::max();

// $SHARDFEED_CACHE_DIR, else $XDG_CACHE_HOME/shardfeed/extents, else
// ~/.cache/shardfeed/extents.
std::string DefaultExtentCacheDir();

class ExtentCache : public std::enable_shared_from_this<ExtentCache> {
 public:
  // The bytes of one cached entry, read-only; the entry stays pinned (no
  // process evicts it) while this handle lives.
  class Entry {
   public:
    virtual ~Entry() = default;
    virtual absl::string_view bytes() const = 0;
  };

  // Room for one fetch, held from Reserve() until Insert() or until it is
  // destroyed (which gives the room back). Move-only.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class ExtentCache;
    Reservation(std::shared_ptr<ExtentCache> cache, uint64_t bytes);
    std::shared_ptr<ExtentCache> cache_;
    uint64_t bytes_ = 0;
  };

  virtual ~ExtentCache() = default;

  // Opens the folder, creating it and its parents; removes what crashed
  // processes left (temporaries, reservations) and evicts unpinned entries
  // down to the limit when the folder holds more (a run with a larger
  // limit). Errors name the folder or file.
  static absl::StatusOr<std::shared_ptr<ExtentCache>> Open(const ExtentCacheOptions& options);

  // The entry, pinned, if cached; nullptr on a miss.
  virtual absl::StatusOr<std::shared_ptr<const Entry>> Find(const ExtentKey& key) = 0;

  // Makes room for n bytes (evicting as above) and holds it.
  virtual absl::StatusOr<Reservation> Reserve(uint64_t n) = 0;

  // Stores `bytes` (its size must equal key.length and not exceed the
  // reservation) atomically and returns the new entry, pinned. If another
  // thread or process stored the same key meanwhile, returns that entry.
  virtual absl::StatusOr<std::shared_ptr<const Entry>> Insert(const ExtentKey& key,
                                                              Reservation reservation,
                                                              absl::string_view bytes) = 0;

  // Removes key's entry, e.g. when its records fail their CRCs: later Finds
  // miss. Handles already held stay valid (their bytes stay mapped, outside
  // the accounting, until released). OK when absent.
  virtual absl::Status Drop(const ExtentKey& key) = 0;

  // The position in this process's plan where `key` is next read
  // (kNoNextUse: not again); eviction takes the farthest first. A hint is
  // for the entry in the folder now (give it once the entry is stored, e.g.
  // when releasing it): it is forgotten when that entry leaves the folder.
  virtual void SetNextUse(const ExtentKey& key, uint64_t position) = 0;

  virtual uint64_t limit_bytes() const = 0;
  // Bytes of all entries in the folder now (every process's).
  virtual absl::StatusOr<uint64_t> used_bytes() const = 0;
  virtual const std::string& dir() const = 0;

 protected:
  // For implementations: a Reservation of n bytes held on this cache, and
  // the bytes a Reservation holds, taken from it (it then gives nothing back).
  Reservation MakeReservation(uint64_t n) { return Reservation(shared_from_this(), n); }
  // The cache a Reservation was made by (nullptr when empty or moved from).
  static const ExtentCache* ReservationOwner(const Reservation& r) { return r.cache_.get(); }
  static uint64_t TakeReservedBytes(Reservation& r) {
    const uint64_t n = r.bytes_;
    r.bytes_ = 0;
    r.cache_.reset();
    return n;
  }
  // Gives back the room of a Reservation that was not used by Insert.
  virtual void Unreserve(uint64_t bytes) = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_CACHE_EXTENT_CACHE_H_
