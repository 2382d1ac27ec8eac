// Status propagation macros, unprefixed, for shardfeed's own .cc files
// (never included from a header, so they do not reach users). The public,
// prefixed versions are in shardfeed/status_macros.h.
//
//   RETURN_IF_ERROR(expr);            // returns expr's Status if not ok
//   ASSIGN_OR_RETURN(auto x, expr);   // x = *expr, or returns its Status
#ifndef SHARDFEED_RECORD_STATUS_MACROS_H_
#define SHARDFEED_RECORD_STATUS_MACROS_H_

#include "shardfeed/status_macros.h"

#define RETURN_IF_ERROR(expr) SHARDFEED_RETURN_IF_ERROR(expr)
#define ASSIGN_OR_RETURN(lhs, expr) SHARDFEED_ASSIGN_OR_RETURN(lhs, expr)

#endif  // SHARDFEED_RECORD_STATUS_MACROS_H_
