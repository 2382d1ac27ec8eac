#include "cli/progress.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace shardfeed::cli {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted.store(true); }

}  // namespace

std::string HumanBytes(double b) {
  if (b >= 1e9) return absl::StrFormat("%.2f GB", b / 1e9);
  if (b >= 1e6) return absl::StrFormat("%.1f MB", b / 1e6);
  if (b >= 1e3) return absl::StrFormat("%.1f kB", b / 1e3);
  return absl::StrFormat("%.0f B", b);
}

namespace {

bool ProgressWanted() {
  const char* forced = std::getenv("SHARDFEED_PROGRESS");
  if (forced != nullptr && *forced != '\0') return std::strcmp(forced, "0") != 0;
  return ::isatty(2) == 1;
}

}  // namespace

std::string FormatProgress(const std::string& label, uint64_t done, uint64_t total,
                           uint64_t bytes, const char* unit, double elapsed) {
  elapsed = std::max(elapsed, 1e-6);
  // Without a unit, `done` and `total` are bytes.
  const double fraction_left =
      total > 0 && done > 0 ? (static_cast<double>(total) - done) / done : -1;
  std::string text = label + ": ";
  if (unit == nullptr) {
    absl::StrAppend(&text, HumanBytes(done), total > 0 ? "/" + HumanBytes(total) : "",
                    "  ", HumanBytes(done / elapsed), "/s");
  } else {
    absl::StrAppend(&text, done, total > 0 ? absl::StrCat("/", total) : "", " ", unit, "  ",
                    HumanBytes(bytes), "  ", HumanBytes(bytes / elapsed), "/s");
  }
  if (fraction_left >= 0) absl::StrAppend(&text, absl::StrFormat("  ETA %.0fs", elapsed * fraction_left));
  return text;
}

ProgressLine::ProgressLine() : enabled_(ProgressWanted()), start_(Now()) {}

bool ProgressLine::Due(bool finished) {
  if (!enabled_) return false;
  const double now = Now();
  if (now - last_ < 0.1 && !finished) return false;
  last_ = now;
  return true;
}

void ProgressLine::Draw(const std::string& text) {
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::Update(const std::string& label, uint64_t done, uint64_t total,
                          uint64_t bytes, const char* unit) {
  if (!Due(total > 0 && done >= total)) return;
  Draw(FormatProgress(label, done, total, bytes, unit, Now() - start_));
}

void ProgressLine::UpdateBytes(const std::string& label, uint64_t done_bytes,
                               uint64_t total_bytes) {
  if (!Due(total_bytes > 0 && done_bytes >= total_bytes)) return;
  Draw(FormatProgress(label, done_bytes, total_bytes, done_bytes, nullptr, Now() - start_));
}

void ProgressLine::Finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void InstallInterruptHandler() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool Interrupted() { return g_interrupted.load(); }

}  // namespace shardfeed::cli
