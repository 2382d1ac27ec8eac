// The shardfeed version, recorded in manifests and printed by --version.
// Defined once, in shardfeed/version.h (also what //:install writes into the
// pkg-config and CMake version files).
#ifndef SHARDFEED_CLI_VERSION_H_
#define SHARDFEED_CLI_VERSION_H_

#include "shardfeed/version.h"

namespace shardfeed {
inline constexpr char kVersion[] = SHARDFEED_VERSION;
}  // namespace shardfeed

#endif  // SHARDFEED_CLI_VERSION_H_
