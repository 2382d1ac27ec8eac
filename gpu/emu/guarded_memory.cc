#include "gpu/emu/guarded_memory.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace shardfeed::gpu::emu {
namespace {

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// ---- The fault handler's table: ranges that must never be touched. ----
enum RangeKind : int { kFree = 0, kDevicePointer = 1, kGuard = 2 };
struct Range {
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<uintptr_t> alloc_ptr{0}, alloc_size{0};
  std::atomic<int> kind{kFree};
};
constexpr int kMaxRanges = 1 << 14;
Range g_ranges[kMaxRanges];
std::mutex g_ranges_mu;  // serializes writers; the handler only reads
struct sigaction g_previous;

void AddRange(uintptr_t begin, uintptr_t end, const Allocation& a, RangeKind kind) {
  std::lock_guard<std::mutex> lock(g_ranges_mu);
  for (Range& r : g_ranges) {
    if (r.kind.load(std::memory_order_relaxed) != kFree) continue;
    r.begin.store(begin, std::memory_order_relaxed);
    r.end.store(end, std::memory_order_relaxed);
    r.alloc_ptr.store(reinterpret_cast<uintptr_t>(a.ptr), std::memory_order_relaxed);
    r.alloc_size.store(a.size, std::memory_order_relaxed);
    r.kind.store(kind, std::memory_order_release);
    return;
  }
  // A full table only loses the fault's explanation, never the fault.
}

void RemoveRanges(uintptr_t begin, uintptr_t end) {
  std::lock_guard<std::mutex> lock(g_ranges_mu);
  for (Range& r : g_ranges) {
    if (r.kind.load(std::memory_order_relaxed) == kFree) continue;
    if (r.begin.load(std::memory_order_relaxed) >= begin &&
        r.end.load(std::memory_order_relaxed) <= end) {
      r.kind.store(kFree, std::memory_order_release);
    }
  }
}

// Async-signal-safe formatting.
void Put(const char* s) { (void)!write(2, s, strlen(s)); }
void PutHex(uintptr_t v) {
  char buf[19] = "0x";
  int n = 0;
  char digits[16];
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0);
  for (int i = 0; i < n; ++i) buf[2 + i] = digits[n - 1 - i];
  buf[2 + n] = '\0';
  Put(buf);
}
void PutDec(uintptr_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char buf[24];
  for (int i = 0; i < n; ++i) buf[i] = digits[n - 1 - i];
  buf[n] = '\0';
  Put(buf);
}

void OnSegv(int sig, siginfo_t* info, void* uc) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const Range& r : g_ranges) {
    const int kind = r.kind.load(std::memory_order_acquire);
    if (kind == kFree) continue;
    if (addr < r.begin.load(std::memory_order_relaxed) ||
        addr >= r.end.load(std::memory_order_relaxed)) {
      continue;
    }
    Put(kind == kDevicePointer
            ? "cuda_emu: host code touched emulated device memory at "
            : "cuda_emu: an emulated kernel or copy went out of bounds of device memory at ");
    PutHex(addr);
    Put(" (allocation of ");
    PutDec(r.alloc_size.load(std::memory_order_relaxed));
    Put(" bytes at ");
    PutHex(r.alloc_ptr.load(std::memory_order_relaxed));
    Put(")\n");
    signal(SIGSEGV, SIG_DFL);  // returning re-runs the access: the default action kills
    return;
  }
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) return g_previous.sa_sigaction(sig, info, uc);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
             g_previous.sa_handler != nullptr) {
    return g_previous.sa_handler(sig);
  }
  signal(SIGSEGV, SIG_DFL);
}

void InstallHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = &OnSegv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous);
  });
}

}  // namespace

bool MapDeviceMemory(size_t size, int device, Allocation* out) {
  InstallHandlerOnce();
  const size_t page = PageSize();
  const size_t data = RoundUp(size == 0 ? 1 : size, page);
  const size_t total = data + 2 * page;
  void* reserve = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserve == MAP_FAILED) return false;
  void* alias = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (alias == MAP_FAILED) {
    munmap(reserve, total);
    return false;
  }
  char* alias_data = static_cast<char*>(alias) + page;
  if (mprotect(alias_data, data, PROT_READ | PROT_WRITE) != 0) {
    munmap(reserve, total);
    munmap(alias, total);
    return false;
  }
  // The allocation ends where the guard page starts (256-byte aligned, as
  // cudaMalloc's are), so running past its end faults.
  const size_t offset = page + data - RoundUp(size == 0 ? 1 : size, 256);
  out->reserve = static_cast<char*>(reserve);
  out->alias = static_cast<char*>(alias);
  out->reserve_bytes = total;
  out->ptr = out->reserve + offset;
  out->size = size;
  out->device = device;
  if (size <= (size_t{64} << 20)) memset(out->alias + offset, 0xA5, size);
  const auto r = reinterpret_cast<uintptr_t>(reserve);
  const auto al = reinterpret_cast<uintptr_t>(alias);
  AddRange(r, r + total, *out, kDevicePointer);
  AddRange(al, al + page, *out, kGuard);
  AddRange(al + page + data, al + total, *out, kGuard);
  return true;
}

void UnmapDeviceMemory(const Allocation& a) {
  const auto r = reinterpret_cast<uintptr_t>(a.reserve);
  const auto al = reinterpret_cast<uintptr_t>(a.alias);
  RemoveRanges(r, r + a.reserve_bytes);
  RemoveRanges(al, al + a.reserve_bytes);
  munmap(a.reserve, a.reserve_bytes);
  munmap(a.alias, a.reserve_bytes);
}

void* MapPinnedMemory(size_t size) {
  void* p = mmap(nullptr, RoundUp(size == 0 ? 1 : size, PageSize()), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void UnmapPinnedMemory(void* p, size_t size) {
  munmap(p, RoundUp(size == 0 ? 1 : size, PageSize()));
}

}  // namespace shardfeed::gpu::emu
