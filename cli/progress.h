// Progress lines on stderr for long commands, shown only when stderr is a
// terminal (never in logs or pipes; SHARDFEED_PROGRESS=1 forces them on,
// e.g. for tests, and =0 off), at most ten times a second. Not thread-safe:
// call from one thread (or under the caller's lock).
#ifndef SHARDFEED_CLI_PROGRESS_H_
#define SHARDFEED_CLI_PROGRESS_H_

#include <cstdint>
#include <string>

namespace shardfeed::cli {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine() { Finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // done/total items counted in `unit` ("records", "batches"; total 0:
  // unknown), plus the bytes so far, after a label.
  void Update(const std::string& label, uint64_t done, uint64_t total, uint64_t bytes,
              const char* unit = "records");
  // Progress measured in bytes only (e.g. bytes of shards checked).
  void UpdateBytes(const std::string& label, uint64_t done_bytes, uint64_t total_bytes);
  // Clears the line (before the summary; also on destruction).
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  bool Due(bool finished);
  void Draw(const std::string& text);

  bool enabled_;
  double start_;
  double last_ = 0;
  bool drawn_ = false;
};

// The text of a progress line (without the leading "\r" and clearing), for
// `elapsed` seconds: "LABEL: DONE/TOTAL UNIT  BYTES  RATE/s  ETA Ns", or with
// unit == nullptr, "LABEL: BYTES/TOTAL_BYTES  RATE/s  ETA Ns".
std::string FormatProgress(const std::string& label, uint64_t done, uint64_t total,
                           uint64_t bytes, const char* unit, double elapsed);

// "1.2 GB", "345.6 MB", "12.0 kB", "17 B".
std::string HumanBytes(double bytes);

// Installs SIGINT/SIGTERM handlers that set a flag instead of killing the
// process, so long commands stop cleanly and remove their temporaries.
void InstallInterruptHandler();
bool Interrupted();

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_PROGRESS_H_
