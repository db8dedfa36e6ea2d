// Error types shared by every module. The CLI maps them to exit statuses
// (DESIGN.md section 9): InputError -> 2 (bad usage or input, one line naming
// the input and what is wrong), CheckFailed -> 1 (a verification failed).
#pragma once
#include <stdexcept>
#include <string>

namespace ctmc {

// Bad input: malformed file, NaN, negative rate, reducible chain, wrong shape.
// The message is one line and starts with the input's name ("model.json: ...").
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A check ran and did not hold (an identity refuted, a bound violated).
class CheckFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ctmc
