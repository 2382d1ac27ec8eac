#include "record/remote/list_xml.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace shardfeed {
namespace remote {
namespace {

// The text of each <tag>...</tag> in `xml`, in order (not nested).
std::vector<absl::string_view> Elements(absl::string_view xml, absl::string_view tag) {
  std::vector<absl::string_view> out;
  const std::string open = absl::StrCat("<", tag, ">"), close = absl::StrCat("</", tag, ">");
  size_t pos = 0;
  for (;;) {
    const size_t a = xml.find(open, pos);
    if (a == absl::string_view::npos) break;
    const size_t b = xml.find(close, a + open.size());
    if (b == absl::string_view::npos) break;
    out.push_back(xml.substr(a + open.size(), b - a - open.size()));
    pos = b + close.size();
  }
  return out;
}

std::string First(absl::string_view xml, absl::string_view tag) {
  auto v = Elements(xml, tag);
  return v.empty() ? std::string() : XmlUnescape(v[0]);
}

}  // namespace

std::string XmlUnescape(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    const size_t semi = s.find(';', i);
    if (semi == absl::string_view::npos) {
      out.push_back(s[i]);
      continue;
    }
    absl::string_view ent = s.substr(i + 1, semi - i - 1);
    uint32_t code = 0;
    if (ent == "amp") out.push_back('&');
    else if (ent == "lt") out.push_back('<');
    else if (ent == "gt") out.push_back('>');
    else if (ent == "quot") out.push_back('"');
    else if (ent == "apos") out.push_back('\'');
    else if (ent.size() > 1 && ent[0] == '#' &&
             (ent[1] == 'x' ? absl::SimpleHexAtoi(ent.substr(2), &code)
                            : absl::SimpleAtoi(ent.substr(1), &code))) {
      if (code < 0x80) {
        out.push_back(static_cast<char>(code));
      } else if (code < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (code >> 6)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
      } else if (code < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (code >> 12)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | (code >> 18)));
        out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
      }
    } else {
      absl::StrAppend(&out, s.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

absl::StatusOr<ListPage> ParseListObjectsV2(absl::string_view xml, const std::string& url) {
  if (xml.find("<ListBucketResult") == absl::string_view::npos) {
    return absl::DataLossError(absl::StrCat(url, ": the listing is not a ListBucketResult"));
  }
  ListPage page;
  for (absl::string_view c : Elements(xml, "Contents")) {
    ObjectInfo o;
    o.key = First(c, "Key");
    o.etag = First(c, "ETag");
    const std::string size = First(c, "Size");
    if (o.key.empty() || !absl::SimpleAtoi(size, &o.size)) {
      return absl::DataLossError(absl::StrCat(url, ": a listed object without Key or Size"));
    }
    page.objects.push_back(std::move(o));
  }
  for (absl::string_view p : Elements(xml, "CommonPrefixes")) {
    page.prefixes.push_back(First(p, "Prefix"));
  }
  page.truncated = First(xml, "IsTruncated") == "true";
  page.next_token = First(xml, "NextContinuationToken");
  if (page.truncated && page.next_token.empty()) {
    return absl::DataLossError(
        absl::StrCat(url, ": the listing is truncated but has no NextContinuationToken"));
  }
  return page;
}

}  // namespace remote
}  // namespace shardfeed
