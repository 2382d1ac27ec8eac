// A training-loop skeleton on shardfeed's public API: opens a converted
// dataset, iterates its batches, and prints what `shardfeed cat
// --fingerprint DATASET` prints (the record count and an order-independent
// fingerprint of the decoded values), proving every record arrived once.
//
//   train_loop DATASET [BATCH_SIZE]      DATASET: a folder, manifest.json or glob
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <shardfeed/shardfeed.h>

namespace {

absl::Status Train(const char* dataset, int64_t batch_size) {
  SHARDFEED_ASSIGN_OR_RETURN(shardfeed::Dataset ds, shardfeed::Dataset::Open({dataset}));
  shardfeed::LoaderOptions options;  // features: the manifest's schema
  options.batch_size = batch_size;
  options.epochs = 1;
  options.device = -1;  // host batches; a GPU job sets its ordinal
  SHARDFEED_ASSIGN_OR_RETURN(auto loader, shardfeed::Loader::Create(std::move(ds), options));
  shardfeed::Fingerprint fingerprint;
  for (;;) {
    absl::StatusOr<shardfeed::Batch> batch = loader->Next();
    if (absl::IsOutOfRange(batch.status())) break;  // all epochs delivered
    if (!batch.ok()) return batch.status();         // e.g. DATA_LOSS "file:offset: ..."
    // A training step would read batch->Find("image")->data here.
    shardfeed::AddBatch(*batch, loader->features(), &fingerprint);
  }
  std::printf("%s\n", fingerprint.ToString().c_str());
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s DATASET [BATCH_SIZE]  (shardfeed %s)\n", argv[0],
                 SHARDFEED_VERSION);
    return 2;
  }
  absl::Status status = Train(argv[1], argc == 3 ? std::atoll(argv[2]) : 256);
  if (!status.ok()) {
    std::fprintf(stderr, "train_loop: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
