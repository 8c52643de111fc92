// Status helpers: Debian's abseil 20220623 lacks status_macros.h, so the project defines its own.
//
//   absl::StatusOr<Tensor> Load(...) {
//     RETURN_IF_ERROR(CheckHeader(bytes));
//     ASSIGN_OR_RETURN(Tensor t, ReadTensor(bytes));
//     MIMETIC_CHECK(t.rank() == 2) << "internal: rank " << t.rank();
//     return t;
//   }
#ifndef MIMETIC_CORE_STATUS_H_
#define MIMETIC_CORE_STATUS_H_

#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MIMETIC_STATUS_CONCAT_INNER(a, b) a##b
#define MIMETIC_STATUS_CONCAT(a, b) MIMETIC_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    ::absl::Status mimetic_status_ = (expr);                    \
    if (!mimetic_status_.ok()) return mimetic_status_;          \
  } while (false)

// `ASSIGN_OR_RETURN(lhs, expr)`: evaluates the StatusOr `expr`; returns its status on error,
// otherwise move-assigns the value to `lhs` (which may be a declaration).
#define ASSIGN_OR_RETURN(lhs, expr) \
  MIMETIC_ASSIGN_OR_RETURN_IMPL(MIMETIC_STATUS_CONCAT(mimetic_statusor_, __LINE__), lhs, expr)

#define MIMETIC_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

namespace mimetic::core::internal {

// Streams a message, then aborts with file and line when destroyed. Used only by MIMETIC_CHECK
// for internal invariants (a broken invariant is a bug in mimetic, not bad user input).
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `MIMETIC_CHECK(cond) << msg` compile as a void expression.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace mimetic::core::internal

// Aborts with "file:line: check failed: cond <message>" when `cond` is false.
#define MIMETIC_CHECK(cond)                                   \
  (cond) ? (void)0                                            \
         : ::mimetic::core::internal::Voidify() &             \
               ::mimetic::core::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

// Like MIMETIC_CHECK for an absl::Status-valued expression; prints the status.
#define MIMETIC_CHECK_OK(expr)                                          \
  do {                                                                  \
    ::absl::Status mimetic_check_status_ = (expr);                      \
    MIMETIC_CHECK(mimetic_check_status_.ok()) << mimetic_check_status_; \
  } while (false)

#endif  // MIMETIC_CORE_STATUS_H_
