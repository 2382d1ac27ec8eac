// The files a task of a distributed conversion leaves for `merge`:
//   DIR/_parts/task-IIIII-of-NNNNN/      its shards and index files
//   DIR/_parts/task-IIIII-of-NNNNN.json  a TaskPart (proto/task_part.proto),
//                                        written last: the task's commit
// A task that runs again (preempted, retried) first removes its own part
// file and folder, and touches nothing else, so tasks may run concurrently
// and in any order.
#ifndef SHARDFEED_CONVERTER_TASK_PART_H_
#define SHARDFEED_CONVERTER_TASK_PART_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "proto/task_part.pb.h"

namespace shardfeed {

// The task {index, count} from explicit values (-1: not given), else from the
// environment: a Slurm array job (SLURM_ARRAY_TASK_ID, minus
// SLURM_ARRAY_TASK_MIN, over the step; the count from SLURM_ARRAY_TASK_COUNT)
// or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX; the count must be
// given). {0, 0}: no tasks. INVALID_ARGUMENT unless 0 <= index < count <=
// 99999. Used by `shardfeed convert` and shardfeed.convert() in Python.
absl::StatusOr<std::pair<int, int>> ResolveTask(int64_t index, int64_t count);

// "DIR/_parts".
std::string PartsDir(const std::string& dir);
// "task-00003-of-00008".
std::string PartName(int task_index, int task_count);
// "DIR/_parts/task-00003-of-00008".
std::string PartFolder(const std::string& dir, int task_index, int task_count);
// "DIR/_parts/task-00003-of-00008.json".
std::string PartFile(const std::string& dir, int task_index, int task_count);

// Checks the task numbers, removes this task's earlier part file and folder
// (a re-run replaces only its own shards) and creates its folder afresh.
// Fails if DIR already holds a merged dataset (manifest.json).
absl::Status BeginPart(const std::string& dir, int task_index, int task_count);

// Writes the part file atomically (the task's last step).
absl::Status CommitPart(const std::string& dir, const TaskPart& part);

absl::StatusOr<TaskPart> ReadPart(const std::string& path);

// Removes a folder and the plain files in it (not recursive). Missing: OK.
absl::Status RemoveFolder(const std::string& folder);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_TASK_PART_H_
