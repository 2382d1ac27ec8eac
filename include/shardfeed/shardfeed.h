// shardfeed's public C++ API, in one header.
//
//   #include <shardfeed/shardfeed.h>
//
// Link with the installed library (`bazel run //:install -- PREFIX`; CMake:
// find_package(shardfeed) and shardfeed::shardfeed; pkg-config: shardfeed),
// or from Bazel with deps = ["@shardfeed//:shardfeed"].
//
// Reading (reader/loader.h has the whole contract):
//   SHARDFEED_ASSIGN_OR_RETURN(shardfeed::Dataset ds,
//                              shardfeed::Dataset::Open({"cifar10/"}, "train"));
//   shardfeed::LoaderOptions o;   // features default to the manifest's schema
//   o.batch_size = 256;
//   SHARDFEED_ASSIGN_OR_RETURN(auto loader, shardfeed::Loader::Create(ds, o));
//   for (;;) {
//     absl::StatusOr<shardfeed::Batch> b = loader->Next();
//     if (absl::IsOutOfRange(b.status())) break;  // all epochs delivered
//     if (!b.ok()) return b.status();             // DATA_LOSS "file:offset: ..."
//     const shardfeed::Tensor* image = b->Find("image");
//   }
//
// Also: Convert (converter/convert.h), Check (check/check.h), RecordReader
// and RecordWriter (record/), the order-independent Fingerprint of decoded
// records (reader/fingerprint.h), the SHARDFEED_ASSIGN_OR_RETURN /
// SHARDFEED_RETURN_IF_ERROR macros and SHARDFEED_VERSION.
//
// Errors are absl::Status values, never exceptions. Every header below is
// installed; none needs the CUDA toolkit (the CUDA runtime is inside the
// library, linked statically).
#ifndef SHARDFEED_SHARDFEED_SHARDFEED_H_
#define SHARDFEED_SHARDFEED_SHARDFEED_H_

#include "check/check.h"
#include "converter/convert.h"
#include "reader/dataset.h"
#include "reader/feature_spec.h"
#include "reader/fingerprint.h"
#include "reader/loader.h"
#include "record/index.h"
#include "record/record_reader.h"
#include "record/record_writer.h"
#include "shardfeed/status_macros.h"
#include "shardfeed/version.h"

#endif  // SHARDFEED_SHARDFEED_SHARDFEED_H_
