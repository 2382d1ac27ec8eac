// Status propagation macros. Debian's abseil (20220623) ships none.
//
//   RETURN_IF_ERROR(expr);            // returns expr's Status if not ok
//   ASSIGN_OR_RETURN(auto x, expr);   // x = *expr, or returns its Status
#ifndef SHARDFEED_RECORD_STATUS_MACROS_H_
#define SHARDFEED_RECORD_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SHARDFEED_CONCAT_INNER_(a, b) a##b
#define SHARDFEED_CONCAT_(a, b) SHARDFEED_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                                    \
  do {                                                           \
    const ::absl::Status shardfeed_status_ = (expr);             \
    if (!shardfeed_status_.ok()) return shardfeed_status_;       \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr)                                        \
  SHARDFEED_ASSIGN_OR_RETURN_IMPL_(                                        \
      SHARDFEED_CONCAT_(shardfeed_statusor_, __LINE__), lhs, expr)

#define SHARDFEED_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  if (!statusor.ok()) return std::move(statusor).status();     \
  lhs = std::move(statusor).value()

#endif  // SHARDFEED_RECORD_STATUS_MACROS_H_
