// One task of a conversion split into independent tasks (Slurm array jobs,
// Kubernetes Indexed Jobs): every task lists the input and computes the
// single-process run's shuffle and shard boundaries from the records' sizes
// (Source::RecordSize, without building the records where the source can),
// then builds only the records of its own contiguous block of shards, under
// their final names, in DIR/_parts/ (converter/task_part.h). After `merge`,
// the dataset is byte-identical to the single-process conversion.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/convert_internal.h"
#include "converter/ordered_pipeline.h"
#include "converter/task_part.h"
#include "record/crc32c.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

constexpr size_t kSizeChunk = 1024;  // record sizes computed per pipeline step

struct PlannedShard {
  size_t split = 0;
  int64_t k = 0;  // within the split
  uint64_t begin = 0, end = 0;  // positions in the split's order
  uint64_t data_bytes = 0;      // framed records
};

struct Plan {
  std::vector<PlannedShard> shards;  // all splits, in the single run's order
  std::vector<int64_t> shards_per_split;
  std::string fingerprint;
};

// The boundaries ShardSequenceWriter would find, from the sizes alone.
absl::Status PlanSplit(const ConvertOptions& o, const Source& source, size_t split,
                       const std::vector<uint64_t>& order, ConvertProgress* progress,
                       Plan* plan) {
  const uint64_t n = order.size();
  ShardBoundaryRule rule(o.shard_size, o.num_shards, n);
  uint64_t position = 0;
  const int threads = ConvertThreads(o);
  RETURN_IF_ERROR(RunOrderedPipeline<std::vector<uint64_t>>(
      (n + kSizeChunk - 1) / kSizeChunk, threads, 4 * static_cast<size_t>(threads),
      [&](size_t c) -> absl::StatusOr<std::vector<uint64_t>> {
        std::vector<uint64_t> sizes;
        for (uint64_t i = c * kSizeChunk; i < std::min<uint64_t>(n, (c + 1) * kSizeChunk); ++i) {
          ASSIGN_OR_RETURN(uint64_t size, source.RecordSize(split, order[i]));
          sizes.push_back(size);
        }
        return sizes;
      },
      [&](size_t, std::vector<uint64_t>& sizes) -> absl::Status {
        for (uint64_t size : sizes) {
          if (rule.StartsShard(size)) {
            if (!plan->shards.empty() && plan->shards.back().split == split) {
              plan->shards.back().end = position;
            }
            plan->shards.push_back({split, rule.shards() - 1, position, n, 0});
          }
          plan->shards.back().data_bytes += size;
          ++position;
        }
        progress->records_done += sizes.size();
        o.progress(*progress);
        return absl::OkStatus();
      },
      o.cancelled));
  plan->shards_per_split.push_back(rule.shards());
  return absl::OkStatus();
}

// Identical in every task given the same input and options; merge refuses
// parts whose fingerprints differ.
std::string Fingerprint(const ConvertOptions& o, const Manifest& header, const Plan& plan) {
  std::string text = header.SerializeAsString();
  absl::StrAppend(&text, "|", o.task_count, "|", o.prefix);
  for (const PlannedShard& s : plan.shards) {
    absl::StrAppend(&text, "|", s.split, ":", s.begin, ":", s.end, ":", s.data_bytes);
  }
  return absl::StrFormat("%08x-%d", crc32c::Value(text.data(), text.size()), plan.shards.size());
}

}  // namespace

absl::StatusOr<ConvertSummary> ConvertTask(const ConvertOptions& o, const Source& source,
                                           const SplitLayout& layout) {
  RETURN_IF_ERROR(BeginPart(o.output_dir, o.task_index, o.task_count));
  const std::string folder = PartFolder(o.output_dir, o.task_index, o.task_count);
  Plan plan;
  std::vector<std::vector<uint64_t>> orders;
  ConvertProgress progress;
  progress.records_total = layout.total;
  for (size_t s = 0; s < layout.names.size(); ++s) {
    progress.split = absl::StrCat("plan ", layout.names[s]);
    orders.push_back(SplitOrder(o, s, source.num_samples(s)));
    RETURN_IF_ERROR(PlanSplit(o, source, s, orders.back(), &progress, &plan));
  }
  const Manifest header = ManifestHeader(o, source);
  plan.fingerprint = Fingerprint(o, header, plan);

  // This task's share: a contiguous block of the run's shards.
  const uint64_t g = plan.shards.size();
  const uint64_t first = g * o.task_index / o.task_count;
  const uint64_t last = g * (o.task_index + 1) / o.task_count;
  PendingShards shards;
  progress = ConvertProgress();
  for (uint64_t i = first; i < last; ++i) progress.records_total += plan.shards[i].end - plan.shards[i].begin;
  for (uint64_t i = first; i < last; ++i) {
    const PlannedShard& p = plan.shards[i];
    progress.split = layout.names[p.split];
    ShardSequenceWriter writer({folder, layout.prefixes[p.split], layout.names[p.split],
                                o.compression, o.compression_level, p.k},
                               ShardBoundaryRule(std::numeric_limits<uint64_t>::max(), 0, 0),
                               &shards);
    RETURN_IF_ERROR(
        WriteRecords(o, source, p.split, orders[p.split], p.begin, p.end, &writer, &progress));
    RETURN_IF_ERROR(writer.Finish());
    FinishedShard& done = shards.back();
    if (done.data_bytes != p.data_bytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          o.input, ": the input changed while converting (shard ", p.k, " of ",
          layout.names[p.split], ": ", done.data_bytes, " bytes written, ", p.data_bytes,
          " planned)"));
    }
    done.name = ShardName(layout.prefixes[p.split], p.k, plan.shards_per_split[p.split],
                          o.compression);
  }

  TaskPart part;
  part.set_task_index(o.task_index);
  part.set_task_count(o.task_count);
  part.set_plan(plan.fingerprint);
  part.set_planned(true);
  for (const std::string& p : layout.prefixes) part.add_split_prefixes(p);
  Manifest* m = part.mutable_manifest();
  *m = header;
  RETURN_IF_ERROR(shards.Finalize(folder, o.compression, m));
  AddSplits(layout, source, m, plan.shards_per_split);
  RETURN_IF_ERROR(CommitPart(o.output_dir, part));
  ConvertSummary summary;
  summary.manifest = *m;
  summary.warnings = source.warnings();
  return summary;
}

}  // namespace shardfeed
