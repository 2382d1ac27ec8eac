// JSON string literals for the --json outputs written by hand (check,
// convert, bench): JsonQuoted("a\"b") is "\"a\\\"b\"". Control characters
// become \uXXXX; other bytes pass through (paths are usually UTF-8).
// Header-only, no state.
#ifndef SHARDFEED_RECORD_JSON_TEXT_H_
#define SHARDFEED_RECORD_JSON_TEXT_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

inline std::string JsonEscape(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out;
}

inline std::string JsonQuoted(absl::string_view s) {
  return absl::StrCat("\"", JsonEscape(s), "\"");
}

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_JSON_TEXT_H_
