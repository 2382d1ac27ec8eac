#include "reader/record_stream.h"

#include <system_error>

#include "absl/strings/str_cat.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/record_reader.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {
constexpr size_t kChunkBytes = 256 << 10;
}  // namespace

// A run of consecutive records of one shard, from an I/O thread.
struct RecordStream::Chunk {
  std::vector<StreamedRecord> records;
  size_t bytes = 0;
  bool end_of_item = false;
  absl::Status error;   // on the item's last chunk
  int64_t skipped = 0;  // records lost to corruption (skip_corrupt)
};

RecordStream::RecordStream(const Dataset* ds, const ResolvedOptions* r, int64_t epoch,
                           StreamCounters* counters)
    : ds_(ds), r_(r), counters_(counters) {
  const LoaderOptions& o = r->o;
  items_ = PlanEpoch(*ds, o.seed, epoch, r->mode != ShuffleMode::kSequential, o.rank,
                     o.world_size);
  rng_.seed(EpochKey(o.seed, epoch) + static_cast<uint64_t>(o.rank));
  for (int t = 0; t < o.io_threads; ++t) {
    queues_.push_back(std::make_unique<BoundedQueue<ChunkPtr>>(4));
  }
  for (int t = 0; t < o.io_threads; ++t) {
    try {
      threads_.emplace_back([this, t] { ReadItems(t); });
    } catch (const std::system_error& e) {
      // Thread t's items would never come: the stream fails (Next says why).
      start_error_ = absl::ResourceExhaustedError(absl::StrCat(
          "could not start I/O thread ", t + 1, " of ", o.io_threads, ": ", e.what(),
          " (lower io_threads)"));
      Cancel();
      break;
    }
  }
}

RecordStream::~RecordStream() {
  Cancel();
  for (std::thread& t : threads_) t.join();
}

void RecordStream::Cancel() {
  stop_.store(true);
  for (auto& q : queues_) q->Cancel();
}

int64_t RecordStream::TakeSkipped() {
  const int64_t n = skipped_;
  skipped_ = 0;
  return n;
}

void RecordStream::ReadItems(int thread) {
  const int n = r_->o.io_threads;
  for (size_t i = thread; i < items_.size() && !stop_.load(); i += n) {
    if (!ReadItem(items_[i], queues_[thread].get())) return;
  }
}

// Returns false when cancelled.
bool RecordStream::ReadItem(const WorkItem& item, BoundedQueue<ChunkPtr>* queue) {
  const ShardEntry& shard = ds_->shards[item.shard];
  auto chunk = std::make_shared<Chunk>();
  int64_t k = 0;
  auto fail = [&](absl::Status s) {
    if (r_->o.skip_corrupt && absl::IsDataLoss(s)) {
      chunk->skipped += item.count - k;  // the damaged record and the rest of the part
    } else {
      chunk->error = std::move(s);
    }
    chunk->end_of_item = true;
    return queue->Push(std::move(chunk));
  };
  RecordReaderOptions ro;
  ro.verify_data_crc = false;  // verified below, timed separately
  double t0 = NowSeconds();
  auto reader = RecordReader::Open(shard.path, ro);
  if (!reader.ok()) return fail(reader.status());
  absl::string_view record;
  int64_t skip = item.first;
  if (!shard.index.empty() && item.first > 0) {
    absl::Status s = (*reader)->SeekToOffset(shard.index[item.first].offset);
    if (!s.ok()) return fail(s);
    skip = 0;
  }
  for (int64_t j = 0; j < skip; ++j) {
    absl::Status s = (*reader)->ReadRecord(&record);
    if (!s.ok()) return fail(s);
  }
  for (k = 0; k < item.count; ++k) {
    if (stop_.load()) return false;
    absl::Status s = (*reader)->ReadRecord(&record);
    if (absl::IsOutOfRange(s)) {
      s = DataLossAt(shard.path, (*reader)->offset(),
                     absl::StrCat("the shard ends after ", item.first + k, " records; ",
                                  item.first + item.count, " were expected (stale index or "
                                  "manifest? run shardfeed check)"));
    }
    const double t1 = NowSeconds();
    counters_->read.Add(t1 - t0);
    if (!s.ok()) return fail(s);
    const bool crc_ok =
        crc32c::Value(record.data(), record.size()) == (*reader)->last_stored_data_crc();
    t0 = NowSeconds();
    counters_->crc.Add(t0 - t1);
    if (!crc_ok) {
      absl::Status bad = DataLossAt(shard.path, (*reader)->last_record_offset(),
                                    absl::StrCat("corrupted record: data CRC mismatch (",
                                                 record.size(), " data bytes)"));
      if (!r_->o.skip_corrupt) return fail(bad);
      ++chunk->skipped;
      continue;
    }
    counters_->bytes.fetch_add(static_cast<int64_t>(record.size()));
    StreamedRecord& out = chunk->records.emplace_back();
    out.bytes.assign(record.data(), record.size());
    out.shard = item.shard;
    out.offset = (*reader)->last_record_offset();
    out.ordinal = item.first + k;
    chunk->bytes += record.size();
    if (chunk->bytes >= kChunkBytes && k + 1 < item.count) {
      if (!queue->Push(std::move(chunk))) return false;
      chunk = std::make_shared<Chunk>();
    }
  }
  chunk->end_of_item = true;
  return queue->Push(std::move(chunk));
}

absl::StatusOr<bool> RecordStream::Next(StreamedRecord* out) {
  RETURN_IF_ERROR(start_error_);
  const bool shuffle = r_->mode != ShuffleMode::kSequential;
  const int64_t capacity = shuffle ? r_->o.shuffle_buffer : 1;
  while (!input_done_ && static_cast<int64_t>(buffer_.size()) < capacity) {
    StreamedRecord rec;
    ASSIGN_OR_RETURN(bool got, NextInOrder(&rec));
    if (!got) {
      input_done_ = true;
      break;
    }
    buffer_.push_back(std::move(rec));
  }
  if (buffer_.empty()) return false;
  const size_t j = shuffle ? rng_() % buffer_.size() : 0;
  *out = std::move(buffer_[j]);
  if (shuffle) {
    buffer_[j] = std::move(buffer_.back());
    buffer_.pop_back();
  } else {
    buffer_.erase(buffer_.begin());
  }
  return true;
}

absl::StatusOr<bool> RecordStream::NextInOrder(StreamedRecord* out) {
  for (;;) {
    if (chunk_ && pos_ < chunk_->records.size()) {
      *out = std::move(chunk_->records[pos_++]);
      return true;
    }
    if (chunk_ && chunk_->end_of_item) {
      ++item_;
      chunk_.reset();
    }
    if (item_ >= items_.size()) return false;
    ChunkPtr next;
    if (!queues_[item_ % queues_.size()]->Pop(&next)) {
      return absl::CancelledError("loader stopped");
    }
    skipped_ += next->skipped;
    if (!next->error.ok()) return next->error;
    chunk_ = std::move(next);
    pos_ = 0;
  }
}

}  // namespace shardfeed
