#include "cli/progress.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

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

ProgressLine::ProgressLine() : enabled_(::isatty(2) == 1), start_(Now()) {}

void ProgressLine::Update(const std::string& label, uint64_t done, uint64_t total,
                          uint64_t bytes) {
  if (!enabled_) return;
  double now = Now();
  if (now - last_ < 0.1 && done < total) return;
  last_ = now;
  double elapsed = std::max(now - start_, 1e-6);
  double eta = done > 0 ? elapsed * (static_cast<double>(total) - done) / done : 0;
  std::fprintf(stderr, "\r\033[K%s: %llu/%llu records  %s  %s/s  ETA %.0fs", label.c_str(),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
               HumanBytes(bytes).c_str(), HumanBytes(bytes / elapsed).c_str(), eta);
  drawn_ = true;
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
