// The shardfeed version: the one source of truth. `shardfeed --version`,
// manifests (tool_version), the installed pkg-config file and the CMake
// package version file (generated from this header by //:install) all read
// it. Bump the three numbers together.
#ifndef SHARDFEED_SHARDFEED_VERSION_H_
#define SHARDFEED_SHARDFEED_VERSION_H_

#define SHARDFEED_VERSION_MAJOR 0
#define SHARDFEED_VERSION_MINOR 1
#define SHARDFEED_VERSION_PATCH 0
#define SHARDFEED_VERSION "0.1.0"

#endif  // SHARDFEED_SHARDFEED_VERSION_H_
