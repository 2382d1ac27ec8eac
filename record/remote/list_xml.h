// The answer to S3's ListObjectsV2 (XML), read without an XML library: the
// few elements a listing needs, entities decoded. Pure functions.
#ifndef SHARDFEED_RECORD_REMOTE_LIST_XML_H_
#define SHARDFEED_RECORD_REMOTE_LIST_XML_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {
namespace remote {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;  // as the server quotes it ("\"abc\"")
};

struct ListPage {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> prefixes;  // CommonPrefixes (with a delimiter)
  bool truncated = false;
  std::string next_token;  // NextContinuationToken
};

// DATA_LOSS naming `url` when the XML is not a ListBucketResult.
absl::StatusOr<ListPage> ParseListObjectsV2(absl::string_view xml, const std::string& url);

// &amp; &lt; &gt; &quot; &apos; and numeric references.
std::string XmlUnescape(absl::string_view s);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_LIST_XML_H_
