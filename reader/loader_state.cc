// LoaderState's text form: "shardfeed-state v1 seed=S epoch=E position=P
// batches=B world=W fp=HEX".
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "reader/loader.h"

namespace shardfeed {

std::string LoaderState::ToString() const {
  return absl::StrCat("shardfeed-state v1 seed=", seed, " epoch=", epoch, " position=", position,
                      " batches=", batches, " world=", world_size, " fp=", absl::Hex(fingerprint, absl::kZeroPad16));
}

bool LoaderState::operator==(const LoaderState& o) const {
  return seed == o.seed && epoch == o.epoch && position == o.position && batches == o.batches &&
         world_size == o.world_size && fingerprint == o.fingerprint;
}

absl::StatusOr<LoaderState> LoaderState::Parse(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ' ', absl::SkipEmpty());
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("not a loader state (", why, "): '", text, "'"));
  };
  if (parts.size() != 8 || parts[0] != "shardfeed-state" || parts[1] != "v1") {
    return bad("expected 'shardfeed-state v1' and 6 fields");
  }
  LoaderState s;
  const char* names[] = {"seed=", "epoch=", "position=", "batches=", "world=", "fp="};
  for (int i = 0; i < 6; ++i) {
    absl::string_view p = parts[i + 2];
    if (!absl::ConsumePrefix(&p, names[i])) return bad(absl::StrCat("field ", i + 3));
    bool ok = false;
    int64_t v = 0;
    switch (i) {
      case 0: ok = absl::SimpleAtoi(p, &s.seed); break;
      case 1: ok = absl::SimpleAtoi(p, &s.epoch); break;
      case 2: ok = absl::SimpleAtoi(p, &s.position); break;
      case 3: ok = absl::SimpleAtoi(p, &s.batches); break;
      case 4: ok = absl::SimpleAtoi(p, &v) && v >= 1 && v < (1 << 30); s.world_size = v; break;
      case 5: ok = absl::SimpleHexAtoi(p, &s.fingerprint); break;
    }
    if (!ok) return bad(absl::StrCat("bad ", names[i]));
  }
  return s;
}

}  // namespace shardfeed
