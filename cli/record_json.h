// Renders a record as one line of JSON for `shardfeed cat`.
#ifndef SHARDFEED_CLI_RECORD_JSON_H_
#define SHARDFEED_CLI_RECORD_JSON_H_

#include <string>

#include "absl/strings/string_view.h"
#include "proto/example.pb.h"

namespace shardfeed::cli {

// Parses `record` as an Example, strictly: it must parse and hold no unknown
// fields anywhere (so a raw string or another message type that happens to
// be valid protobuf wire data is not taken for an Example).
bool ParseStrictExample(absl::string_view record, Example* example);

// The same for a tf.train.SequenceExample (context, feature_lists).
bool ParseStrictSequenceExample(absl::string_view record, SequenceExample* sequence);

// The record as one JSON line (no newline): protobuf's canonical JSON
// mapping of the Example, or else of the SequenceExample ({"context": ...,
// "featureLists": ...}), when it is one and !raw; otherwise a JSON string of
// the record's bytes in base64. (A SequenceExample without feature_lists is
// the same bytes as an Example: it prints as one.)
std::string RecordToJson(absl::string_view record, bool raw);

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_RECORD_JSON_H_
