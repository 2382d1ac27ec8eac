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

}  // namespace
}  // namespace shardfeed::cli
