// Progress lines on stderr for long commands, shown only when stderr is a
// terminal (never in logs or pipes), at most ten times a second.
#ifndef SHARDFEED_CLI_PROGRESS_H_
#define SHARDFEED_CLI_PROGRESS_H_

#include <cstdint>
#include <string>

namespace shardfeed::cli {

class ProgressLine {
 public:
  ProgressLine();
  // done/total items (records), bytes so far, and a label.
  void Update(const std::string& label, uint64_t done, uint64_t total, uint64_t bytes);
  // Clears the line (before the summary).
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  double start_;
  double last_ = 0;
  bool drawn_ = false;
};

// "1.2 GB", "345.6 MB", "12.0 kB", "17 B".
std::string HumanBytes(double bytes);

// Installs SIGINT/SIGTERM handlers that set a flag instead of killing the
// process, so long commands stop cleanly and remove their temporaries.
void InstallInterruptHandler();
bool Interrupted();

}  // namespace shardfeed::cli

#endif  // SHARDFEED_CLI_PROGRESS_H_
