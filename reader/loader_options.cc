#include "reader/loader_options.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "reader/feature_names.h"
#include "reader/feature_transforms.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

uint64_t Fnv1a(uint64_t h, absl::string_view text) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// A slot's memory above this is an option error (a typo, a -1 dimension),
// not a request to honour.
constexpr uint64_t kMaxSlotBytes = uint64_t{1} << 40;

// a * b + *sum into *sum; false on overflow or past kMaxSlotBytes.
bool AddProduct(uint64_t a, uint64_t b, uint64_t* sum) {
  uint64_t p = 0;
  return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(*sum, p, sum) &&
         *sum <= kMaxSlotBytes;
}

// INVALID_ARGUMENT when a fixed feature has a negative dimension, or one
// slot (batch_size rows of every feature, transforms and record indices)
// would exceed kMaxSlotBytes or overflow.
absl::Status CheckSlotBytes(const ResolvedOptions& r) {
  const LoaderOptions& o = r.o;
  const uint64_t batch = static_cast<uint64_t>(o.batch_size);
  uint64_t total = 0;
  auto too_big = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_size ", o.batch_size, ": one ring slot would exceed ", kMaxSlotBytes,
        " bytes (", what, "): lower batch_size or fix the feature shapes"));
  };
  if (!AddProduct(batch, sizeof(int64_t), &total)) return too_big("record indices");
  for (size_t f = 0; f < o.features.size(); ++f) {
    const FeatureSpec& spec = o.features[f];
    if (spec.variable_length) continue;
    uint64_t row = DTypeSize(spec.dtype);
    for (int64_t d : spec.shape) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat("feature ", spec.name, ": dimension ", d,
                                                       " is negative (shape ",
                                                       SpecToString({spec}), ")"));
      }
      if (__builtin_mul_overflow(row, static_cast<uint64_t>(d), &row)) return too_big(spec.name);
    }
    if (!AddProduct(batch, row, &total)) return too_big(spec.name);
    const int t = r.transform_of[f];
    if (t >= 0 && !AddProduct(batch, o.transforms[t].transform.output_bytes_per_image(), &total)) {
      return too_big(absl::StrCat(spec.name, " transformed"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckResume(const ResolvedOptions& r, uint64_t path_fingerprint) {
  if (!r.o.resume.has_value()) return absl::OkStatus();
  const LoaderState& s = *r.o.resume;
  if (s.fingerprint != path_fingerprint) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resume: the state is of another dataset or other options (fingerprint ",
        absl::Hex(s.fingerprint, absl::kZeroPad16), ", this loader's is ",
        absl::Hex(path_fingerprint, absl::kZeroPad16),
        "): same shards, features, batch_size, shuffle and drop_remainder are needed"));
  }
  if (s.seed != r.o.seed) {
    return absl::InvalidArgumentError(
        absl::StrCat("resume: the state has seed ", s.seed, ", the options ", r.o.seed));
  }
  if (s.epoch < 0 || s.position < 0 || s.position > r.total_records || s.batches < 0 ||
      s.world_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("resume: invalid state ", s.ToString()));
  }
  if (r.o.epochs > 0 && s.epoch > r.o.epochs) {
    return absl::InvalidArgumentError(absl::StrCat("resume: the state is at epoch ", s.epoch,
                                                   ", past epochs = ", r.o.epochs));
  }
  return absl::OkStatus();
}

uint64_t PathFingerprint(const ResolvedOptions& r, absl::string_view path) {
  return Fnv1a(r.fingerprint, path);
}

int64_t BatchesFor(int64_t records, int64_t batch_size, bool drop_remainder) {
  return drop_remainder ? records / batch_size : (records + batch_size - 1) / batch_size;
}

uint64_t OrderFingerprint(const Dataset& dataset, const LoaderOptions& o, ShuffleMode mode) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const ShardEntry& s : dataset.shards) {
    h = Fnv1a(h, absl::StrCat(BaseName(s.path), ":", s.records, ";"));
  }
  h = Fnv1a(h, absl::StrCat(SpecToString(o.features), "|", o.batch_size, "|",
                            static_cast<int>(mode), "|", o.drop_remainder, "|",
                            mode == ShuffleMode::kQuasi ? o.shuffle_buffer : 0));
  // Quasi orders permute extents (reader/extent_plan.h) of this size.
  if (mode == ShuffleMode::kQuasi) h = Fnv1a(h, absl::StrCat("|extents=", o.remote.extent_bytes));
  return h;
}

absl::StatusOr<ResolvedOptions> ResolveOptions(const Dataset& dataset,
                                               const LoaderOptions& options) {
  ResolvedOptions r;
  r.o = options;
  LoaderOptions& o = r.o;
  if (o.features.empty()) {
    if (!dataset.manifest.has_value()) {
      return absl::InvalidArgumentError(
          "no feature spec: give LoaderOptions::features (or --spec), or a dataset with a "
          "manifest.json");
    }
    o.features = SpecFromManifest(*dataset.manifest, &r.notes);
  }
  if (o.batch_size < 1) return absl::InvalidArgumentError("batch_size must be >= 1");
  if (o.prefetch < 2) {
    return absl::InvalidArgumentError("prefetch must be >= 2 (double buffering)");
  }
  if (o.epochs < 0) return absl::InvalidArgumentError("epochs must be >= 0 (0: forever)");
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", o.rank, " is not in [0, world_size=", o.world_size, ")"));
  }
  RETURN_IF_ERROR(ApplyDecodeSpecs(o.decode, &o.features));
  RETURN_IF_ERROR(CheckFeatureNames(dataset, o.features));
  RETURN_IF_ERROR(ResolveTransforms(o.features, &o.transforms, &r.transform_of));
  RETURN_IF_ERROR(CheckSlotBytes(r));
  o.io_threads = std::max(1, o.io_threads);
  o.decode_threads = std::max(1, o.decode_threads);
  o.shuffle_buffer = std::max<int64_t>(1, o.shuffle_buffer);
  r.mode = o.shuffle ? o.shuffle_mode : ShuffleMode::kSequential;
  r.shard_start.assign(dataset.shards.size(), 0);
  for (size_t i = 0; i < dataset.shards.size(); ++i) {
    r.shard_start[i] = r.total_records;
    r.total_records += dataset.shards[i].records;
  }
  const int64_t per_rank = r.total_records / o.world_size;
  if (o.epochs == 0 && BatchesFor(per_rank, o.batch_size, o.drop_remainder) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "epochs = 0 (forever) with an epoch that yields no batch: ", r.total_records,
        " records over ", o.world_size, " ranks give ", per_rank, " per rank, batch_size ",
        o.batch_size, o.drop_remainder ? " with drop_remainder" : ""));
  }
  r.fingerprint = OrderFingerprint(dataset, o, r.mode);
  return r;
}

}  // namespace shardfeed
