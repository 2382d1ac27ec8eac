// A small, strict reader for the pickles of CIFAR's "python version": a
// protocol-2 pickle of a dict with bytes keys, lists of ints, strings, and a
// numpy uint8 array (numpy.core.multiarray._reconstruct + BUILD). Only the
// opcodes those files use are accepted; anything else, and any truncation, is
// an error naming the file, the byte offset and the opcode. No Python runs.
//
// Large strings (the 30 MB pixel array) are views into the input buffer, not
// copies: the PickleValue tree must not outlive the bytes it was read from.
#ifndef SHARDFEED_CONVERTER_PICKLE_READER_H_
#define SHARDFEED_CONVERTER_PICKLE_READER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

struct PickleValue {
  enum class Kind { kNone, kBool, kInt, kString, kList, kTuple, kDict, kGlobal, kObject };
  Kind kind = Kind::kNone;
  int64_t integer = 0;            // kInt, kBool
  absl::string_view string;       // kString (a view into the input)
  std::string global;             // kGlobal: "module name"; kObject: its class
  std::vector<std::shared_ptr<PickleValue>> items;  // kList, kTuple; kObject: args
  std::vector<std::pair<std::shared_ptr<PickleValue>, std::shared_ptr<PickleValue>>> dict;
  std::shared_ptr<PickleValue> state;  // kObject: the BUILD state

  // For a kDict with string keys: the value at `key`, or null.
  const PickleValue* Find(absl::string_view key) const;
};

// Parses a whole pickle. `path` names the file in errors.
absl::StatusOr<std::shared_ptr<PickleValue>> ParsePickle(absl::string_view bytes,
                                                         absl::string_view path);

// A numpy uint8 array reconstructed from a pickle.
struct NumpyUint8Array {
  std::vector<int64_t> shape;
  absl::string_view data;  // row-major, a view into the pickle bytes
};

// Interprets `value` as numpy.core.multiarray._reconstruct(ndarray, ...)
// with BUILD state (version, shape, dtype('u1'), fortran=False, bytes).
absl::StatusOr<NumpyUint8Array> AsNumpyUint8Array(const PickleValue& value,
                                                  absl::string_view path);

}  // namespace shardfeed

#endif  // SHARDFEED_CONVERTER_PICKLE_READER_H_
