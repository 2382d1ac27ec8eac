// The last step of a fill: staged host rows to the device on the loader's
// copy stream (with the image transforms fused after the copy), or, on the
// host path, the transforms' reference implementation. Called by the one
// filler of a slot; several fillers may queue on the shared stream.
#ifndef SHARDFEED_READER_DEVICE_COPY_H_
#define SHARDFEED_READER_DEVICE_COPY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "reader/slot_ring.h"

namespace shardfeed {

// GPU ring: queues the copies (and transforms) of the first `rows` rows of
// slot `s` and records s->ready. Host ring: runs the transforms on the
// host. Image i of the slot is sample first_sample + i (crop/flip draws).
absl::Status FinishSlot(SlotRing* ring, SlotRing::Slot* s, int64_t rows, uint64_t first_sample);

// Seconds the last copy out of slot `s` took (0 if unknown); GPU only,
// after PrepareFill.
double LastCopySeconds(SlotRing::Slot* s);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DEVICE_COPY_H_
