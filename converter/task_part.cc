#include "converter/task_part.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/shard_writer.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/shard_name.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<std::pair<int, int>> ResolveTask(int64_t index, int64_t count) {
  auto env = [](const char* name, int64_t* v) {
    const char* text = std::getenv(name);
    return text != nullptr && absl::SimpleAtoi(text, v);
  };
  int64_t id, min = 0, step = 1, n;
  if (index < 0 && env("SLURM_ARRAY_TASK_ID", &id)) {
    env("SLURM_ARRAY_TASK_MIN", &min);
    env("SLURM_ARRAY_TASK_STEP", &step);
    index = (id - min) / std::max<int64_t>(step, 1);
    if (count < 0 && env("SLURM_ARRAY_TASK_COUNT", &n)) count = n;
  } else if (index < 0 && env("JOB_COMPLETION_INDEX", &id)) {
    index = id;
  }
  if (index < 0 && count < 0) return std::make_pair(0, 0);
  if (count < 1 || index < 0 || index >= count || count > 99999) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", index, " of ", count,
        ": give the task index I and count N with 0 <= I < N <= 99999 (--task-index, "
        "--task-count; Python: task_index=, task_count=); a Kubernetes Indexed Job needs the "
        "count (its completions)"));
  }
  return std::make_pair(static_cast<int>(index), static_cast<int>(count));
}

std::string PartsDir(const std::string& dir) { return JoinPath(dir, "_parts"); }

std::string PartName(int task_index, int task_count) {
  return absl::StrFormat("task-%05d-of-%05d", task_index, task_count);
}

std::string PartFolder(const std::string& dir, int task_index, int task_count) {
  return absl::StrCat(PartsDir(dir), "/", PartName(task_index, task_count));
}

std::string PartFile(const std::string& dir, int task_index, int task_count) {
  return absl::StrCat(PartFolder(dir, task_index, task_count), ".json");
}

absl::Status RemoveFolder(const std::string& folder) {
  DIR* d = ::opendir(folder.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return absl::OkStatus();
    return IoError("cannot list directory", folder, errno);
  }
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    ::unlink(absl::StrCat(folder, "/", name).c_str());
  }
  ::closedir(d);
  if (::rmdir(folder.c_str()) != 0 && errno != ENOENT) {
    return IoError("cannot remove directory", folder, errno);
  }
  return absl::OkStatus();
}

absl::Status BeginPart(const std::string& dir, int task_index, int task_count) {
  if (task_count < 1 || task_index < 0 || task_index >= task_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("task index ", task_index, " is not in [0, task count ", task_count, ")"));
  }
  if (PathExists(absl::StrCat(dir, "/manifest.json"))) {
    return absl::AlreadyExistsError(absl::StrCat(
        dir, " already holds a merged dataset (manifest.json); write the tasks into a new folder"));
  }
  const std::string file = PartFile(dir, task_index, task_count);
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
    return IoError("cannot remove the earlier part file", file, errno);
  }
  const std::string folder = PartFolder(dir, task_index, task_count);
  RETURN_IF_ERROR(RemoveFolder(folder));
  return MakeDirs(folder);
}

absl::Status CommitPart(const std::string& dir, const TaskPart& part) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(part, &json, options).ok()) {
    return absl::InternalError("cannot serialize the task part");
  }
  return WriteFileAtomically(PartFile(dir, part.task_index(), part.task_count()), json);
}

absl::StatusOr<TaskPart> ReadPart(const std::string& path) {
  ASSIGN_OR_RETURN(std::string json, ReadFileToString(path));
  TaskPart part;
  google::protobuf::util::JsonParseOptions options;
  if (!google::protobuf::util::JsonStringToMessage(json, &part, options).ok()) {
    return absl::DataLossError(absl::StrCat(path, ": not a task part file (damaged JSON)"));
  }
  return part;
}

}  // namespace shardfeed
