#include "converter/pickle_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace shardfeed {
namespace {

using Value = std::shared_ptr<PickleValue>;
using Kind = PickleValue::Kind;

Value Make(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

class Parser {
 public:
  Parser(absl::string_view bytes, absl::string_view path) : b_(bytes), path_(path) {}

  absl::StatusOr<Value> Run() {
    while (pos_ < b_.size()) {
      op_pos_ = pos_;
      op_ = static_cast<unsigned char>(b_[pos_++]);
      absl::Status s = Step();
      if (!s.ok()) return s;
      if (done_) {
        if (stack_.size() != 1) return Error("STOP with a stack of size != 1");
        return stack_.back();
      }
    }
    return Error(absl::StrCat("truncated pickle: the file ends at byte ", b_.size(),
                              " before the STOP opcode"));
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::DataLossError(absl::StrFormat("%s:%d: pickle opcode 0x%02x: %s", path_,
                                               op_pos_, op_, what));
  }

  absl::Status Need(size_t n) const {
    if (pos_ + n > b_.size()) {
      return Error(absl::StrCat("truncated pickle: needs ", n, " more bytes at offset ", pos_,
                                ", the file has only ", b_.size() - pos_));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> ReadLE(size_t n) {
    if (absl::Status s = Need(n); !s.ok()) return s;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(b_[pos_ + i])} << (8 * i);
    pos_ += n;
    return v;
  }

  absl::StatusOr<Value> Pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
      return Error("stack underflow");
    }
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }

  absl::StatusOr<std::vector<Value>> PopToMark() {
    if (marks_.empty()) return Error("no MARK on the stack");
    size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Value> items(stack_.begin() + mark, stack_.end());
    stack_.resize(mark);
    return items;
  }

  absl::Status PushString(size_t length) {
    if (absl::Status s = Need(length); !s.ok()) {
      return Error(absl::StrCat("truncated pickle: a string of ", length, " bytes starts at ",
                                pos_, " but the file has only ", b_.size() - pos_, " left"));
    }
    Value v = Make(Kind::kString);
    v->string = b_.substr(pos_, length);
    pos_ += length;
    stack_.push_back(v);
    return absl::OkStatus();
  }

  absl::Status PushInt(int64_t i) {
    Value v = Make(Kind::kInt);
    v->integer = i;
    stack_.push_back(v);
    return absl::OkStatus();
  }

  absl::Status MakeTuple(std::vector<Value> items) {
    Value t = Make(Kind::kTuple);
    t->items = std::move(items);
    stack_.push_back(t);
    return absl::OkStatus();
  }

  absl::Status Step() {
#define TRY(x) if (absl::Status s_ = (x); !s_.ok()) return s_
#define TRY_ASSIGN(lhs, x) auto lhs##_or = (x); if (!lhs##_or.ok()) return lhs##_or.status(); auto lhs = *std::move(lhs##_or)
    switch (op_) {
      case 0x80: {  // PROTO
        TRY_ASSIGN(version, ReadLE(1));
        if (version > 4) return Error(absl::StrCat("unsupported pickle protocol ", version));
        return absl::OkStatus();
      }
      case '.':
        done_ = true;
        return absl::OkStatus();
      case '}':
        stack_.push_back(Make(Kind::kDict));
        return absl::OkStatus();
      case ']':
        stack_.push_back(Make(Kind::kList));
        return absl::OkStatus();
      case ')':
        return MakeTuple({});
      case 'N':
        stack_.push_back(Make(Kind::kNone));
        return absl::OkStatus();
      case 0x88:
      case 0x89: {
        Value v = Make(Kind::kBool);
        v->integer = op_ == 0x88;
        stack_.push_back(v);
        return absl::OkStatus();
      }
      case '(':
        marks_.push_back(stack_.size());
        return absl::OkStatus();
      case 'q':
      case 'r': {  // BINPUT, LONG_BINPUT
        TRY_ASSIGN(id, ReadLE(op_ == 'q' ? 1 : 4));
        if (stack_.empty()) return Error("memo put on an empty stack");
        memo_[id] = stack_.back();
        return absl::OkStatus();
      }
      case 'h':
      case 'j': {  // BINGET, LONG_BINGET
        TRY_ASSIGN(id, ReadLE(op_ == 'h' ? 1 : 4));
        auto it = memo_.find(id);
        if (it == memo_.end()) return Error(absl::StrCat("memo ", id, " was never stored"));
        stack_.push_back(it->second);
        return absl::OkStatus();
      }
      case 'U':
      case 'C': {  // SHORT_BINSTRING, SHORT_BINBYTES
        TRY_ASSIGN(n, ReadLE(1));
        return PushString(n);
      }
      case 'T':
      case 'B':
      case 'X': {  // BINSTRING, BINBYTES, BINUNICODE
        TRY_ASSIGN(n, ReadLE(4));
        if (op_ == 'T' && (n & 0x80000000u)) return Error("negative string length");
        return PushString(n);
      }
      case 'K': {
        TRY_ASSIGN(v, ReadLE(1));
        return PushInt(static_cast<int64_t>(v));
      }
      case 'M': {
        TRY_ASSIGN(v, ReadLE(2));
        return PushInt(static_cast<int64_t>(v));
      }
      case 'J': {
        TRY_ASSIGN(v, ReadLE(4));
        return PushInt(static_cast<int32_t>(static_cast<uint32_t>(v)));
      }
      case 'a': {  // APPEND
        TRY_ASSIGN(item, Pop());
        if (stack_.empty() || stack_.back()->kind != Kind::kList) return Error("APPEND to a non-list");
        stack_.back()->items.push_back(item);
        return absl::OkStatus();
      }
      case 'e': {  // APPENDS
        TRY_ASSIGN(items, PopToMark());
        if (stack_.empty() || stack_.back()->kind != Kind::kList) return Error("APPENDS to a non-list");
        auto& list = stack_.back()->items;
        list.insert(list.end(), items.begin(), items.end());
        return absl::OkStatus();
      }
      case 's':
      case 'u': {  // SETITEM, SETITEMS
        std::vector<Value> items;
        if (op_ == 's') {
          TRY_ASSIGN(v, Pop());
          TRY_ASSIGN(k, Pop());
          items = {k, v};
        } else {
          TRY_ASSIGN(popped, PopToMark());
          items = std::move(popped);
        }
        if (items.size() % 2 != 0) return Error("SETITEMS with an odd number of items");
        if (stack_.empty() || stack_.back()->kind != Kind::kDict) return Error("SETITEMS on a non-dict");
        for (size_t i = 0; i < items.size(); i += 2) stack_.back()->dict.emplace_back(items[i], items[i + 1]);
        return absl::OkStatus();
      }
      case 'c': {  // GLOBAL "module\nname\n"
        size_t nl1 = b_.find('\n', pos_);
        size_t nl2 = nl1 == absl::string_view::npos ? nl1 : b_.find('\n', nl1 + 1);
        if (nl2 == absl::string_view::npos) return Error("truncated pickle: unterminated GLOBAL");
        Value g = Make(Kind::kGlobal);
        g->global = absl::StrCat(b_.substr(pos_, nl1 - pos_), " ", b_.substr(nl1 + 1, nl2 - nl1 - 1));
        pos_ = nl2 + 1;
        stack_.push_back(g);
        return absl::OkStatus();
      }
      case 't': {
        TRY_ASSIGN(items, PopToMark());
        return MakeTuple(std::move(items));
      }
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<Value> items(op_ - 0x84);
        for (size_t i = items.size(); i-- > 0;) {
          TRY_ASSIGN(v, Pop());
          items[i] = v;
        }
        return MakeTuple(std::move(items));
      }
      case 'R': {  // REDUCE: callable(*args)
        TRY_ASSIGN(args, Pop());
        TRY_ASSIGN(callable, Pop());
        if (callable->kind != Kind::kGlobal || args->kind != Kind::kTuple) {
          return Error("REDUCE needs a GLOBAL and an argument tuple");
        }
        Value obj = Make(Kind::kObject);
        obj->global = callable->global;
        obj->items = args->items;
        stack_.push_back(obj);
        return absl::OkStatus();
      }
      case 'b': {  // BUILD
        TRY_ASSIGN(state, Pop());
        if (stack_.empty() || stack_.back()->kind != Kind::kObject) return Error("BUILD on a non-object");
        stack_.back()->state = state;
        return absl::OkStatus();
      }
      default:
        return Error("opcode not supported by this reader (only CIFAR's pickles are)");
    }
#undef TRY
#undef TRY_ASSIGN
  }

  absl::string_view b_;
  std::string path_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  unsigned op_ = 0;
  bool done_ = false;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, Value> memo_;
};

}  // namespace

const PickleValue* PickleValue::Find(absl::string_view key) const {
  for (const auto& [k, v] : dict) {
    if (k->kind == Kind::kString && k->string == key) return v.get();
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<PickleValue>> ParsePickle(absl::string_view bytes,
                                                         absl::string_view path) {
  return Parser(bytes, path).Run();
}

absl::StatusOr<NumpyUint8Array> AsNumpyUint8Array(const PickleValue& v, absl::string_view path) {
  auto bad = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(path, ": not a numpy uint8 array: ", what));
  };
  if (v.kind != Kind::kObject ||
      (v.global != "numpy.core.multiarray _reconstruct" &&
       v.global != "numpy._core.multiarray _reconstruct")) {
    return bad("expected numpy.core.multiarray._reconstruct");
  }
  const PickleValue* state = v.state.get();
  if (state == nullptr || state->kind != Kind::kTuple || state->items.size() != 5) {
    return bad("expected a 5-tuple BUILD state");
  }
  const PickleValue& shape = *state->items[1];
  const PickleValue& dtype = *state->items[2];
  const PickleValue& fortran = *state->items[3];
  const PickleValue& data = *state->items[4];
  if (shape.kind != Kind::kTuple) return bad("shape is not a tuple");
  if (dtype.kind != Kind::kObject || dtype.items.empty() ||
      dtype.items[0]->kind != Kind::kString || dtype.items[0]->string != "u1") {
    return bad("dtype is not u1 (uint8)");
  }
  if (fortran.kind == Kind::kBool && fortran.integer != 0) return bad("Fortran order");
  if (data.kind != Kind::kString) return bad("data is not a byte string");
  NumpyUint8Array out;
  int64_t count = 1;
  for (const auto& d : shape.items) {
    if (d->kind != Kind::kInt || d->integer < 0) return bad("bad dimension");
    out.shape.push_back(d->integer);
    count *= d->integer;
  }
  if (static_cast<int64_t>(data.string.size()) != count) {
    return bad(absl::StrCat("shape holds ", count, " bytes but the data has ", data.string.size()));
  }
  out.data = data.string;
  return out;
}

}  // namespace shardfeed
