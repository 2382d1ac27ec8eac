// shardfeed bench: runs the reader pipeline on a dataset and reports where
// the time goes.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/process_stats.h"
#include "cli/progress.h"
#include "reader/dataset.h"
#include "reader/feature_transforms.h"
#include "reader/fingerprint.h"
#include "record/remote/remote_files.h"
#include "reader/loader.h"
#include "record/json_text.h"
#include "record/storage.h"

namespace shardfeed::cli {
namespace {

// Beyond these, a batch or shuffle buffer only exhausts memory.
constexpr int64_t kMaxBatchSize = 1 << 20;
constexpr int64_t kMaxShuffleBuffer = 1 << 24;

std::string Verdict(const LoaderStats& s, const LoaderOptions& o) {
  const double wall = std::max(s.wall_seconds, 1e-9);
  if (s.wait_seconds / wall < 0.05) return "consumer-bound: the loader keeps ahead of the training loop";
  const double io = (s.read_seconds + s.crc_seconds) / (wall * o.io_threads);
  const double decode = s.decode_seconds / (wall * o.decode_threads);
  const double copy = s.copy_seconds / wall;
  if (copy >= io && copy >= decode) return "copy-bound (host-to-device copies are the slowest stage)";
  if (decode >= io) return "decode-bound (more --decode-threads may help)";
  return "I/O-bound (more --io-threads, or faster storage, may help)";
}

}  // namespace

int RunBench(int argc, char** argv) {
  FlagParser flags(
      "shardfeed bench DATASET [flags]",
      "Runs the reader pipeline (shards -> I/O threads -> shuffle -> decode pool ->\n"
      "ring of pinned slots -> GPU) over DATASET (a folder with manifest.json, a\n"
      "manifest.json, a glob or shards) and prints records/s, MB/s, busy time per\n"
      "stage, ring occupancy and a verdict. The feature spec defaults to the\n"
      "manifest's schema. With --fingerprint (and one epoch) it also prints the\n"
      "number of records delivered and an order-independent fingerprint of their\n"
      "decoded contents, equal to `shardfeed cat --fingerprint` of the same data.");
  LoaderOptions o;
  std::string spec, split;
  int64_t batch = o.batch_size, epochs = o.epochs, seed = 0, buffer = o.shuffle_buffer,
          io = o.io_threads, decode = o.decode_threads, prefetch = o.prefetch, device = -1,
          rank = 0, world = 1;
  bool no_shuffle = false, drop = false, skip = false, fingerprint = false, json = false;
  bool cache = false, quasi = false, streaming = false, no_mmap = false;
  std::string cache_features, transforms, decode_specs;
  int64_t cache_budget_mb = 0;
  std::string cache_dir;
  int64_t cache_limit = 0, extent_bytes = 0;
  flags.AddInt("batch-size", &batch, "records per batch", "N", {1, kMaxBatchSize});
  flags.AddInt("epochs", &epochs, "passes over the data (0: forever)", "N", {0});
  flags.AddInt("seed", &seed, "shuffle seed");
  flags.AddInt("shuffle-buffer", &buffer, "records in the shuffle buffer", "N",
               {0, kMaxShuffleBuffer});
  flags.AddBool("no-shuffle", &no_shuffle, "read in order");
  flags.AddBool("quasi-shuffle", &quasi,
                "shuffle shards and blocks, records within --shuffle-buffer (slow storage)");
  flags.AddBool("streaming", &streaming,
                "read through the streaming path (shuffle buffer) even for indexed shards");
  flags.AddBool("no-mmap", &no_mmap, "shuffled planned path: pread records, do not map shards");
  flags.AddInt("io-threads", &io, "threads reading shards", "N", {1, kMaxThreads});
  flags.AddInt("decode-threads", &decode, "threads decoding records", "N", {1, kMaxThreads});
  flags.AddInt("prefetch", &prefetch, "ring slots (>= 2)", "N", {2, 64});
  flags.AddInt("device", &device, "GPU ordinal, or -1 for host memory", "N", {-1, 1023});
  flags.AddInt("rank", &rank, "this process's rank", "N", {0});
  flags.AddInt("world-size", &world, "number of ranks", "N", {1});
  flags.AddString("spec", &spec, "features, e.g. 'image:uint8[3,32,32],label:int64'", "SPEC");
  flags.AddString("split", &split, "only this split of a manifest (e.g. train)", "NAME");
  flags.AddBool("drop-remainder", &drop, "drop each epoch's last partial batch");
  flags.AddBool("skip-corrupt", &skip, "skip and count corrupt records instead of failing");
  flags.AddBool("cache", &cache,
                "keep the dataset resident (GPU memory, else host) and serve epochs from it");
  flags.AddString("cache-features", &cache_features,
                  "with --cache: only these features resident (e.g. 'label'); the rest stream",
                  "A,B");
  flags.AddInt("cache-budget-mb", &cache_budget_mb,
               "with --cache: memory the resident table and ring may use (0: a quarter of the "
               "GPU's memory, at most half of what is free)",
               "MB", {0, int64_t{1} << 30});
  flags.AddString("cache-dir", &cache_dir,
                  "remote shards: the extent cache folder (default ~/.cache/shardfeed/extents, "
                  "or $SHARDFEED_CACHE_DIR)",
                  "DIR");
  flags.AddInt("cache-limit", &cache_limit,
               "remote shards: bytes the extent cache may hold (0: 10 GiB); global shuffle "
               "needs the dataset, --quasi-shuffle a few extents",
               "BYTES", {0});
  flags.AddInt("extent-bytes", &extent_bytes,
               "remote shards: bytes per fetched extent of whole records (0: 8 MiB); also "
               "--quasi-shuffle's block",
               "BYTES", {0});
  flags.AddString("transform", &transforms,
                  "fused image transforms, ';'-separated, e.g. "
                  "'image=chw,float16,cifar10,pad=4,flip' (layout chw|hwc; float32|float16|"
                  "bfloat16; mean=a/b/c std=a/b/c scale=X pad=N flip seed=N cifar10)",
                  "SPEC");
  flags.AddString("decode", &decode_specs,
                  "decode stage, ';'-separated FEATURE=SPEC, e.g. 'image/encoded=image,"
                  "random_resized_crop=224,flip' or '...=image,resize=256,center_crop=224'",
                  "SPEC");
  flags.AddBool("fingerprint", &fingerprint, "print records delivered and their fingerprint");
  flags.AddBool("json", &json, "print the results as JSON");
  std::vector<std::string> paths;
  if (absl::Status s = flags.Parse(argc, argv, &paths); !s.ok()) return ReportError("bench", s);
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (paths.empty()) return ReportError("bench", absl::InvalidArgumentError("no DATASET given"));
  if (!cache && (!cache_features.empty() || cache_budget_mb != 0)) {
    return ReportError("bench", absl::InvalidArgumentError(
                                    "--cache-features and --cache-budget-mb need --cache"));
  }
  if (!spec.empty()) {
    auto parsed = ParseSpec(spec);
    if (!parsed.ok()) return ReportError("bench", parsed.status());
    o.features = *parsed;
  }
  o.batch_size = batch;
  o.epochs = epochs;
  o.seed = static_cast<uint64_t>(seed);
  o.shuffle_buffer = buffer;
  o.shuffle = !no_shuffle;
  o.shuffle_mode = quasi ? ShuffleMode::kQuasi : ShuffleMode::kGlobal;
  o.force_streaming = streaming;
  o.map_shards = !no_mmap;
  o.io_threads = static_cast<int>(io);
  o.decode_threads = static_cast<int>(decode);
  o.prefetch = static_cast<int>(prefetch);
  o.device = static_cast<int>(device);
  o.rank = static_cast<int>(rank);
  o.world_size = static_cast<int>(world);
  o.drop_remainder = drop;
  o.remote.cache_dir = cache_dir;
  o.remote.cache_limit = static_cast<uint64_t>(cache_limit);
  o.remote.extent_bytes = static_cast<uint64_t>(extent_bytes);
  o.skip_corrupt = skip;
  o.cache.enabled = cache;
  o.cache.budget_bytes = cache_budget_mb * 1000000;
  if (!cache_features.empty()) o.cache.features = absl::StrSplit(cache_features, ',');
  for (absl::string_view text : absl::StrSplit(transforms, ';', absl::SkipEmpty())) {
    auto t = ParseTransform(std::string(text));
    if (!t.ok()) return ReportError("bench", t.status());
    o.transforms.push_back(*t);
  }
  auto decode_map = ParseDecodeOption(decode_specs);
  if (!decode_map.ok()) return ReportError("bench", decode_map.status());
  o.decode = *decode_map;
  if (fingerprint && !o.transforms.empty()) {
    return ReportError("bench", absl::InvalidArgumentError(
                                    "--fingerprint covers the decoded records: drop --transform"));
  }
  // From here on, with --json a failure is also a JSON document on stdout.
  auto fail = [json](const absl::Status& s) { return ReportError("bench", s, json); };
  auto ds = Dataset::Open(paths, split);
  if (!ds.ok()) return fail(ds.status());
  bool remote_shards = false;  // any shard read over HTTP (see the traffic below)
  for (const ShardEntry& shard : ds->shards) remote_shards |= IsRemotePath(shard.path);
  for (const std::string& n : ds->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  // A batch larger than a rank's share of the dataset only allocates memory
  // for rows that never fill.
  const int64_t per_rank = std::max<int64_t>(1, ds->total_records() / o.world_size);
  if (o.batch_size > per_rank) {
    std::fprintf(stderr, "note: --batch-size %lld is more than the %lld records per rank; using %lld\n",
                 static_cast<long long>(o.batch_size), static_cast<long long>(per_rank),
                 static_cast<long long>(per_rank));
    o.batch_size = per_rank;
  }
  const double created = CpuAndWallNow().wall;
  auto loader = Loader::Create(*std::move(ds), o);
  if (!loader.ok()) return fail(loader.status());
  const double startup_s = SecondsSinceProcessStart();
  std::fprintf(stderr, "note: reading path: %s\n", (*loader)->path_note().c_str());
  for (const std::string& n : (*loader)->notes()) std::fprintf(stderr, "note: %s\n", n.c_str());
  double first_batch_s = -1;
  if (!(*loader)->device_note().empty()) {
    std::fprintf(stderr, "note: %s\n", (*loader)->device_note().c_str());
  }
  if (!(*loader)->cache_note().empty()) {
    std::fprintf(stderr, "note: %s\n", (*loader)->cache_note().c_str());
  }
  InstallInterruptHandler();
  ProgressLine line;
  Fingerprint fp;
  const int64_t total = epochs > 0 ? epochs * (*loader)->batches_per_epoch() : 0;
  int64_t delivered_bytes = 0;  // of the batches' tensors
  for (;;) {
    if (Interrupted()) break;
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    if (!b.ok()) return fail(b.status());
    if (first_batch_s < 0) first_batch_s = CpuAndWallNow().wall - created;
    for (const Tensor& t : b->tensors()) delivered_bytes += static_cast<int64_t>(t.bytes);
    if (fingerprint) {
      if ((*loader)->device() >= 0) {
        return ReportError("bench", absl::InvalidArgumentError(
                                        "--fingerprint reads batches on the host: use --device -1"));
      }
      AddBatch(*b, (*loader)->features(), &fp);
    }
    LoaderStats s = (*loader)->stats();
    line.Update("bench", s.batches, total, s.bytes, "batches");
  }
  line.Finish();
  // The loader's own clock runs from its creation to the last batch; the
  // user's stopwatch also counts start-up, opening the dataset, mapping the
  // shards, starting threads, and the teardown after the last batch.
  const double since_start = std::max(SecondsSinceProcessStart(), 1e-9);
  const LoaderStats s = (*loader)->stats();
  const double wall = std::max(s.wall_seconds, 1e-9);
  const double cpu_us_per_record = s.records > 0 ? CpuAndWallNow().cpu * 1e6 / s.records : 0;
  const double peak_rss_mb = PeakRssMb(), rss_anon_mb = RssAnonMb();
  const double huge_mb = FileHugeMappedMb();
  const std::string verdict = Verdict(s, o);
  // Remote datasets: every request of the run (listing and indexes included).
  // Local ones do not ask: the first call starts the HTTP client (curl's and
  // its TLS library's global initialization, ~2 M instructions at exit).
  const remote::RemoteTraffic traffic =
      remote_shards ? remote::RemoteTrafficSoFar() : remote::RemoteTraffic();
  const std::string path_note = (*loader)->path_note();
  const int loader_device = (*loader)->device();
  const double teardown0 = CpuAndWallNow().wall;
  loader->reset();  // joins the threads, unmaps the shards, frees the ring
  const double teardown_s = CpuAndWallNow().wall - teardown0;
  const double process_cpu_s = CpuAndWallNow().cpu;
  // Served from a resident table, batches read no record bytes after the
  // table's load: their MB/s is that of the batches delivered.
  const bool from_batches = s.bytes == 0 && delivered_bytes > 0;
  const double mb_per_s = (from_batches ? delivered_bytes : s.bytes) / wall / 1e6;
  if (json) {
    std::printf("%s", absl::StrFormat(
        R"({"records":%d,"batches":%d,"bytes":%d,"seconds":%.3f,"records_per_s":%.1f,"mb_per_s":%.1f,"mb_per_s_of":%s,"batch_bytes":%d,"batch_mb_per_s":%.1f,"process_seconds":%.4f,"process_records_per_s":%.1f,"startup_s":%.4f,"teardown_s":%.4f,"process_cpu_s":%.3f,"read_s":%.3f,"crc_s":%.3f,"decode_s":%.3f,"copy_s":%.3f,"wait_s":%.3f,"mean_ready_slots":%.2f,"skipped":%d,"device":%d,"peak_rss_mb":%.1f,"cache_bytes":%d,"cache_load_s":%.3f,"transform_s":%.3f,"first_batch_s":%.4f,"rss_anon_mb":%.1f,"file_huge_mapped_mb":%.1f,"cpu_us_per_record":%.3f,"path":%s,"verdict":%s)",
        s.records, s.batches, s.bytes, wall, s.records / wall, mb_per_s,
        from_batches ? "\"batches\"" : "\"records read\"", delivered_bytes,
        delivered_bytes / wall / 1e6, since_start, s.records / since_start, startup_s, teardown_s,
        process_cpu_s, s.read_seconds, s.crc_seconds, s.decode_seconds, s.copy_seconds,
        s.wait_seconds, s.mean_ready_slots, s.skipped_records, loader_device, peak_rss_mb,
        s.cache_bytes, s.cache_load_seconds, s.transform_seconds, first_batch_s, rss_anon_mb, huge_mb,
        cpu_us_per_record, JsonQuoted(path_note), JsonQuoted(verdict)).c_str());
    if (fingerprint) std::printf("%s", absl::StrFormat(R"(,"fingerprint":"%016x")", fp.sum).c_str());
    if (traffic.requests > 0) {
      std::printf("%s", absl::StrFormat(R"(,"remote_requests":%d,"remote_retries":%d,"remote_bytes":%d)",
                                        traffic.requests, traffic.retries, traffic.bytes)
                            .c_str());
      std::printf("%s", absl::StrFormat(
          R"(,"requests_per_record":%.4f,"remote_bytes_per_record":%.1f,"extent_requests":%d,"extent_bytes":%d,"extent_cache_hits":%d,"requests_in_flight":%d,"first_byte_s":%.4f,"remote_mb_per_s":%.1f)",
          traffic.requests / std::max<double>(s.records, 1),
          traffic.bytes / std::max<double>(s.records, 1), s.remote_requests, s.remote_bytes,
          s.extent_cache_hits, s.remote_in_flight, s.remote_first_byte_seconds,
          s.remote_bytes_per_second / 1e6).c_str());
    }
    std::printf("}\n");
    return kExitOk;
  }
  std::printf("records      %lld in %lld batches (%lld skipped)\n", static_cast<long long>(s.records),
              static_cast<long long>(s.batches), static_cast<long long>(s.skipped_records));
  std::printf("throughput   %.0f records/s, %.1f MB/s%s over %.2f s (the loader's clock: its "
              "creation to the last batch); first batch after %.3f s; %.2f us CPU per record\n",
              s.records / wall, mb_per_s, from_batches ? " of batches (resident cache)" : "", wall,
              first_batch_s, cpu_us_per_record);
  std::printf("whole run    %.0f records/s over %.2f s since the process started (start-up "
              "%.3f s: opening, mapping, threads; compare this with dd); teardown %.3f s\n",
              s.records / since_start, since_start, startup_s, teardown_s);
  std::printf("busy time    read %.2fs, crc %.2fs (%d I/O threads), decode %.2fs (%d threads), "
              "copy %.2fs%s\n",
              s.read_seconds, s.crc_seconds, o.io_threads, s.decode_seconds, o.decode_threads,
              s.copy_seconds, loader_device < 0 ? " (host memory: no copies)" : "");
  std::printf("consumer     waited %.2fs for batches; ring occupancy %.2f of %d slots\n",
              s.wait_seconds, s.mean_ready_slots, o.prefetch);
  std::printf("memory       peak RSS %.1f MB (anonymous %.1f MB; %.1f MB of shards mapped as 2 MiB "
              "pages)", peak_rss_mb, rss_anon_mb, huge_mb);
  if (s.cache_bytes > 0) {
    std::printf("; resident table %.1f MB, loaded in %.2fs", s.cache_bytes / 1e6,
                s.cache_load_seconds);
  }
  std::printf("\n");
  if (s.transform_seconds > 0) std::printf("transforms   %.2fs on the host\n", s.transform_seconds);
  if (traffic.requests > 0) {
    const double per = static_cast<double>(std::max<int64_t>(s.records, 1));
    std::printf("remote       %lld requests (%lld retried), %.1f MB received: %.3f requests and "
                "%.0f bytes per record read (%.2fx the record bytes)\n",
                static_cast<long long>(traffic.requests), static_cast<long long>(traffic.retries),
                traffic.bytes / 1e6, traffic.requests / per, traffic.bytes / per,
                s.bytes > 0 ? static_cast<double>(traffic.bytes) / s.bytes : 0.0);
    if (s.remote_requests > 0 || s.extent_cache_hits > 0) {
      std::printf("extents      %lld fetched (%.1f MB), %lld found in the cache; %d requests in "
                  "flight (first byte after %.1f ms, %.1f MB/s measured)\n",
                  static_cast<long long>(s.remote_requests), s.remote_bytes / 1e6,
                  static_cast<long long>(s.extent_cache_hits), s.remote_in_flight,
                  s.remote_first_byte_seconds * 1e3, s.remote_bytes_per_second / 1e6);
    }
  }
  std::printf("verdict      %s\n", verdict.c_str());
  if (fingerprint) std::printf("%s\n", fp.ToString().c_str());
  return kExitOk;
}

}  // namespace shardfeed::cli
