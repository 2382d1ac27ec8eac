// `check`'s answer to "will the Loader's decode stage take these records?":
// every encoded image (JPEG, PNG) and WAV file a dataset's records hold is
// verified as the decode stage would read it (reader/decode/).
//
// Which values: every value of a feature the manifest declares an encoded
// image (image-folder's image/encoded), and every bytes value that starts
// with a JPEG, PNG or WAV signature (a value that claims to be one must be
// one). A value of an undeclared feature that is not decodable (a GIF, no
// signature) is a problem only when most of its feature's values across
// the dataset are JPEG/PNG/WAV: ResolveSuspects decides after all shards.
// Raw tensors (a manifest dtype) are never looked at.
//
// Levels: header checks always (JPEG/PNG, a header that parses, the pixel
// limit, a JPEG's end-of-image marker and a PNG's IEND, so a file cut short
// is caught; WAV: the header and the data chunk's length); with
// `full_decode`, a whole decode of every image. Problems carry the record's
// source file (its image/filename or filename feature) when it has one.
//
// A MediaChecker checks one shard; thread-compatible (one per thread).
// Decoding is thread-safe.
#ifndef SHARDFEED_CHECK_MEDIA_CHECK_H_
#define SHARDFEED_CHECK_MEDIA_CHECK_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "check/check.h"
#include "proto/manifest.pb.h"

namespace shardfeed {

// What a dataset says about its media features.
struct MediaSchema {
  std::set<std::string, std::less<>> images;  // declared encoded images
  std::set<std::string, std::less<>> raw;     // raw tensors (dtype): not media
  bool full_decode = false;
};

// From a manifest; `decode`: -1 the default (a full decode for datasets
// made by `convert image-folder`, headers otherwise), 0 headers, 1 full.
MediaSchema MediaSchemaFor(const Manifest* manifest, int decode);

class MediaChecker {
 public:
  MediaChecker(std::string path, const MediaSchema* schema, int max_problems)
      : path_(std::move(path)), schema_(schema), max_problems_(max_problems) {}

  // Verifies the media values of one record at `offset`.
  void Add(absl::string_view record, int64_t offset);

  std::vector<CheckProblem>& problems() { return problems_; }

  // Per feature: values seen, those with a decodable signature, and the
  // undecodable values of undeclared features (the first few).
  struct FeatureTally {
    int64_t values = 0;
    int64_t media = 0;
    int64_t suspects = 0;
    std::vector<CheckProblem> first_suspects;
  };
  const std::map<std::string, FeatureTally, std::less<>>& tallies() const { return tallies_; }

 private:
  void Report(int64_t offset, std::string what, absl::string_view source,
              std::vector<CheckProblem>* to, int64_t* count);

  std::string path_;
  const MediaSchema* schema_;
  int max_problems_;
  int64_t reported_ = 0;
  bool said_more_ = false;
  std::vector<CheckProblem> problems_;
  std::map<std::string, FeatureTally, std::less<>> tallies_;
};

// The suspects of every feature whose values are mostly media (over all
// the checkers given, i.e. the dataset), appended to *problems.
void ResolveSuspects(const std::vector<const MediaChecker*>& checkers,
                     std::vector<CheckProblem>* problems);

}  // namespace shardfeed

#endif  // SHARDFEED_CHECK_MEDIA_CHECK_H_
