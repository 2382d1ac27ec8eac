#include "converter/merge.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "converter/bucket_output.h"
#include "converter/convert.h"
#include "converter/file_list.h"
#include "converter/schema_fold.h"
#include "converter/shard_writer.h"
#include "converter/task_part.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/index.h"
#include "record/plural.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

struct Move {
  int task = 0;
  ShardInfo info;         // as the task recorded it; file = final name once named
  std::string from;       // the shard in the task's folder
  std::string to;         // its final path in DIR
};

// Size and CRC32C of a file's bytes.
absl::StatusOr<std::pair<uint64_t, uint32_t>> FileCrc(const std::string& path) {
  ASSIGN_OR_RETURN(auto file, ReadableFile::Open(path));
  std::string buffer(1 << 20, '\0');
  uint32_t crc = 0;
  uint64_t total = 0;
  for (;;) {
    ASSIGN_OR_RETURN(size_t n, file->Read(&buffer[0], buffer.size()));
    if (n == 0) break;
    crc = crc32c::Extend(crc, buffer.data(), n);
    total += n;
  }
  return std::make_pair(total, crc);
}

// "" if the shard at `path` (and its index) is what its task recorded.
std::string VerifyShard(const std::string& path, const ShardInfo& info) {
  auto crc = FileCrc(path);
  if (!crc.ok()) return std::string(crc.status().message());
  if (static_cast<int64_t>(crc->first) != info.bytes()) {
    return absl::StrCat(path, ": ", crc->first, " bytes, the task wrote ", info.bytes());
  }
  if (absl::StrFormat("%08x", crc->second) != info.crc32c()) {
    return absl::StrFormat("%s: CRC32C %08x, the task wrote %s (damaged after writing)", path,
                           crc->second, info.crc32c());
  }
  auto index = ReadIndexFile(IndexPathFor(path));
  if (!index.ok()) return std::string(index.status().message());
  if (static_cast<int64_t>(index->size()) != info.records()) {
    return absl::StrCat(IndexPathFor(path), ": ", index->size(), " entries, the task wrote ",
                        info.records(), " records");
  }
  return "";
}

// The header fields every part of one run must share.
std::string HeaderKey(const TaskPart& p) {
  Manifest m = p.manifest();
  m.clear_shards();
  m.clear_total_records();
  m.clear_total_bytes();
  if (!p.planned()) {  // writers: records per split and inferred schemas differ
    m.clear_splits();
    m.clear_features();
  }
  return absl::StrCat(p.plan(), "|", p.planned(), "|", absl::StrJoin(p.split_prefixes(), ","),
                      "|", m.SerializeAsString());
}

// Reads DIR/_parts/*.json; problems for unreadable, stray or missing parts.
std::vector<std::optional<TaskPart>> ReadParts(const std::string& dir,
                                               std::vector<std::string>* problems) {
  std::vector<std::optional<TaskPart>> parts;
  auto listing = ListDir(PartsDir(dir));
  if (!listing.ok()) {
    problems->push_back(absl::StrCat(PartsDir(dir), ": no task parts (",
                                     listing.status().message(), ")"));
    return parts;
  }
  int count = -1;
  for (const std::string& f : listing->files) {
    int index, n;
    char tail[8] = "";
    if (std::sscanf(f.c_str(), "task-%d-of-%d.%5s", &index, &n, tail) != 3 ||
        std::string(tail) != "json") {
      continue;
    }
    if (count == -1) {
      count = n;
      parts.resize(n);
    }
    if (n != count || index < 0 || index >= n) {
      problems->push_back(absl::StrCat(PartsDir(dir), "/", f, ": from a run with ", n,
                                       " tasks, not ", count, " (remove the stray part)"));
      continue;
    }
    auto part = ReadPart(absl::StrCat(PartsDir(dir), "/", f));
    if (!part.ok()) {
      problems->push_back(absl::StrCat("task ", index, " of ", n, ": ", part.status().message()));
    } else if (part->task_index() != index || part->task_count() != n) {
      problems->push_back(absl::StrCat(PartsDir(dir), "/", f, ": says it is task ",
                                       part->task_index(), " of ", part->task_count()));
    } else {
      parts[index] = *std::move(part);
    }
  }
  if (count == -1) problems->push_back(absl::StrCat(PartsDir(dir), ": no task parts"));
  for (int i = 0; i < static_cast<int>(parts.size()); ++i) {
    if (!parts[i].has_value() && !PathExists(PartFile(dir, i, count))) {
      problems->push_back(absl::StrCat("task ", i, " of ", count, ": missing (no ",
                                       PartFile(dir, i, count), "): run it (again)"));
    }
  }
  return parts;
}

// Names every shard: per split (in the first part's order, then new ones),
// tasks in order, each task's shards in order.
std::vector<Move> PlanMoves(const std::string& dir, const std::vector<std::optional<TaskPart>>& parts,
                            Compression c, Manifest* m, std::vector<std::string>* problems) {
  std::vector<std::string> splits, prefixes;
  for (const auto& p : parts) {
    for (int s = 0; s < p->manifest().splits_size(); ++s) {
      const std::string& name = p->manifest().splits(s).name();
      if (std::find(splits.begin(), splits.end(), name) != splits.end()) continue;
      splits.push_back(name);
      prefixes.push_back(s < p->split_prefixes_size() ? p->split_prefixes(s) : name);
    }
  }
  std::vector<Move> moves;
  for (size_t s = 0; s < splits.size(); ++s) {
    const size_t first = moves.size();
    int64_t records = 0;
    for (size_t t = 0; t < parts.size(); ++t) {
      const TaskPart& p = *parts[t];
      for (const SplitInfo& si : p.manifest().splits()) {
        if (si.name() == splits[s] && (!p.planned() || t == 0)) records += si.records();
      }
      for (const ShardInfo& sh : p.manifest().shards()) {
        if (sh.split() != splits[s]) continue;
        Move mv;
        mv.task = static_cast<int>(t);
        mv.info = sh;
        mv.from = absl::StrCat(PartFolder(dir, t, parts.size()), "/", sh.file());
        moves.push_back(std::move(mv));
      }
    }
    const int64_t count = static_cast<int64_t>(moves.size() - first);
    for (size_t i = first; i < moves.size(); ++i) {
      Move& mv = moves[i];
      const std::string name = ShardName(prefixes[s], static_cast<int64_t>(i - first), count, c);
      if (parts[mv.task]->planned() && name != mv.info.file()) {
        problems->push_back(absl::StrCat("task ", mv.task, ": wrote ", mv.info.file(),
                                         " where the plan has ", name));
      }
      mv.to = absl::StrCat(dir, "/", name);
      mv.info.set_file(name);
      mv.info.set_index_file(name + ".index");
    }
    SplitInfo* info = m->add_splits();
    info->set_name(splits[s]);
    info->set_records(records);
    info->set_shards(count);
  }
  return moves;
}

// Verifies every shard on `threads` threads; an interrupted earlier merge
// may already have moved some to their final names.
void VerifyMoves(const std::vector<Move>& moves, int threads, std::vector<std::string>* problems) {
  std::mutex mu;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < moves.size();) {
      const Move& mv = moves[i];
      std::string problem;
      if (PathExists(mv.from)) {
        problem = PathExists(mv.to) ? absl::StrCat(mv.to, " already exists (not from this merge)")
                                    : VerifyShard(mv.from, mv.info);
      } else if (!PathExists(mv.to) || !VerifyShard(mv.to, mv.info).empty()) {
        problem = absl::StrCat(mv.from, ": missing");
      }
      if (!problem.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        problems->push_back(absl::StrCat("task ", mv.task, ": ", problem));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  std::sort(problems->begin(), problems->end());
}

absl::Status Problems(const std::string& dir, const std::vector<std::string>& problems) {
  return absl::DataLossError(absl::StrCat(dir, ": ",
                                          Plural(static_cast<int64_t>(problems.size()), "problem"),
                                          " in the task parts; nothing was merged\n  ",
                                          absl::StrJoin(problems, "\n  ")));
}

void AddShard(const ShardInfo& shard, Manifest* m) {
  *m->add_shards() = shard;
  m->set_total_records(m->total_records() + shard.records());
  m->set_total_bytes(m->total_bytes() + shard.bytes());
}

// The verified shards uploaded under their final names, the manifest last;
// the parts stay where they are.
absl::StatusOr<MergeSummary> MergeIntoBucket(const BucketOutput& bucket,
                                             const std::vector<Move>& moves,
                                             const MergeOptions& options,
                                             std::chrono::steady_clock::time_point start,
                                             MergeSummary* summary) {
  Manifest& m = summary->manifest;
  std::vector<BucketOutput::File> files;
  for (const Move& mv : moves) {
    const std::string& local = PathExists(mv.from) ? mv.from : mv.to;
    files.push_back({local, mv.info.file()});
    files.push_back({IndexPathFor(local), mv.info.index_file()});
    AddShard(mv.info, &m);
  }
  RETURN_IF_ERROR(bucket.Publish(files, ManifestToJson(m), options.uploaded));
  summary->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(*summary);
}

}  // namespace

absl::StatusOr<MergeSummary> Merge(const std::string& given, const MergeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string dir = StripTrailingSlashes(given);  // no "out//_parts" in messages
  if (!PathExists(dir)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no such folder (give the OUTPUT the tasks "
                                            "wrote to)"));
  }
  if (PathExists(absl::StrCat(dir, "/manifest.json"))) {
    return absl::AlreadyExistsError(
        absl::StrCat(dir, " already holds a merged dataset (manifest.json)"));
  }
  if (!PathExists(PartsDir(dir))) {
    return absl::NotFoundError(absl::StrCat(dir, ": no task parts (", PartsDir(dir),
                                            " is missing): run the conversion tasks first"));
  }
  std::vector<std::string> problems;
  std::vector<std::optional<TaskPart>> parts = ReadParts(dir, &problems);
  if (!problems.empty()) return Problems(dir, problems);
  const TaskPart& first = *parts[0];
  for (size_t t = 1; t < parts.size(); ++t) {
    if (HeaderKey(*parts[t]) != HeaderKey(first)) {
      problems.push_back(absl::StrCat("task ", t, ": from another run than task 0 (other input, "
                                      "options or plan): run it again with the same command"));
    }
  }
  if (!problems.empty()) return Problems(dir, problems);

  MergeSummary summary;
  summary.tasks = static_cast<int>(parts.size());
  Manifest& m = summary.manifest;
  m = first.manifest();
  m.clear_shards();
  m.clear_splits();
  m.clear_total_records();
  m.clear_total_bytes();
  if (!first.planned()) {
    m.clear_features();
    bool folded_none = true;
    for (const auto& p : parts) {
      if (p->manifest().total_records() == 0) continue;  // no record lacks a feature
      std::vector<FeatureSchema> known(m.features().begin(), m.features().end());
      const std::vector<FeatureSchema> seen(p->manifest().features().begin(),
                                            p->manifest().features().end());
      absl::Status s = FoldSchema(&known, seen, folded_none);
      folded_none = false;
      if (!s.ok()) {
        problems.push_back(absl::StrCat("task ", p->task_index(), ": ", s.message()));
      }
      m.clear_features();
      for (auto& f : known) *m.add_features() = f;
    }
  }
  ASSIGN_OR_RETURN(Compression c, ParseCompression(first.manifest().options().compression()));
  std::vector<Move> moves = PlanMoves(dir, parts, c, &m, &problems);
  std::optional<BucketOutput> bucket;
  if (!options.output.empty()) {
    std::vector<std::string> prefixes;
    for (const auto& p : parts) {
      prefixes.insert(prefixes.end(), p->split_prefixes().begin(), p->split_prefixes().end());
    }
    ASSIGN_OR_RETURN(bucket, BucketOutput::Prepare(options.output, prefixes, options.overwrite));
  }
  const int threads = options.threads > 0 ? options.threads
                                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  VerifyMoves(moves, threads, &problems);
  if (!problems.empty()) return Problems(dir, problems);
  if (bucket.has_value()) return MergeIntoBucket(*bucket, moves, options, start, &summary);

  for (const Move& mv : moves) {
    if (PathExists(mv.from)) {
      if (::rename(IndexPathFor(mv.from).c_str(), IndexPathFor(mv.to).c_str()) != 0) {
        return IoError("cannot move the index", IndexPathFor(mv.to), errno);
      }
      if (::rename(mv.from.c_str(), mv.to.c_str()) != 0) {
        return IoError("cannot move the shard", mv.to, errno);
      }
    }
    AddShard(mv.info, &m);
  }
  RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(dir, "/manifest.json"), ManifestToJson(m)));
  for (size_t t = 0; t < parts.size(); ++t) {
    ::unlink(PartFile(dir, static_cast<int>(t), static_cast<int>(parts.size())).c_str());
    RETURN_IF_ERROR(RemoveFolder(PartFolder(dir, static_cast<int>(t), static_cast<int>(parts.size()))));
  }
  ::rmdir(PartsDir(dir).c_str());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace shardfeed
