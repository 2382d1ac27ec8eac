// libFuzzer target, differential: any bytes that protobuf's parser accepts
// as an Example must give the same features through WalkExample and the list
// decoders; bytes it rejects must not crash the walker either.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "proto/example.pb.h"
#include "reader/example_wire.h"

namespace {

std::string Canonical(const shardfeed::Feature& f) {
  std::string s = std::to_string(f.kind_case()) + ":";
  for (auto& v : f.bytes_list().value()) s += v + ",";
  for (auto v : f.float_list().value()) s += std::to_string(v) + ",";
  for (auto v : f.int64_list().value()) s += std::to_string(v) + ",";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardfeed;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> walked;
  std::vector<absl::string_view> feature_lists;  // a SequenceExample's: not compared
  absl::Status s = WalkExampleOrSequence(bytes, [&](absl::string_view key, const FeatureView& f) {
    std::string c = std::to_string(static_cast<int>(f.kind)) + ":";
    std::vector<absl::string_view> b;
    std::vector<float> fl;
    std::vector<int64_t> in;
    absl::Status st;
    if (f.kind == FeatureKind::kBytes) st = DecodeBytes(f, &b);
    if (f.kind == FeatureKind::kFloat) st = DecodeFloats(f, &fl);
    if (f.kind == FeatureKind::kInt64) st = DecodeInt64s(f, &in);
    if (!st.ok()) return st;
    for (auto v : b) c += std::string(v) + ",";
    for (auto v : fl) c += std::to_string(v) + ",";
    for (auto v : in) c += std::to_string(v) + ",";
    walked[std::string(key)] = c;
    return absl::OkStatus();
  }, &feature_lists);
  Example ex;
  bool parsed = ex.ParseFromArray(data, static_cast<int>(size));
  if (parsed && s.ok()) {
    std::map<std::string, std::string> want;
    for (const auto& [k, f] : ex.features().feature()) want[k] = Canonical(f);
    if (want != walked) {
      fprintf(stderr, "walker and protobuf disagree\n");
      for (auto& [k, v] : want) fprintf(stderr, "protobuf %s = %s\n", k.c_str(), v.c_str());
      for (auto& [k, v] : walked) fprintf(stderr, "walker   %s = %s\n", k.c_str(), v.c_str());
      abort();
    }
  }
  // protobuf rejects some inputs we accept (e.g. invalid UTF-8 is not checked
  // for bytes; groups), and we reject nothing it accepts:
  if (parsed && !s.ok()) {
    fprintf(stderr, "protobuf parses, the walker says: %s\n", std::string(s.message()).c_str());
    abort();
  }
  return 0;
}
