// Property test: WalkExample + the list decoders give the same features as
// protobuf's own parser, on thousands of random Examples written in every
// legal encoding (packed and unpacked lists, map entries with the value before
// the key, unknown fields, duplicate keys), and on every Example in
// testdata/interop.
#include "reader/example_wire.h"

#include <map>
#include <random>

#include "cli/record_json.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "proto/example.pb.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

std::string Tag(int field, int wt) {
  std::string s;
  AppendVarint(&s, (uint64_t(field) << 3) | wt);
  return s;
}
std::string Len(int field, const std::string& body) {
  std::string s = Tag(field, 2);
  AppendVarint(&s, body.size());
  return s + body;
}
std::string Unknown(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0: {
      std::string s = Tag(9 + rng() % 5, 0);
      AppendVarint(&s, rng());
      return s;
    }
    case 1:
      return Len(10 + rng() % 5, "junk");
    default:
      return Tag(11, 5) + std::string("\1\2\3\4", 4);
  }
}

// One random Feature, encoded randomly; `want` receives what protobuf sees.
std::string RandomFeature(std::mt19937_64& rng, Feature* want) {
  std::string out;
  int kind = 1 + rng() % 3;
  int occurrences = 1 + (rng() % 4 == 0);
  for (int o = 0; o < occurrences; ++o) {
    std::string list;
    int n = rng() % 5;
    if (kind == 1) {
      for (int i = 0; i < n; ++i) {
        std::string v(rng() % 20, static_cast<char>('a' + rng() % 26));
        list += Len(1, v);
        want->mutable_bytes_list()->add_value(v);
      }
      want->mutable_bytes_list();
    } else if (kind == 2) {
      bool packed = rng() % 2;
      std::string p;
      for (int i = 0; i < n; ++i) {
        float f = static_cast<float>(static_cast<int>(rng() % 1000) - 500) / 8;
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        std::string b(4, 0);
        for (int k = 0; k < 4; ++k) b[k] = static_cast<char>(bits >> (8 * k));
        if (packed) p += b; else list += Tag(1, 5) + b;
        want->mutable_float_list()->add_value(f);
      }
      if (packed && n > 0) list += Len(1, p);
      want->mutable_float_list();
    } else {
      bool packed = rng() % 2;
      std::string p;
      for (int i = 0; i < n; ++i) {
        int64_t v = static_cast<int64_t>(rng()) >> (rng() % 64);
        std::string b;
        AppendVarint(&b, static_cast<uint64_t>(v));
        if (packed) p += b; else list += Tag(1, 0) + b;
        want->mutable_int64_list()->add_value(v);
      }
      if (packed && n > 0) list += Len(1, p);
      want->mutable_int64_list();
    }
    if (rng() % 4 == 0) list += Unknown(rng);
    out += Len(kind, list);
  }
  if (rng() % 4 == 0) out += Unknown(rng);
  return out;
}

std::string Canonical(const Feature& f) {
  std::string kind = FeatureKindName(static_cast<FeatureKind>(f.kind_case()));
  std::string s = kind + ":";
  if (f.has_bytes_list()) for (auto& v : f.bytes_list().value()) s += v + ",";
  if (f.has_float_list()) for (auto v : f.float_list().value()) s += std::to_string(v) + ",";
  if (f.has_int64_list()) for (auto v : f.int64_list().value()) s += std::to_string(v) + ",";
  return s;
}

absl::StatusOr<std::map<std::string, std::string>> Walk(absl::string_view bytes) {
  std::map<std::string, std::string> got;
  absl::Status s = WalkExample(bytes, [&](absl::string_view key, const FeatureView& f) {
    std::string c = std::string(FeatureKindName(f.kind)) + ":";
    if (f.kind == FeatureKind::kBytes) {
      std::vector<absl::string_view> v;
      if (auto st = DecodeBytes(f, &v); !st.ok()) return st;
      for (auto x : v) c += std::string(x) + ",";
    } else if (f.kind == FeatureKind::kFloat) {
      std::vector<float> v;
      if (auto st = DecodeFloats(f, &v); !st.ok()) return st;
      for (auto x : v) c += std::to_string(x) + ",";
    } else if (f.kind == FeatureKind::kInt64) {
      std::vector<int64_t> v;
      if (auto st = DecodeInt64s(f, &v); !st.ok()) return st;
      for (auto x : v) c += std::to_string(x) + ",";
    }
    got[std::string(key)] = c;  // duplicate keys: the last wins
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return got;
}

std::map<std::string, std::string> ViaProtobuf(absl::string_view bytes) {
  Example ex;
  EXPECT_TRUE(ex.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  std::map<std::string, std::string> want;
  for (const auto& [k, f] : ex.features().feature()) want[k] = Canonical(f);
  return want;
}

TEST(ExampleWire, MatchesProtobufOnRandomEncodings) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string features;
    int n = rng() % 6;
    for (int i = 0; i < n; ++i) {
      std::string key = "k" + std::to_string(rng() % 4);  // duplicates happen
      Feature unused;
      std::string feature = RandomFeature(rng, &unused);
      std::string entry = rng() % 3 == 0 ? Len(2, feature) + Len(1, key)  // value first
                                         : Len(1, key) + Len(2, feature);
      if (rng() % 5 == 0) entry += Unknown(rng);
      features += Len(1, entry);
      if (rng() % 6 == 0) features += Unknown(rng);
    }
    std::string example = Len(1, features);
    if (rng() % 5 == 0) example = Unknown(rng) + example;
    auto got = Walk(example);
    ASSERT_TRUE(got.ok()) << got.status() << " trial " << trial;
    ASSERT_EQ(ViaProtobuf(example), *got) << "trial " << trial;
  }
}

TEST(ExampleWire, MatchesProtobufOnInteropFiles) {
  for (const char* name : {"pwnall_singles.tfrecords", "pwnall_data.tfrecord",
                           "tfx_cifar10_test_tiny.tfrecord", "tfx_squad_v_small.tfrecord",
                           "tfx_penguin_eval.tfrecord.gz", "tfx_csv_unlabelled_8of12.tfrecord.gz",
                           "tfx_tfjs_next_page.tfrecord.gz"}) {
    auto records = testing::ReadAllRecords(testing::RunfilePath(std::string("testdata/interop/") + name));
    ASSERT_TRUE(records.ok()) << name;
    ASSERT_FALSE(records->empty());
    for (const std::string& r : *records) {
      auto got = Walk(r);
      ASSERT_TRUE(got.ok()) << name << ": " << got.status();
      ASSERT_EQ(ViaProtobuf(r), *got) << name;
    }
  }
}

// Found by the fuzzer: protobuf truncates a 5-byte tag to 32 bits.
TEST(ExampleWire, LongTagsAreTruncatedAsProtobufDoes) {
  std::string bytes("\xd0\xf5\xe4\xf1\x19\x0a", 6);
  auto got = Walk(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(ViaProtobuf(bytes), *got);
}

TEST(ExampleWire, MalformedIsAnError) {
  EXPECT_FALSE(Walk(std::string("\x0a\x05\x0a", 3)).ok());       // truncated Features
  EXPECT_FALSE(Walk(std::string("\x0a\x02\x0a\x7f", 4)).ok());   // entry longer than Features
  EXPECT_TRUE(Walk("").ok());
}

// SequenceExample { context = 1; feature_lists = 2 }: context features are
// read like an Example's; feature_lists are refused by WalkExample (what the
// Loader's decoder uses), named, and listed by WalkExampleOrSequence.
TEST(ExampleWire, SequenceExampleContextIsReadFeatureListsAreRefused) {
  SequenceExample s;
  (*s.mutable_context()->mutable_feature())["length"].mutable_int64_list()->add_value(3);
  const std::string context_only = s.SerializeAsString();
  auto got = Walk(context_only);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(1u, got->count("length"));
  (*s.mutable_feature_lists()->mutable_feature_list())["frames"].add_feature();
  const std::string with_lists = s.SerializeAsString();
  auto refused = Walk(with_lists);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, refused.status().code());
  EXPECT_NE(std::string::npos, refused.status().message().find(
                                   "a SequenceExample with feature_lists ('frames')"))
      << refused.status();
  std::vector<absl::string_view> keys;
  int visited = 0;
  ASSERT_TRUE(WalkExampleOrSequence(
                  with_lists,
                  [&](absl::string_view, const FeatureView&) {
                    ++visited;
                    return absl::OkStatus();
                  },
                  &keys)
                  .ok());
  EXPECT_EQ(1, visited);
  ASSERT_EQ(1u, keys.size());
  EXPECT_EQ("frames", keys[0]);
  // An Example with an unknown field 2 that is not a FeatureLists: skipped.
  const std::string unknown = context_only + std::string("\x12\x02\x08\x01", 4);
  EXPECT_TRUE(Walk(unknown).ok());
}

// Real SequenceExamples (TFX's sequence test data): every context feature
// as protobuf sees it, and the feature lists named.
TEST(ExampleWire, InteropSequenceExamples) {
  auto records = testing::ReadAllRecords(
      testing::RunfilePath("testdata/interop/tfx_sequence_eval.tfrecord.gz"));
  ASSERT_TRUE(records.ok());
  for (const std::string& r : *records) {
    SequenceExample want;
    ASSERT_TRUE(want.ParseFromString(r));
    std::vector<absl::string_view> keys;
    size_t visited = 0;
    ASSERT_TRUE(WalkExampleOrSequence(
                    r,
                    [&](absl::string_view key, const FeatureView&) {
                      visited += want.context().feature().count(std::string(key));
                      return absl::OkStatus();
                    },
                    &keys)
                    .ok());
    EXPECT_EQ(want.context().feature_size(), static_cast<int>(visited));
    EXPECT_EQ(want.feature_lists().feature_list_size(), static_cast<int>(keys.size()));
  }
}

}  // namespace
}  // namespace shardfeed
