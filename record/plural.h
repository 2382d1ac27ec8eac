// "1 shard", "2 shards", "0 records": a count with its noun, in the number
// it takes. For every message that counts something. Pure; English nouns
// whose plural adds "s".
#ifndef SHARDFEED_RECORD_PLURAL_H_
#define SHARDFEED_RECORD_PLURAL_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace shardfeed {

inline std::string Plural(int64_t n, absl::string_view noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_PLURAL_H_
