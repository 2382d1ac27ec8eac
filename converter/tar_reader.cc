#include "converter/tar_reader.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "record/compression.h"
#include "record/errors.h"
#include "record/file.h"
#include "record/input_stream.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

constexpr size_t kBlock = 512;

// Reads exactly n bytes unless the stream ends; returns how many were read.
absl::StatusOr<size_t> ReadFull(InputStream* in, char* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    ASSIGN_OR_RETURN(size_t got, in->Read(dst + done, n - done));
    if (got == 0) break;
    done += got;
  }
  return done;
}

absl::StatusOr<uint64_t> ParseOctal(absl::string_view field, const std::string& archive,
                                    uint64_t offset) {
  uint64_t v = 0;
  for (char c : field) {
    if (c == '\0' || c == ' ') continue;
    if (c < '0' || c > '7') {
      return DataLossAt(archive, offset, "damaged tar header: size is not an octal number");
    }
    v = v * 8 + (c - '0');
  }
  return v;
}

}  // namespace

bool IsTarArchiveName(absl::string_view path) {
  return absl::EndsWith(path, ".tar.gz") || absl::EndsWith(path, ".tgz") ||
         absl::EndsWith(path, ".tar");
}

absl::StatusOr<std::map<std::string, std::string>> ReadTarMembers(
    const std::string& archive_path, const std::function<bool(absl::string_view)>& wanted) {
  ASSIGN_OR_RETURN(auto file, ReadableFile::Open(archive_path));
  Compression c = absl::EndsWith(archive_path, ".tar") ? Compression::kNone : Compression::kGzip;
  auto in = MakeInputStream(std::move(file), c);
  std::map<std::string, std::string> members;
  uint64_t offset = 0;  // in the uncompressed tar stream
  std::string skip_buffer(1 << 20, '\0');
  for (;;) {
    char header[kBlock];
    ASSIGN_OR_RETURN(size_t got, ReadFull(in.get(), header, kBlock));
    if (got == 0) break;  // no end-of-archive blocks: accept, as GNU tar does
    if (got < kBlock) {
      return DataLossAt(archive_path, offset, "truncated archive: partial tar header");
    }
    if (std::all_of(header, header + kBlock, [](char ch) { return ch == 0; })) break;
    std::string name(header, strnlen(header, 100));
    if (std::memcmp(header + 257, "ustar", 5) == 0 && header[345] != 0) {
      name = absl::StrCat(std::string(header + 345, strnlen(header + 345, 155)), "/", name);
    }
    ASSIGN_OR_RETURN(uint64_t size, ParseOctal(absl::string_view(header + 124, 12),
                                               archive_path, offset));
    const char type = header[156];
    offset += kBlock;
    const uint64_t padded = (size + kBlock - 1) / kBlock * kBlock;
    const bool regular = type == '0' || type == '\0';
    if (regular && wanted(name)) {
      std::string data(size, '\0');
      ASSIGN_OR_RETURN(size_t n, ReadFull(in.get(), data.data(), size));
      if (n < size) {
        return DataLossAt(archive_path, offset + n,
                          absl::StrCat("truncated archive: member '", name, "' declares ", size,
                                       " bytes but the archive ends after ", n));
      }
      members[name] = std::move(data);
      uint64_t pad = padded - size;
      ASSIGN_OR_RETURN(size_t p, ReadFull(in.get(), skip_buffer.data(), pad));
      if (p < pad) return DataLossAt(archive_path, offset + size, "truncated archive padding");
    } else {
      uint64_t left = padded;
      while (left > 0) {
        ASSIGN_OR_RETURN(size_t n, ReadFull(in.get(), skip_buffer.data(),
                                            std::min<uint64_t>(left, skip_buffer.size())));
        if (n == 0) {
          return DataLossAt(archive_path, offset + padded - left,
                            absl::StrCat("truncated archive: member '", name, "' is cut short"));
        }
        left -= n;
      }
    }
    offset += padded;
  }
  return members;
}

}  // namespace shardfeed
