// Reads members of a .tar.gz (or plain .tar) archive directly, without
// extracting anything to disk: the downloaded CIFAR archives are converted
// as they are. A truncated or damaged archive is DATA_LOSS naming the
// archive, the member and the offset.
#ifndef SHARDFEED_CONVERTER_TAR_READER_H_
#define SHARDFEED_CONVERTER_TAR_READER_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

// Returns the contents of every regular-file member whose name `wanted`
// accepts, keyed by member name. The archive is read once, sequentially.
absl::StatusOr<std::map<std::string, std::string>> ReadTarMembers(
    const std::string& archive_path, const std::function<bool(absl::string_view)>& wanted);

// True for names ending in .tar.gz, .tgz or .tar.
bool IsTarArchiveName(absl::string_view path);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_TAR_READER_H_
