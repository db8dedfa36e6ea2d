// Error types shared by every module. The CLI maps them to exit statuses
// (DESIGN.md section 9): InputError -> 2 (bad usage or input, one line naming
// the input and what is wrong), CheckFailed -> 1 (a verification failed).
#pragma once
#include <stdexcept>
#include <string>

namespace ctmc {

// Bad input: malformed file, NaN, negative rate, reducible chain, wrong shape.
// The message is one line and starts with the input's name ("model.json: ...").
//
// Library code names an input in its own terms: a file, a `what` label its
// caller passed, or a parameter name ("domain", "trials", "tau"). An error
// built from (input, detail) keeps that name apart, so that a front end can
// show the input under its own name: the CLI and the Python module print the
// parameter's flag (reports/command_text.hpp option_message: trials -> --trials).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // The message "<input>: <detail>".
  InputError(const std::string& input, const std::string& detail)
      : std::runtime_error(input + ": " + detail), input_(input), detail_(detail) {}
  // The input's name and what is wrong with it; both empty for a message
  // given whole.
  const std::string& input() const noexcept { return input_; }
  const std::string& detail() const noexcept { return detail_; }

 private:
  std::string input_, detail_;
};

// A check ran and did not hold (an identity refuted, a bound violated).
class CheckFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ctmc
