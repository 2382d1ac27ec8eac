#include "reader/batch_filler.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "reader/decoder.h"
#include "reader/loader_backend.h"
#include "record/compression.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/record_format.h"
#include "record/status_macros.h"
#include "record/storage.h"

namespace shardfeed {
namespace {

constexpr uint64_t kMaxGap = 16 << 10;   // read through gaps this small
constexpr uint64_t kMaxRun = 8 << 20;    // bytes per coalesced read
constexpr size_t kPrefetchAhead = 2;     // records (mapped shards)
// The CRC time of one record in this many is measured (two clock reads per
// record were 3% of the CPU of 3 KB records) and counted for each record of
// its group (at most this many).
constexpr size_t kCrcTimedEvery = 8;

// Where record `p` ends, clamped to the file's end (no overflow).
template <typename P>
uint64_t EndWithin(const P& p, uint64_t file_size) {
  if (p.offset >= file_size) return file_size;
  return p.size > file_size - p.offset ? file_size : p.offset + p.size;
}

// Asks the CPU to start loading a mapped record while the records before it
// are checked and decoded: shuffled records are scattered over the shards,
// and without this every record began with a cache (and TLB) miss on its
// header, then streamed its body from memory inside the CRC loop. The header
// line goes to L1 (read first), the body's lines to L2 (the CRC reads them
// next; a miss per line stalls it: whole-record prefetch took ~0.2 us off
// each 3 KB record), up to kPrefetchBodyBytes, and the last line (the data
// CRC). GCC deletes a loop whose body is only __builtin_prefetch (it has no
// effect the compiler must keep), so on x86-64 the instructions are written
// out.
constexpr uint64_t kPrefetchBodyBytes = 8 << 10;  // larger records stream anyway

inline void PrefetchLine(const char* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm volatile("prefetcht0 %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

inline void PrefetchLineL2(const char* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm volatile("prefetcht1 %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 0, 2);
#endif
}

void PrefetchRecord(absl::string_view shard, uint64_t offset, uint64_t size) {
  if (offset >= shard.size() || size == 0) return;
  const char* p = shard.data() + offset;
  const uint64_t n = std::min<uint64_t>(size, shard.size() - offset);
  PrefetchLine(p);
  const uintptr_t first = (reinterpret_cast<uintptr_t>(p) | 63) + 1;  // the next line
  const uintptr_t stop = reinterpret_cast<uintptr_t>(p) + std::min(n, kPrefetchBodyBytes);
  for (uintptr_t q = first; q < stop; q += 64) PrefetchLineL2(reinterpret_cast<const char*>(q));
  PrefetchLine(p + n - 1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ShardFiles>> ShardFiles::Open(const Dataset& dataset) {
  auto files = std::unique_ptr<ShardFiles>(new ShardFiles());
  for (const ShardEntry& shard : dataset.shards) {
    if (static_cast<int64_t>(shard.index.size()) != shard.records) {
      return absl::FailedPreconditionError(
          absl::StrCat(shard.path, " has no index (`shardfeed index` makes one)"));
    }
    ASSIGN_OR_RETURN(std::shared_ptr<RandomAccessSource> f, OpenSource(shard.path));
    char head[12];
    ASSIGN_OR_RETURN(size_t got, f->ReadAt(0, head, sizeof(head)));
    if (DetectCompression(shard.path, absl::string_view(head, got)) != Compression::kNone) {
      return absl::FailedPreconditionError(
          absl::StrCat(shard.path, " is compressed (no random access)"));
    }
    files->paths_.push_back(shard.path);
    files->sizes_.push_back(f->size());
    files->remote_.push_back(f->local_path().empty() ? f : nullptr);
  }  // each local descriptor closed here: file() opens on demand
  files->open_.resize(files->paths_.size());
  files->last_use_.resize(files->paths_.size());
  return files;
}

absl::StatusOr<std::shared_ptr<RandomAccessSource>> ShardFiles::file(size_t shard) const {
  if (remote_[shard] != nullptr) return remote_[shard];
  std::lock_guard<std::mutex> lock(mu_);
  last_use_[shard] = ++uses_;
  if (open_[shard] != nullptr) return open_[shard];
  if (open_count_ >= kMaxOpen) {  // close the least recently used
    size_t oldest = shard;
    for (size_t k = 0; k < open_.size(); ++k) {
      if (open_[k] != nullptr && (oldest == shard || last_use_[k] < last_use_[oldest])) {
        oldest = k;
      }
    }
    open_[oldest].reset();  // readers holding it keep it open until done
    --open_count_;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> f, ReadableFile::Open(paths_[shard]));
  open_[shard] = std::move(f);
  ++open_count_;
  return open_[shard];
}

size_t ShardFiles::open_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_count_;
}

ShardFiles::~ShardFiles() {
  for (absl::string_view m : maps_) {
    if (!m.empty()) munmap(const_cast<char*>(m.data()), m.size());
  }
}

absl::Status ShardFiles::Map(bool random_access) {
  if (mapped()) return absl::OkStatus();
  for (const auto& r : remote_) {
    if (r != nullptr) return absl::OkStatus();  // remote bytes are read, not mapped
  }
  std::vector<absl::string_view> maps;
  absl::Status status;
  for (size_t k = 0; k < paths_.size(); ++k) {
    const std::string& path = paths_[k];
    const uint64_t size = sizes_[k];
    if (size == 0) {
      maps.emplace_back();
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      status = IoError("open failed", path, errno);
      break;
    }
    void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    const int error = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
      status = IoError("mmap failed", path, error);
      break;
    }
    madvise(p, size, random_access ? MADV_RANDOM : MADV_SEQUENTIAL);
#ifdef MADV_HUGEPAGE
    // Where the page cache holds the shard in 2 MiB folios (a file written
    // in aligned 2 MiB writes, as RecordWriter does, or read in by a mapping
    // like this one: cold pages then come in 2 MiB reads, not 4 KiB ones),
    // the kernel maps them as huge pages: shuffled records stop missing the
    // TLB (a nested page walk on a VM) and unmapping at exit is ~20x cheaper.
    // Advice only: a kernel without file THP ignores it.
    madvise(p, size, MADV_HUGEPAGE);
#endif
    maps.emplace_back(static_cast<const char*>(p), size);
  }
  if (!status.ok()) {
    for (absl::string_view m : maps) {
      if (!m.empty()) munmap(const_cast<char*>(m.data()), m.size());
    }
    return status;
  }
  maps_ = std::move(maps);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> BatchFiller::Fill(const std::vector<int64_t>& records, SlotRing::Slot* s,
                                          uint64_t first_sample, FillCounters* counters) {
  const std::vector<int64_t>& starts = r_->shard_start;
  const int64_t rows = static_cast<int64_t>(records.size());
  // Two passes: the first finds each record's index entry and asks for its
  // line (shuffled records' entries are scattered over the index: a miss
  // each), the second reads them.
  pending_.resize(rows);
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t index = records[row];
    const size_t shard = std::upper_bound(starts.begin(), starts.end(), index) - starts.begin() - 1;
    const uint64_t local = static_cast<uint64_t>(index - starts[shard]);
    PrefetchLine(reinterpret_cast<const char*>(&ds_->shards[shard].index[local]));
    pending_[row] = {row, shard, local, 0};
    s->index[row] = index;
  }
  for (Pending& p : pending_) {
    const IndexEntry& e = ds_->shards[p.shard].index[p.offset];
    p.offset = e.offset;
    p.size = e.size;
  }
  if (!files_->mapped()) {  // in file order, neighbours coalesced into one read
    std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
      return a.shard != b.shard ? a.shard < b.shard : a.offset < b.offset;
    });
    RETURN_IF_ERROR(ReadRuns(counters));
  }  // mapped: in row order (sorting 256 scattered offsets bought nothing: 8% of the CPU)
  const size_t nf = r_->o.features.size();
  var_rows_.resize(nf);
  row_bytes_.resize(nf);
  for (size_t f = 0; f < nf; ++f) {
    row_bytes_[f] = r_->o.features[f].row_bytes();  // once, not per record
    if (r_->o.features[f].variable_length) var_rows_[f].resize(std::max<size_t>(rows, 1));
  }
  ok_.assign(rows, 1);
  const double t0 = NowSeconds(), crc0 = counters->crc_seconds;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending& p = pending_[i];
    if (files_->mapped() && i + kPrefetchAhead < pending_.size()) {
      const Pending& next = pending_[i + kPrefetchAhead];
      PrefetchRecord(files_->bytes(next.shard), next.offset, next.size);
    }
    absl::Status st;
    const char* framed = nullptr;
    absl::string_view bytes;  // the bytes from p.offset on
    if (files_->mapped()) {
      bytes = files_->bytes(p.shard);
      bytes.remove_prefix(std::min<uint64_t>(p.offset, bytes.size()));
      counters->bytes += static_cast<int64_t>(std::min<uint64_t>(p.size, bytes.size()));
    } else {
      const size_t run = run_of_[i];
      bytes = absl::string_view(read_buf_.get() + run_at_[run], run_size_[run]);
      bytes.remove_prefix(std::min<uint64_t>(p.offset - run_start_[run], bytes.size()));
    }
    if (bytes.size() < p.size) {
      st = DataLossAt(ds_->shards[p.shard].path, p.offset,
                      "truncated shard: the index lists a record past the end of the file "
                      "(stale index? run shardfeed check)");
    } else {
      framed = bytes.data();
    }
    if (st.ok()) {
      const size_t crc_weight =
          i % kCrcTimedEvery == 0 ? std::min(kCrcTimedEvery, pending_.size() - i) : 0;
      st = DecodeRow(p, framed, s, first_sample + p.row, crc_weight, counters);
      if (!st.ok() && !files_->mapped()) {
        st = RetryFromOrigin(p, s, first_sample + p.row, counters, std::move(st));
      }
    }
    if (!st.ok()) {
      if (!r_->o.skip_corrupt) return st;
      ok_[p.row] = 0;
      ++counters->skipped;
    }
  }
  counters->decode_seconds +=
      std::max(0.0, NowSeconds() - t0 - (counters->crc_seconds - crc0));  // crc: an estimate
  return CompactRows(r_->o.features, ok_, rows, &var_rows_, s);
}

char* BatchFiller::ReserveRead(size_t used, size_t more) {
  if (used + more > read_cap_) {  // no zero fill: every byte used is read
    const size_t cap = std::max(used + more, read_cap_ + read_cap_ / 2);
    std::unique_ptr<char[]> bigger(new char[cap]);
    if (used > 0) std::memcpy(bigger.get(), read_buf_.get(), used);
    read_buf_ = std::move(bigger);
    read_cap_ = cap;
  }
  return read_buf_.get() + used;
}

absl::Status BatchFiller::ReadRuns(FillCounters* counters) {
  const double t0 = NowSeconds();
  run_of_.assign(pending_.size(), 0);
  run_start_.clear();
  run_at_.clear();
  run_size_.clear();
  size_t runs = 0, used = 0;
  for (size_t i = 0; i < pending_.size();) {
    size_t j = i + 1;
    ASSIGN_OR_RETURN(std::shared_ptr<RandomAccessSource> file, files_->file(pending_[i].shard));
    // A stale index may list records past the end of the file (or sizes
    // near 2^64): reads stop at the file's end, and the records past it are
    // reported truncated by Fill (skipped under skip_corrupt).
    const uint64_t file_size = file->size();
    // Remote shards are read from cached extents (no request per read):
    // reading through a gap would only pull in extents the batch does not
    // need.
    const uint64_t max_gap = file->local_path().empty() ? 0 : kMaxGap;
    const uint64_t begin = std::min(pending_[i].offset, file_size);
    uint64_t end = EndWithin(pending_[i], file_size);
    while (j < pending_.size() && pending_[j].shard == pending_[i].shard &&
           pending_[j].offset >= end && pending_[j].offset - end <= max_gap &&
           EndWithin(pending_[j], file_size) - begin <= kMaxRun) {
      end = EndWithin(pending_[j], file_size);
      ++j;
    }
    const size_t want = end - begin;
    char* dst = ReserveRead(used, want);
    absl::StatusOr<size_t> read = file->ReadAt(begin, dst, want);
    if (!read.ok()) {  // an I/O error: keep its code, name the offset
      return absl::Status(read.status().code(),
                          absl::StrCat(file->path(), ":", begin, ": reading ", want,
                                       " bytes: ", read.status().message()));
    }
    const size_t got = *read;  // short: the records past it are truncated (see Fill)
    counters->bytes += static_cast<int64_t>(got);
    run_start_.push_back(begin);
    run_at_.push_back(used);
    run_size_.push_back(got);
    used += got;
    for (size_t k = i; k < j; ++k) run_of_[k] = runs;
    ++runs;
    i = j;
  }
  counters->read_seconds += NowSeconds() - t0;
  return absl::OkStatus();
}

absl::Status BatchFiller::RetryFromOrigin(const Pending& p, SlotRing::Slot* s, uint64_t sample,
                                          FillCounters* counters, absl::Status failed) {
  absl::StatusOr<std::shared_ptr<RandomAccessSource>> file = files_->file(p.shard);
  if (!file.ok()) return failed;
  absl::StatusOr<bool> again = (*file)->RefetchFromOrigin(p.offset, p.size);
  if (!again.ok()) {
    return absl::Status(failed.code(), absl::StrCat(failed.message(), " (and dropping the cached "
                                                    "copy failed: ", again.status().message(), ")"));
  }
  if (!*again) return failed;
  std::string fresh(p.size, '\0');
  absl::StatusOr<size_t> got = (*file)->ReadAt(p.offset, fresh.data(), p.size);
  if (!got.ok()) {
    return absl::Status(got.status().code(),
                        absl::StrCat((*file)->path(), ":", p.offset, ": reading ", p.size,
                                     " bytes again: ", got.status().message()));
  }
  counters->bytes += static_cast<int64_t>(*got);
  if (*got < p.size) return failed;
  absl::Status st = DecodeRow(p, fresh.data(), s, sample, 0, counters);
  if (st.ok()) return st;
  return absl::Status(st.code(), absl::StrCat(st.message(),
                                              " (the bytes fetched again from the object too)"));
}

absl::Status BatchFiller::DecodeRow(const Pending& p, const char* framed, SlotRing::Slot* s,
                                    uint64_t sample, size_t crc_weight, FillCounters* counters) {
  const std::string& path = ds_->shards[p.shard].path;
  const double t0 = crc_weight > 0 ? NowSeconds() : 0;
  const uint64_t length = DecodeFixed64(framed);
  if (p.size < kRecordOverhead || length != p.size - kRecordOverhead) {
    return DataLossAt(path, p.offset,
                      absl::StrCat("record length ", length, " does not match the index's ",
                                   p.size, "-byte record (stale index? run shardfeed check)"));
  }
  if (crc32c::Unmask(DecodeFixed32(framed + 8)) != crc32c::Value(framed, 8)) {
    return DataLossAt(path, p.offset, "corrupted record header: length CRC mismatch");
  }
  const char* data = framed + kRecordHeaderSize;
  if (crc32c::Unmask(DecodeFixed32(data + length)) != crc32c::Value(data, length)) {
    return DataLossAt(path, p.offset, absl::StrCat("corrupted record: data CRC mismatch (",
                                                   length, " data bytes)"));
  }
  if (crc_weight > 0) counters->crc_seconds += (NowSeconds() - t0) * crc_weight;
  const std::vector<FeatureSpec>& spec = r_->o.features;
  char* fixed[64];
  std::string* var[64];
  std::vector<char*> fixed_big;
  std::vector<std::string*> var_big;
  char** fixed_rows = fixed;
  std::string** var_values = var;
  if (spec.size() > 64) {
    fixed_big.resize(spec.size());
    var_big.resize(spec.size());
    fixed_rows = fixed_big.data();
    var_values = var_big.data();
  }
  for (size_t f = 0; f < spec.size(); ++f) {
    fixed_rows[f] = s->rows_host[f] ? s->rows_host[f] + p.row * row_bytes_[f] : nullptr;
    var_values[f] = spec[f].variable_length ? &var_rows_[f][p.row] : nullptr;
    if (var_values[f]) var_values[f]->clear();
  }
  absl::Status st = decoder_.Decode(absl::string_view(data, length), fixed_rows, var_values,
                                    DecodeContext{r_->o.seed, sample});
  if (!st.ok()) return DataLossAt(path, p.offset, st.message());
  return absl::OkStatus();
}

}  // namespace shardfeed
