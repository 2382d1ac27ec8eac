// Status propagation macros for code that calls shardfeed (Debian's abseil,
// 20220623, ships none). Prefixed, so they do not collide with a project's
// own RETURN_IF_ERROR / ASSIGN_OR_RETURN.
//
// Example:
//   absl::Status Train() {
//     SHARDFEED_ASSIGN_OR_RETURN(shardfeed::Dataset ds,
//                                shardfeed::Dataset::Open({"cifar10/"}, "train"));
//     SHARDFEED_RETURN_IF_ERROR(Validate(ds));
//     ...
//   }
//
// SHARDFEED_RETURN_IF_ERROR(expr): returns expr's absl::Status if not ok.
// SHARDFEED_ASSIGN_OR_RETURN(lhs, expr): expr is an absl::StatusOr<T>;
//   returns its status if not ok, else moves the value into lhs (a
//   declaration such as `auto x` or an existing variable). Expands to
//   several statements: not for the body of an unbraced if/else.
#ifndef SHARDFEED_SHARDFEED_STATUS_MACROS_H_
#define SHARDFEED_SHARDFEED_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SHARDFEED_CONCAT_INNER_(a, b) a##b
#define SHARDFEED_CONCAT_(a, b) SHARDFEED_CONCAT_INNER_(a, b)

#define SHARDFEED_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    const ::absl::Status shardfeed_status_ = (expr);       \
    if (!shardfeed_status_.ok()) return shardfeed_status_; \
  } while (0)

#define SHARDFEED_ASSIGN_OR_RETURN(lhs, expr) \
  SHARDFEED_ASSIGN_OR_RETURN_IMPL_(SHARDFEED_CONCAT_(shardfeed_statusor_, __LINE__), lhs, expr)

#define SHARDFEED_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  if (!statusor.ok()) return std::move(statusor).status();     \
  lhs = std::move(statusor).value()

#endif  // SHARDFEED_SHARDFEED_STATUS_MACROS_H_
