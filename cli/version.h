// The shardfeed version, recorded in manifests and printed by --version.
#ifndef SHARDFEED_CLI_VERSION_H_
#define SHARDFEED_CLI_VERSION_H_

namespace shardfeed {
inline constexpr char kVersion[] = "0.1.0";
}  // namespace shardfeed

#endif  // SHARDFEED_CLI_VERSION_H_
