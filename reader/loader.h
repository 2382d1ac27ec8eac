// Loader: fills fixed-shape batches from shards for a training loop.
//
// Indexed, uncompressed shards (every converted dataset; `shardfeed index`
// makes the index for others) take the planned path: each epoch is planned
// up front as batches of record ids (a seeded bijective permutation of the
// whole dataset: a true global shuffle, or shard/block order with a window
// shuffle, or sequential); worker threads each take a whole slot of the
// ring, pread its records (neighbours coalesced), verify both CRCs and
// decode straight into the slot's rows; slots are delivered in plan order,
// then copied to the device on the loader's own stream. ZLIB/GZIP shards and
// shards without an index stream instead (I/O threads, a shuffle buffer of
// `shuffle_buffer` records, a decode pool). With `cache`, epochs are served
// from a resident table (see CacheOptions). All paths share the ring, the
// options, the epoch permutation and the device setup.
//
// With no GPU (or device = -1) the same API delivers host tensors; asking
// for a GPU where there is none falls back to host memory and says so in
// device_note(); any other GPU error (a bad ordinal, a driver too old for
// this build, with its CUDA version) is an error. Memory is
// bounded by the ring and (streaming) the shuffle buffer, whatever the
// dataset size. The batch order depends only on the options, never on
// thread timing.
//
// Threading: Create/Next/stats/state are called from one thread (the
// training loop). Batches may be released from any thread and may outlive
// the Loader. Destroying the Loader stops every thread promptly.
//
// Example (a complete training loop):
//   ASSIGN_OR_RETURN(Dataset ds, Dataset::Open({"cifar10/manifest.json"}, "train"));
//   LoaderOptions o;              // features default to the manifest's schema
//   o.batch_size = 256;
//   o.epochs = 10;
//   o.device = 0;                 // GPU 0 (host memory if there is none)
//   ASSIGN_OR_RETURN(auto loader, Loader::Create(ds, o));
//   for (;;) {
//     absl::StatusOr<Batch> batch = loader->Next();
//     if (absl::IsOutOfRange(batch.status())) break;   // all epochs done
//     if (!batch.ok()) return batch.status();          // e.g. DATA_LOSS file:offset
//     const Tensor* image = batch->Find("image");      // uint8 [256, 3, 32, 32]
//     const Tensor* label = batch->Find("label");      // int64 [256]
//     cudaStreamWaitEvent(my_stream, batch->cuda_event());  // copy done
//     TrainStep(image->data, label->data, my_stream);
//     batch->Release(my_stream);   // slot reused once my_stream passes here
//     if (time_to_checkpoint) Save(loader->state().ToString());
//   }
#ifndef SHARDFEED_READER_LOADER_H_
#define SHARDFEED_READER_LOADER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpu/image_transform.h"
#include "reader/dataset.h"
#include "reader/feature_spec.h"

namespace shardfeed {

// A fused transform of one uint8 image feature (gpu/image_transform.h): the
// batch then holds it as normalized NCHW float32/float16/bfloat16 [rows, C,
// H, W]. On a GPU one kernel runs on the loader's stream right after the
// copy (uint8 crosses PCIe, 4x fewer bytes than float32); on the host path
// the reference implementation does the same work. The feature's shape must
// be [C, H, W] for layout kCHW (e.g. CIFAR's planar image) or [H, W, C] for
// kHWC. Each image is sample number k of the loader's delivery order (k =
// 0, 1, ... across epochs): its crop and flip depend only on (seed, k).
struct FeatureTransform {
  std::string feature;
  gpu::ImageTransform transform;
};

// Keep features resident in memory and serve every epoch from there: loaded
// once through the normal pipeline, then each epoch is a seeded permutation
// of record indices (copied to the device once per epoch) and each batch a
// gather kernel over the resident table: no host-to-device traffic per epoch
// but those indices. With `features` naming only some (e.g. the labels),
// those stay resident while the others stream, joined by record index.
// Needs a dataset whose record count is known (manifest or index files).
// Where the table and the ring slots do not fit `budget_bytes`, or
// allocating them runs out of memory, the loader streams instead and says
// why in cache_note(). With no device the table lives in host memory (same
// API, same batch order).
struct CacheOptions {
  bool enabled = false;
  std::vector<std::string> features;  // empty: every fixed-shape feature
  // Memory the table and the ring slots may take. 0: a quarter of the
  // device's memory, at most half of what is free (the training job needs
  // the rest); host: a quarter of physical memory.
  int64_t budget_bytes = 0;
};

// Remote datasets (s3://, gs://, https://) on the planned path: each shard
// is cut, from its index, into extents of whole records (extent_bytes); a
// prefetcher walks the epoch plan ahead and fetches extents in order of
// first use into a bounded local cache (record/cache/extent_cache.h), with
// as many requests in flight as latency x throughput needs (Little's law,
// measured as it goes); batches are filled from the cached extents (CRCs
// verified as for local files). See reader/extent_prefetcher.h.
struct RemoteReadOptions {
  // The cache folder, shared by the processes of one machine. Default
  // (empty): DefaultExtentCacheDir() ($SHARDFEED_CACHE_DIR, else
  // ~/.cache/shardfeed/extents).
  std::string cache_dir;
  // Bytes the cache folder may hold. Create() refuses a limit below what the
  // plan needs at once (the extents of the batches being filled and
  // fetched), saying which limit would work; with global shuffle the whole
  // dataset must fit (each extent is read all through the epoch: a smaller
  // cache would fetch every extent many times), else use shuffle="quasi".
  // Default (0): kDefaultExtentCacheLimit, 10 GiB.
  uint64_t cache_limit = 0;
  // Target extent size (whole records; a larger record is an extent alone).
  // Also the block size of ShuffleMode::kQuasi on the planned path, local or
  // remote, so both read the same order. Default (0): 8 MiB.
  uint64_t extent_bytes = 0;
  // Most range requests in flight (the tuner stays within [2, this]).
  // Default: 16.
  int max_requests = 16;
};

// Where a Loader stands: enough to continue exactly there (tens of bytes).
// Record k of an epoch is a pure function of (seed, epoch, k), so the state
// is a few integers: `position` records of the epoch's order are consumed
// (by all ranks together), this rank delivered `batches` batches of it.
struct LoaderState {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t position = 0;
  int64_t batches = 0;
  int world_size = 1;
  // Of the dataset (shard names and record counts) and the options that
  // shape the order (features, batch size, shuffle mode, drop_remainder).
  uint64_t fingerprint = 0;

  // "shardfeed-state v1 seed=.. epoch=.. position=.. batches=.. world=.. fp=.."
  std::string ToString() const;
  static absl::StatusOr<LoaderState> Parse(const std::string& text);
  bool operator==(const LoaderState& o) const;
};

// Record order within an epoch.
enum class ShuffleMode {
  kGlobal,      // a seeded permutation of the whole dataset (default)
  kQuasi,       // planned path: extents of whole records (RemoteReadOptions::
                // extent_bytes) in a random order, records shuffled within a
                // window of `shuffle_buffer` (slow and remote storage: each
                // extent read about once per epoch); resident path: blocks
                // of records
  kSequential,  // dataset order (also what shuffle = false means)
};

struct LoaderOptions {
  // Features to deliver. Default (empty): every feature of the manifest's
  // schema (SpecFromManifest: variable-length ones as values + offsets).
  // Every name must be one the dataset has (its manifest, else a sampled
  // record): Create() refuses an unknown one with INVALID_ARGUMENT naming the
  // closest (reader/feature_names.h).
  std::vector<FeatureSpec> features;
  int64_t batch_size = 256;
  // Shuffle (see ShuffleMode; false: sequential). The streaming path
  // shuffles shard order and records through a buffer of `shuffle_buffer`
  // records. Default: true (global), seed 0, 10000 records.
  bool shuffle = true;
  ShuffleMode shuffle_mode = ShuffleMode::kGlobal;
  uint64_t seed = 0;
  int64_t shuffle_buffer = 10000;
  // Passes over the data; 0 repeats forever (refused when an epoch yields no
  // batch). Default: 1.
  int64_t epochs = 1;
  // Drop each epoch's last partial batch. Default: false.
  bool drop_remainder = false;
  // Streaming: I/O threads and decode threads. Planned path: max(io_threads,
  // decode_threads) workers, each filling whole slots. Default: 2 and 2.
  int io_threads = 2;
  int decode_threads = 2;
  // Ring slots (>= 2: double buffering). Default: 3 (the CLI's and Python's
  // too): one being consumed, one held by a loop variable, one filling.
  int prefetch = 3;
  // When the consumer holds every slot (unreleased batches), add a slot
  // instead of failing Next() with FAILED_PRECONDITION: memory then grows
  // with what the consumer keeps. Default: false (the Python package: true).
  bool grow_ring = false;
  int device = -1;         // GPU ordinal, or -1 for host memory. Default: -1.
  // This process among world_size (see reader/epoch_plan.h). Every rank
  // gets the same number of records per epoch, floor(N / world_size): the
  // N mod world_size records at the end of the epoch's order are not read in
  // that epoch (as torch's DistributedSampler with drop_last=True; there is
  // no padding with repeated records, which would deliver some records twice
  // and break the exactly-once, position-based resume). Shuffled, these are
  // other records each epoch; with shuffle = false (and on the streaming
  // path, the last records of the last shards in that epoch's shard order)
  // they are the same records every epoch: with world_size > 1 and no
  // shuffle, up to world_size - 1 records are never delivered (evaluate on
  // one rank, or pick world_size dividing N, to see every record).
  int rank = 0;
  int world_size = 1;
  // Skip records that are corrupt or do not match the spec (counted in
  // stats) instead of failing Next() with DATA_LOSS. Batches keep their
  // place in the plan: a batch with skipped records is delivered short (even
  // with 0 rows), so every rank still gets batches_per_epoch() batches per
  // epoch. Streaming: a damaged framing skips the rest of that shard's part
  // (counted). A spec error (an unknown feature name, a wrong kind) is
  // refused by Create(), never skipped; an epoch in which every record was
  // skipped is DATA_LOSS from Next(). Default: false.
  bool skip_corrupt = false;
  // Read through the streaming path even when every shard is indexed and
  // uncompressed (for comparisons). Default: false.
  bool force_streaming = false;
  // Planned path, shuffled: memory-map the shards and decode records in
  // place (no read call per record). Mapped page-cache pages then count in
  // the process's RSS (shared, reclaimable); false: pread each record, RSS
  // stays at the ring's size. Default: true.
  bool map_shards = true;
  // Continue from a state() of a run of the same dataset and options (seed
  // included; world_size may differ on the planned and resident paths: the
  // remaining records of the epoch are then delivered at most once across
  // the new ranks: with the state at position p and W' new ranks, all but
  // the last (N - p) mod W' of them, which are not read in that epoch, as
  // above). A mismatched state is INVALID_ARGUMENT.
  std::optional<LoaderState> resume;
  // Image transforms, at most one per feature (see FeatureTransform).
  std::vector<FeatureTransform> transforms;
  // Decode stage: feature name -> decode spec (reader/decode/decode_spec.h),
  // e.g. {"image/encoded", "image,random_resized_crop=224,flip"}: the
  // feature is decoded in the pool straight into a fixed-shape row (see
  // ApplyDecodeSpecs). Crops and flips depend on (seed, delivery number).
  std::map<std::string, std::string> decode;
  // Also deliver "__index", int64 [rows] in host memory: each record's
  // position in the dataset (shards in dataset order, records in shard
  // order). Default: false.
  bool record_index = false;
  // Resident (device) cache; see CacheOptions. Default: off.
  CacheOptions cache;
  // Remote datasets: extent size and the local extent cache.
  RemoteReadOptions remote;
};

// The name of the record-index tensor (LoaderOptions::record_index).
inline constexpr char kRecordIndexTensor[] = "__index";

struct Tensor {
  std::string name;
  DType dtype = DType::kUint8;
  std::vector<int64_t> shape;  // [rows, ...feature shape]
  void* data = nullptr;
  size_t bytes = 0;
  int device = -1;  // -1: host memory
};

struct LoaderStats {
  int64_t batches = 0;
  int64_t records = 0;
  int64_t bytes = 0;          // serialized record bytes read
  int64_t skipped_records = 0;
  double wall_seconds = 0;    // since Create
  double read_seconds = 0;    // I/O threads, summed
  double crc_seconds = 0;     // I/O threads, summed (planned path: sampled, 1 record in 8)
  double decode_seconds = 0;  // decode pool, summed
  double copy_seconds = 0;    // host-to-device copies (GPU only)
  double wait_seconds = 0;    // Next() waiting for a slot
  double mean_ready_slots = 0;  // ring occupancy seen by Next()
  double transform_seconds = 0;  // host-path image transforms (GPU: in copy)
  int64_t cache_bytes = 0;       // resident table size (0: no cache)
  double cache_load_seconds = 0; // loading the resident table
  // Remote datasets on the planned path (0 otherwise): range requests this
  // loader sent for extents (retries not included) and body bytes they
  // brought; extents found in the local cache instead; the tuner's
  // requests in flight now; its measured time to first byte and throughput.
  int64_t remote_requests = 0;
  int64_t remote_bytes = 0;
  int64_t extent_cache_hits = 0;
  int remote_in_flight = 0;
  double remote_first_byte_seconds = 0;
  double remote_bytes_per_second = 0;
};

namespace internal {
class BatchLease;  // what keeps a batch's memory (a ring slot) alive
}  // namespace internal

class Batch {
 public:
  Batch() = default;
  Batch(Batch&& o) noexcept;
  Batch& operator=(Batch&& o) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch();

  int64_t size() const { return rows_; }
  int64_t epoch() const { return epoch_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const Tensor* Find(const std::string& name) const;
  // cudaEvent_t completed when the batch is on the device; cudaStream_t of
  // the loader's copies. Null for host batches.
  void* cuda_event() const { return event_; }
  void* cuda_stream() const { return stream_; }
  // Returns the slot to the ring (the destructor does too). On a GPU, pass
  // the cudaStream_t whose queued work reads this batch (nullptr is stream
  // 0, the legacy default stream; it and cudaStreamPerThread name the
  // stream of the batch's device, whatever device is current on the calling
  // thread), or all of them: the slot is refilled only
  // after that work is done. With no stream (Release() or the destructor)
  // the consumer is taken to use stream 0, the batch device's legacy
  // default stream: the refill waits for the work queued there, and on
  // every blocking stream, before the release; work on a
  // cudaStreamNonBlocking stream must be named. None of these synchronizes
  // the device: a CUDA graph captured meanwhile on another stream stays
  // valid.
  void Release();
  void Release(void* consumer_stream);
  void ReleaseAfter(const std::vector<void*>& consumer_streams);
  // For a consumer whose streams are unknown (a framework importing a
  // DLPack tensor with no stream named, reading on its own non-blocking
  // stream): the slot is refilled only after the whole device is idle
  // (cudaDeviceSynchronize: illegal while a CUDA graph is captured).
  void ReleaseAfterDeviceIdle();
  // Records now that the work queued so far on `consumer_stream` reads this
  // batch: whenever the batch is released, its slot is refilled only after
  // that work. For a consumer that is done before the batch's last holder
  // lets go (a DLPack capsule freed while other tensors of the batch live):
  // its stream is fenced while it surely exists. Thread-safe.
  void FenceAfter(void* consumer_stream);

  // Internal: made by the loader.
  Batch(std::shared_ptr<internal::BatchLease> lease, int64_t rows, int64_t epoch,
        std::vector<Tensor> tensors, void* event, void* stream);

 private:
  std::shared_ptr<internal::BatchLease> lease_;
  int64_t rows_ = 0;
  int64_t epoch_ = 0;
  std::vector<Tensor> tensors_;
  void* event_ = nullptr;
  void* stream_ = nullptr;
};

class Loader {
 public:
  static absl::StatusOr<std::unique_ptr<Loader>> Create(Dataset dataset,
                                                         const LoaderOptions& options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch; OUT_OF_RANGE after the last epoch; DATA_LOSS naming the
  // file and offset of a corrupt record (unless skip_corrupt; with it, once
  // an epoch ends in which every record was skipped);
  // FAILED_PRECONDITION when every ring slot is held by an unreleased batch
  // (held batches only shrink the ring; their memory is never reused);
  // DEADLINE_EXCEEDED when no batch came within `timeout` (the loader goes
  // on: call again). After any other error the loader is finished.
  absl::StatusOr<Batch> Next(absl::Duration timeout = absl::InfiniteDuration());

  LoaderStats stats() const;
  const std::vector<FeatureSpec>& features() const;
  // Batches each rank gets per epoch.
  int64_t batches_per_epoch() const;
  int device() const;                 // -1: host memory
  const std::string& device_note() const;  // why host, when a GPU was asked for
  // What the resident cache does ("12.3 MB of image, label resident on GPU
  // 0"), or why it is not used; empty when no cache was asked for.
  const std::string& cache_note() const;
  // Which path reads: "planned", "streaming" (and why) or "resident".
  const std::string& path_note() const;
  // Default features (LoaderOptions::features empty) left out, or delivered
  // otherwise than the manifest suggests (an optional feature as values +
  // offsets), and why: one line each, for stderr or a Python warning.
  const std::vector<std::string>& notes() const;
  // Where this loader stands after the batches Next() returned (see
  // LoaderOptions::resume).
  LoaderState state() const;

  class Backend;  // internal: one of the paths
 private:
  explicit Loader(std::unique_ptr<Backend> backend);
  // The batch, or DATA_LOSS when `b` starts a new epoch (or ends the data)
  // and the epoch before it delivered batches but no row.
  absl::StatusOr<Batch> CheckEpochRows(absl::StatusOr<Batch> b);
  std::unique_ptr<Backend> backend_;
  std::mutex epoch_mu_;  // guards the four below
  int64_t epoch_ = -1;
  int64_t epoch_batches_ = 0;
  int64_t epoch_rows_ = 0;
  absl::Status failed_;  // sticky: every record of an epoch was skipped
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_LOADER_H_
