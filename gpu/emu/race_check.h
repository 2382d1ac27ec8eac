// The emulator's race check: device operations on one allocation that no
// stream order, event wait or host synchronization orders (one of them
// writing), and host writes into pinned memory that a queued copy has not
// read yet. What a race does is Config::races: abort with both operations
// named, count it, or nothing. Called with Machine::mu held, except
// CheckSourceUnchanged (on a stream's thread).
#ifndef SHARDFEED_GPU_EMU_RACE_CHECK_H_
#define SHARDFEED_GPU_EMU_RACE_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/emu/machine.h"

namespace shardfeed::gpu::emu {

// Op `seq` of `s`, whose clock is `clock`, reads (or writes) `a`.
void RecordAccessLocked(Machine* m, Allocation* a, const Stream& s, uint64_t seq,
                        const VectorClock& clock, bool write, const std::string& what);

// A fingerprint of n bytes at p (the source of a queued copy).
uint64_t Fingerprint(const void* p, size_t n);
// On the stream's thread, before the copy reads: the source still holds
// what it held when the copy was queued.
void CheckSourceUnchanged(const void* p, size_t n, uint64_t fingerprint, const std::string& what);

// Reports one race per Config::races.
void ReportRace(const std::string& message);

}  // namespace shardfeed::gpu::emu

#endif  // SHARDFEED_GPU_EMU_RACE_CHECK_H_
