#include "cli/flags.h"

#include "gtest/gtest.h"

namespace shardfeed::cli {
namespace {

absl::Status ParseArgs(FlagParser& p, std::vector<std::string> args,
                       std::vector<std::string>* positional) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return p.Parse(static_cast<int>(argv.size()), argv.data(), positional);
}

TEST(FlagParser, ParsesEveryForm) {
  FlagParser p("u", "d");
  bool b = false, on = true;
  std::string s = "x";
  int64_t n = 3;
  double d = 0;
  p.AddBool("b", &b, "");
  p.AddBool("on", &on, "");
  p.AddString("s", &s, "");
  p.AddInt("n", &n, "");
  p.AddDouble("d", &d, "");
  std::vector<std::string> pos;
  ASSERT_TRUE(ParseArgs(p, {"a", "--b", "--s=hello", "--n", "42", "--no-on", "--d=0.5", "--",
                            "--not-a-flag"},
                        &pos)
                  .ok());
  EXPECT_TRUE(b);
  EXPECT_FALSE(on);
  EXPECT_EQ("hello", s);
  EXPECT_EQ(42, n);
  EXPECT_EQ(0.5, d);
  EXPECT_EQ((std::vector<std::string>{"a", "--not-a-flag"}), pos);
  EXPECT_FALSE(p.help_requested());
}

TEST(FlagParser, RejectsUnknownAndMalformed) {
  FlagParser p("u", "d");
  int64_t n = 0;
  p.AddInt("n", &n, "");
  std::vector<std::string> pos;
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ParseArgs(p, {"--what"}, &pos).code());
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ParseArgs(p, {"--n=abc"}, &pos).code());
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, ParseArgs(p, {"--n"}, &pos).code());
}

TEST(FlagParser, HelpListsFlagsWithDefaults) {
  FlagParser p("shardfeed thing FILE", "Does a thing.");
  std::string c = "none";
  p.AddString("compression", &c, "the compression", "TYPE");
  std::vector<std::string> pos;
  ASSERT_TRUE(ParseArgs(p, {"--help"}, &pos).ok());
  EXPECT_TRUE(p.help_requested());
  std::string help = p.Help();
  EXPECT_NE(std::string::npos, help.find("Usage: shardfeed thing FILE"));
  EXPECT_NE(std::string::npos, help.find("--compression TYPE"));
  EXPECT_NE(std::string::npos, help.find("(default: none)"));
  EXPECT_NE(std::string::npos, help.find("Exit status"));
}

TEST(FlagParser, RefusesIntegersOutOfRange) {
  FlagParser p("u", "d");
  int64_t threads = 0, epochs = 1;
  p.AddInt("threads", &threads, "", "N", {0, kMaxThreads});
  p.AddInt("epochs", &epochs, "", "N", {0});
  std::vector<std::string> pos;
  absl::Status s = ParseArgs(p, {"--threads", "100000"}, &pos);
  EXPECT_EQ(absl::StatusCode::kInvalidArgument, s.code());
  EXPECT_EQ("--threads must be between 0 and 1024, not 100000", s.message());
  s = ParseArgs(p, {"--epochs=-1"}, &pos);
  EXPECT_EQ("--epochs must be >= 0, not -1", s.message());
  EXPECT_EQ(1, epochs);
  ASSERT_TRUE(ParseArgs(p, {"--threads", "1024", "--epochs", "0"}, &pos).ok());
  EXPECT_EQ(1024, threads);
  EXPECT_EQ(0, epochs);
}

TEST(ParseByteSize, AcceptsUnitsInAnyCase) {
  for (const char* text : {"100MB", "100mb", "100Mb", "100mB", "100M", "100m", "1e8", "0.1GB"}) {
    auto v = ParseByteSize(text);
    ASSERT_TRUE(v.ok()) << text << ": " << v.status();
    EXPECT_EQ(100000000u, *v) << text;
  }
  EXPECT_EQ(65536u, *ParseByteSize("64KiB"));
  EXPECT_EQ(65536u, *ParseByteSize("64kib"));
  EXPECT_EQ(1536u * 1024 * 1024, *ParseByteSize("1.5GiB"));
  EXPECT_EQ(4096u, *ParseByteSize("4096"));
  EXPECT_EQ(16u, *ParseByteSize("16b"));
  EXPECT_EQ(2000000000000u, *ParseByteSize("2TB"));
}

TEST(ParseByteSize, RefusesWhatIsNotASize) {
  for (const char* text : {"nan", "NaN", "nanMB", "inf", "infGB", "-1MB", "0", "0MB", "", "MB",
                           "ten", "100 XB", "1e30", "100MBB"}) {
    auto v = ParseByteSize(text);
    EXPECT_EQ(absl::StatusCode::kInvalidArgument, v.status().code()) << text;
  }
}

}  // namespace
}  // namespace shardfeed::cli
