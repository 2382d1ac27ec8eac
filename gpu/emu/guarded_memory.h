// Memory of the emulated runtime. Device memory: a PROT_NONE reservation
// whose address is the device pointer (host code touching it faults), and a
// second mapping of the same layout that emulated copies and kernels use,
// with inaccessible guard pages on both sides (an out-of-bounds kernel
// access faults too). Fresh device memory is filled with 0xA5 (cudaMalloc
// does not zero). Pinned memory: page-aligned anonymous mappings.
//
// A SIGSEGV handler names the fault ("host code touched emulated device
// memory", "emulated kernel or copy out of bounds") before the process
// dies; other faults go to the previous handler. Thread-safe; the handler's
// range table is lock-free.
#ifndef SHARDFEED_GPU_EMU_GUARDED_MEMORY_H_
#define SHARDFEED_GPU_EMU_GUARDED_MEMORY_H_

#include <cstddef>

#include "gpu/emu/machine.h"

namespace shardfeed::gpu::emu {

// Maps a device allocation of `size` bytes; false when mmap fails.
bool MapDeviceMemory(size_t size, int device, Allocation* out);
void UnmapDeviceMemory(const Allocation& a);

void* MapPinnedMemory(size_t size);  // null when mmap fails
void UnmapPinnedMemory(void* p, size_t size);

}  // namespace shardfeed::gpu::emu

#endif  // SHARDFEED_GPU_EMU_GUARDED_MEMORY_H_
