// Decode speed of the reader's Example decoder, one core: the records of a
// shard decoded into batch rows with a feature spec, repeatedly; prints
// records/s. The peer (tf.io.parse_example on the same records, same batch
// size, one thread) is bench/tf_parse_bench.py; bench/reader_bench.sh runs
// both in one run.
//
//   decode_bench SHARD SPEC [BATCH]
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "bench/timing.h"
#include "reader/decoder.h"
#include "reader/feature_spec.h"
#include "record/record_reader.h"

int main(int argc, char** argv) {
  using namespace shardfeed;
  if (argc < 3) {
    std::fprintf(stderr, "usage: decode_bench SHARD SPEC [BATCH]\n");
    return 2;
  }
  int batch = 256;
  if (argc > 3) absl::SimpleAtoi(argv[3], &batch);
  auto spec = ParseSpec(argv[2]);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
    return 2;
  }
  auto reader = RecordReader::Open(argv[1]);
  if (!reader.ok()) return 2;
  std::vector<std::string> records;
  absl::string_view r;
  while ((*reader)->ReadRecord(&r).ok() && records.size() < 20000) records.emplace_back(r);
  const size_t nf = spec->size();
  std::vector<std::vector<char>> columns(nf);
  for (size_t f = 0; f < nf; ++f) columns[f].resize(batch * (*spec)[f].row_bytes() + 1);
  std::vector<std::string> var_values(nf);
  std::vector<std::string*> var(nf);
  for (size_t f = 0; f < nf; ++f) var[f] = &var_values[f];
  std::vector<char*> fixed(nf);
  size_t decoded = 0;
  double t = bench::BestOf(5, [&] {
    for (size_t i = 0; i < records.size(); ++i) {
      const size_t row = i % batch;
      for (size_t f = 0; f < nf; ++f) fixed[f] = columns[f].data() + row * (*spec)[f].row_bytes();
      if (!DecodeExampleRow(records[i], *spec, fixed.data(), var.data()).ok()) std::abort();
      for (auto& v : var_values) v.clear();
    }
    decoded = records.size();
  });
  std::printf("shardfeed decoder: %zu records in %.4f s = %.0f records/s (one core, batch %d)\n",
              decoded, t, decoded / t, batch);
  return 0;
}
