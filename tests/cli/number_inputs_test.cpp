// End-to-end: numbers in options read as other tools read them. A
// per-layer alpha of NaN is refused like inf, 0 and -1 ("auto" is the only
// way to keep the scale rule); a subnormal is a number; a number beyond the
// double range is said to be so, not "not a number".
#include <doctest/doctest.h>

#include <string>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

void expect_exit2(const std::string& args, const std::string& needle) {
  const auto r = run_cli(args);
  INFO("ctmc-snn " << args << "\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("--layer-alpha: nan, inf, 0 and -1 are errors naming the option and the value") {
  const std::string net = "simulate network --net \"" + fixture("tiny_mlp.json") + "\" --neurons \"" +
                          fixture("two_state_family.json") + "\" --data \"" + (temp_dir() / "no-data").string() +
                          "\" --layer-alpha ";
  expect_exit2(net + "nan,1", "--layer-alpha: 'nan' is not a positive finite number");
  expect_exit2(net + "NaN,auto", "--layer-alpha: 'NaN' is not a positive finite number");
  expect_exit2(net + "1,inf", "--layer-alpha: 'inf' is not a positive finite number");
  expect_exit2(net + "0,1", "--layer-alpha: '0' is not a positive finite number");
  expect_exit2(net + "-1,1", "--layer-alpha: '-1' is not a positive finite number");
  expect_exit2(net + "1e400,1", "--layer-alpha: '1e400' is beyond the range of a double");
  // A subnormal is a (positive, finite) number: the option is read, and the
  // run stops later at the missing data folder.
  const auto r = run_cli(net + "1e-320,auto");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--layer-alpha") == std::string::npos);
  CHECK(r.output.find("no-data") != std::string::npos);
}
