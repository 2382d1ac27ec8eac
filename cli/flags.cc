#include "cli/flags.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::cli {

void FlagParser::AddBool(const std::string& name, bool* value, const std::string& help) {
  flags_.push_back({name, Kind::kBool, value, help, "", "", {}});
}

void FlagParser::AddString(const std::string& name, std::string* value,
                           const std::string& help, const std::string& value_name) {
  flags_.push_back({name, Kind::kString, value, help, value_name, *value, {}});
}

void FlagParser::AddInt(const std::string& name, int64_t* value, const std::string& help,
                        const std::string& value_name, IntRange range) {
  flags_.push_back({name, Kind::kInt, value, help, value_name, absl::StrCat(*value), range});
}

void FlagParser::AddDouble(const std::string& name, double* value, const std::string& help,
                           const std::string& value_name) {
  flags_.push_back({name, Kind::kDouble, value, help, value_name, absl::StrCat(*value), {}});
}

const FlagParser::Flag* FlagParser::Find(const std::string& name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

namespace {

absl::Status OutOfRange(const std::string& name, const IntRange& r, const std::string& text) {
  constexpr IntRange kAll;
  std::string range;
  if (r.max == kAll.max) {
    range = absl::StrCat(">= ", r.min);
  } else if (r.min == kAll.min) {
    range = absl::StrCat("<= ", r.max);
  } else {
    range = absl::StrCat("between ", r.min, " and ", r.max);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " must be ", range, ", not ", text));
}

}  // namespace

absl::Status FlagParser::Set(const Flag& flag, const std::string& text) {
  switch (flag.kind) {
    case Kind::kBool:
      if (text == "true" || text == "1") {
        *static_cast<bool*>(flag.value) = true;
      } else if (text == "false" || text == "0") {
        *static_cast<bool*>(flag.value) = false;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag.name, " takes true or false, not '", text, "'"));
      }
      return absl::OkStatus();
    case Kind::kString:
      *static_cast<std::string*>(flag.value) = text;
      return absl::OkStatus();
    case Kind::kInt: {
      int64_t v;
      if (!absl::SimpleAtoi(text, &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag.name, " takes an integer, not '", text, "'"));
      }
      if (v < flag.range.min || v > flag.range.max) return OutOfRange(flag.name, flag.range, text);
      *static_cast<int64_t*>(flag.value) = v;
      return absl::OkStatus();
    }
    case Kind::kDouble:
      if (!absl::SimpleAtod(text, static_cast<double*>(flag.value))) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag.name, " takes a number, not '", text, "'"));
      }
      return absl::OkStatus();
  }
  return absl::InternalError("unknown flag kind");
}

absl::Status FlagParser::Parse(int argc, char** argv, std::vector<std::string>* positional) {
  bool flags_done = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      positional->push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      help_requested_ = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", arg, "' (see --help)"));
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* flag = Find(name);
    if (flag == nullptr && absl::StartsWith(name, "no-")) {
      const Flag* negated = Find(name.substr(3));
      if (negated != nullptr && negated->kind == Kind::kBool && !has_value) {
        *static_cast<bool*>(negated->value) = false;
        continue;
      }
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '--", name, "' (see --help)"));
    }
    if (flag->kind == Kind::kBool && !has_value) {
      *static_cast<bool*>(flag->value) = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = argv[++i];
    }
    if (absl::Status s = Set(*flag, value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string FlagParser::Help() const {
  std::string out = absl::StrCat("Usage: ", usage_, "\n\n", description_, "\n\nFlags:\n");
  for (const Flag& f : flags_) {
    std::string left = absl::StrCat("  --", f.name);
    if (f.kind != Kind::kBool) absl::StrAppend(&left, " ", f.value_name);
    if (left.size() < 28) left.resize(28, ' ');
    else left += "\n" + std::string(28, ' ');
    absl::StrAppend(&out, left, f.help);
    if (f.kind != Kind::kBool && !f.default_text.empty()) {
      absl::StrAppend(&out, " (default: ", f.default_text, ")");
    }
    out += "\n";
  }
  absl::StrAppend(&out, "  -h, --help                show this help\n");
  absl::StrAppend(&out,
                  "\nExit status: 0 success, 1 a data problem was found (corrupt or "
                  "invalid input), 2 usage or I/O error.\n");
  return out;
}


absl::StatusOr<uint64_t> ParseByteSize(const std::string& text) {
  static const std::pair<const char*, double> kUnits[] = {
      {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
      {"kb", 1e3},     {"mb", 1e6},        {"gb", 1e9},           {"tb", 1e12},
      {"k", 1e3},      {"m", 1e6},         {"g", 1e9},            {"t", 1e12},
      {"b", 1.0}};
  std::string number = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  double scale = 1;
  for (const auto& [suffix, s] : kUnits) {
    if (absl::EndsWith(number, suffix)) {
      number.resize(number.size() - std::strlen(suffix));
      scale = s;
      break;
    }
  }
  double v = 0;
  const bool parsed = absl::SimpleAtod(absl::StripAsciiWhitespace(number), &v);
  // !(v > 0) also refuses nan; the bound refuses inf.
  if (!parsed || !(v > 0) || v * scale >= 9.2e18) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad size '", text, "' (a positive size such as 100MB, 64KiB, 1.5GB)"));
  }
  return static_cast<uint64_t>(v * scale);
}

}  // namespace shardfeed::cli
