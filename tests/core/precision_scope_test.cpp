// PrecisionScope sets the working precision of the thread that opens it:
// threads that hold scopes at the same time each create values at their own
// precision, and a thread without a scope keeps Boost's default.
#include <doctest/doctest.h>

#include <boost/multiprecision/mpfi.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include <barrier>
#include <thread>
#include <vector>

#include "ctmc/core/numeric_context.hpp"

namespace {

namespace bmp = boost::multiprecision;
using Mpfr = bmp::number<bmp::mpfr_float_backend<0>, bmp::et_off>;
using Interval = bmp::number<bmp::mpfi_float_backend<0>, bmp::et_off>;

unsigned bits_of(const Mpfr& x) { return static_cast<unsigned>(mpfr_get_prec(x.backend().data())); }
unsigned bits_of(const Interval& x) { return static_cast<unsigned>(mpfi_get_prec(x.backend().data())); }

}  // namespace

TEST_CASE("PrecisionScope: each thread works at its own scope's precision while the others hold theirs") {
  const unsigned base = ctmc::precision_bits();
  const std::vector<unsigned> wanted{80, 200, 1000};
  std::vector<unsigned> mpfr_bits(wanted.size()), interval_bits(wanted.size()), result_bits(wanted.size()),
      after(wanted.size());
  std::vector<unsigned> expected(wanted.size());
  for (std::size_t k = 0; k < wanted.size(); ++k) expected[k] = ctmc::scoped_precision_bits(wanted[k]);
  std::barrier all_scoped(static_cast<std::ptrdiff_t>(wanted.size()));
  std::vector<std::thread> pool;
  for (std::size_t k = 0; k < wanted.size(); ++k)
    pool.emplace_back([&, k] {
      {
        const ctmc::PrecisionScope scope(wanted[k]);
        all_scoped.arrive_and_wait();  // every scope is open now
        const Mpfr third = Mpfr(1) / 3;
        mpfr_bits[k] = bits_of(Mpfr(1));
        result_bits[k] = bits_of(third);
        interval_bits[k] = bits_of(Interval(1));
        all_scoped.arrive_and_wait();  // no scope closes before every value is made
      }
      after[k] = ctmc::precision_bits();
    });
  for (auto& t : pool) t.join();
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    CAPTURE(wanted[k]);
    CHECK(expected[k] >= wanted[k]);
    CHECK(mpfr_bits[k] == expected[k]);
    CHECK(result_bits[k] == expected[k]);
    CHECK(interval_bits[k] == expected[k]);
    CHECK(after[k] == base);  // a new thread starts at Boost's default, and the scope restored it
  }
  CHECK(ctmc::precision_bits() == base);  // this thread's precision never moved
}

TEST_CASE("PrecisionScope: a thread without a scope is not affected by another thread's scope") {
  const unsigned base = ctmc::precision_bits();
  const ctmc::PrecisionScope scope(3000);
  CHECK(ctmc::precision_bits() >= 3000);
  unsigned other = 0;
  std::thread([&] { other = ctmc::precision_bits(); }).join();
  CHECK(other == base);
}
