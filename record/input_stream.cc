#include "record/input_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "record/errors.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// Reads a source in order: straight through ReadAt for a local file, in
// kRemoteBlockSize blocks for a remote object.
class SourceCursor {
 public:
  explicit SourceCursor(std::unique_ptr<RandomAccessSource> source)
      : source_(std::move(source)), blocks_(source_->local_path().empty()) {}

  absl::StatusOr<size_t> Read(char* dst, size_t n) {
    if (!blocks_) {
      ASSIGN_OR_RETURN(size_t got, source_->ReadAt(pos_, dst, n));
      pos_ += got;
      return got;
    }
    size_t done = 0;
    while (done < n) {
      if (at_ == block_.size()) {
        if (pos_ >= source_->size()) break;
        block_.resize(static_cast<size_t>(
            std::min<uint64_t>(kRemoteBlockSize, source_->size() - pos_)));
        ASSIGN_OR_RETURN(size_t got, source_->ReadAt(pos_, block_.data(), block_.size()));
        block_.resize(got);
        at_ = 0;
        pos_ += got;
        if (got == 0) break;
      }
      const size_t take = std::min(n - done, block_.size() - at_);
      std::memcpy(dst + done, block_.data() + at_, take);
      at_ += take;
      done += take;
    }
    return done;
  }
  void Seek(uint64_t offset) {
    pos_ = offset;
    block_.clear();
    at_ = 0;
  }
  // Bytes consumed by the caller.
  uint64_t position() const { return pos_ - (block_.size() - at_); }
  const std::string& path() const { return source_->path(); }

 private:
  std::unique_ptr<RandomAccessSource> source_;
  const bool blocks_;
  uint64_t pos_ = 0;          // next byte of the source to fetch
  std::vector<char> block_;   // fetched, from pos_ - block_.size()
  size_t at_ = 0;             // first unconsumed byte of block_
};

class FileInputStream : public InputStream {
 public:
  explicit FileInputStream(std::unique_ptr<RandomAccessSource> source)
      : file_(std::move(source)) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override { return file_.Read(dst, n); }
  absl::Status Rewind() override { return Seek(0); }
  absl::Status Seek(uint64_t offset) override {
    file_.Seek(offset);
    return absl::OkStatus();
  }
  uint64_t file_position() const override { return file_.position(); }

 private:
  SourceCursor file_;
};

// Inflates a zlib or gzip stream. Multi-member gzip files (concatenated
// members, as `cat a.gz b.gz` or some writers produce) are read as one stream.
class InflateInputStream : public InputStream {
 public:
  InflateInputStream(std::unique_ptr<RandomAccessSource> source, Compression compression)
      : file_(std::move(source)), gzip_(compression == Compression::kGzip),
        in_(kInputBufferSize) {
    std::memset(&z_, 0, sizeof(z_));
    init_status_ = Init();
  }
  ~InflateInputStream() override {
    if (initialized_) inflateEnd(&z_);
  }

  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    RETURN_IF_ERROR(init_status_);
    size_t done = 0;
    while (done < n) {
      if (member_ended_) {
        ASSIGN_OR_RETURN(bool more, StartNextMember());
        if (!more) break;
      }
      if (z_.avail_in == 0) {
        RETURN_IF_ERROR(FillInput(1));
        if (z_.avail_in == 0) {
          if (!started_) break;  // an empty file holds no records
          return DataLossAt(file_.path(), CompressedOffset(),
                            absl::StrCat("compressed (", gzip_ ? "gzip" : "zlib",
                                         ") stream is truncated: the file ends "
                                         "before the end of the stream"));
        }
      }
      started_ = true;
      z_.next_out = reinterpret_cast<Bytef*>(dst + done);
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - done, 1u << 30));
      uInt before = z_.avail_out;
      int rc = inflate(&z_, Z_NO_FLUSH);
      done += before - z_.avail_out;
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        return DataLossAt(file_.path(), CompressedOffset(),
                          absl::StrCat("corrupt compressed data: ",
                                       z_.msg ? z_.msg : "invalid deflate stream"));
      } else if (rc == Z_MEM_ERROR) {
        return absl::ResourceExhaustedError("zlib: out of memory");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return absl::InternalError(absl::StrCat("zlib inflate returned ", rc));
      }
    }
    return done;
  }

  absl::Status Rewind() override {
    file_.Seek(0);
    if (initialized_) inflateEnd(&z_);
    initialized_ = false;
    std::memset(&z_, 0, sizeof(z_));
    member_ended_ = false;
    started_ = false;
    consumed_before_buffer_ = 0;
    init_status_ = Init();
    return init_status_;
  }

  absl::Status Seek(uint64_t) override {
    return absl::UnimplementedError("compressed streams cannot seek");
  }

  uint64_t file_position() const override { return CompressedOffset(); }

 private:
  static constexpr size_t kInputBufferSize = 1 << 20;

  absl::Status Init() {
    int window_bits = gzip_ ? 16 + MAX_WBITS : MAX_WBITS;
    if (inflateInit2(&z_, window_bits) != Z_OK) {
      return absl::InternalError("zlib: inflateInit2 failed");
    }
    initialized_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in = 0;
    return absl::OkStatus();
  }

  // Makes at least `want` unread input bytes available unless the file ends.
  absl::Status FillInput(size_t want) {
    if (z_.avail_in >= want) return absl::OkStatus();
    size_t offset = reinterpret_cast<char*>(z_.next_in) - in_.data();
    consumed_before_buffer_ += offset;
    std::memmove(in_.data(), z_.next_in, z_.avail_in);
    size_t have = z_.avail_in;
    while (have < want) {
      ASSIGN_OR_RETURN(size_t got, file_.Read(in_.data() + have, in_.size() - have));
      if (got == 0) break;
      have += got;
    }
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in = static_cast<uInt>(have);
    return absl::OkStatus();
  }

  // After a member's end: true if another gzip member follows.
  absl::StatusOr<bool> StartNextMember() {
    RETURN_IF_ERROR(FillInput(2));
    if (z_.avail_in == 0) return false;
    const auto* p = z_.next_in;
    if (gzip_ && z_.avail_in >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
      if (inflateReset(&z_) != Z_OK) return absl::InternalError("zlib: inflateReset failed");
      member_ended_ = false;
      return true;
    }
    return DataLossAt(file_.path(), CompressedOffset(),
                      absl::StrCat(z_.avail_in, "+ bytes of trailing garbage after the end "
                                                "of the compressed stream"));
  }

  uint64_t CompressedOffset() const {
    return consumed_before_buffer_ + (reinterpret_cast<const char*>(z_.next_in) - in_.data());
  }

  SourceCursor file_;
  bool gzip_;
  std::vector<char> in_;
  z_stream z_;
  bool initialized_ = false;
  bool member_ended_ = false;
  bool started_ = false;
  uint64_t consumed_before_buffer_ = 0;
  absl::Status init_status_;
};

}  // namespace

std::unique_ptr<InputStream> MakeInputStream(std::unique_ptr<RandomAccessSource> source,
                                             Compression compression) {
  if (compression == Compression::kZlib || compression == Compression::kGzip) {
    return std::make_unique<InflateInputStream>(std::move(source), compression);
  }
  return std::make_unique<FileInputStream>(std::move(source));
}

}  // namespace shardfeed
