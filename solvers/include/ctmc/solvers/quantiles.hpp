// Upper-tail quantiles of the normal and Student-t distributions in double,
// the same bits on every machine (README "Reproducibility").
//
// Boost.Math computes a double quantile in long double, through the C
// library's expl, logl and powl, whose last bits are not promised between
// glibc releases, and its multiprecision quantiles start from double
// approximations (exp, pow, sin of the C library); a critical value that moves
// by an ulp can move a verdict that sits on its edge. These solve
// tail(q) = upper_tail by bisection in 100-digit MPFR (a precision fixed in the
// type, not the process's working precision), the tails written out below,
// and round once to double: the correctly rounded quantile for upper_tail
// down to 1e-50 (the tail's cancellation 1 - A costs at most 50 of the 100
// digits), except within about 1e-45 relative of a rounding boundary.
#pragma once

namespace ctmc::solvers {

// z with P(Z > z) = upper_tail for Z standard normal: P(Z > x) = erfc(x/sqrt 2)/2.
// upper_tail in (0, 1), else std::domain_error.
double normal_upper_quantile(double upper_tail);

// t with P(T > t) = upper_tail for T Student-t with `dof` degrees of freedom,
// dof a whole number from 1 to 10^6: P(T > x) = (1 - A(x|dof)) / 2 with
// A(x|dof) the finite sums of Abramowitz & Stegun 26.7.3 (odd dof) and
// 26.7.4 (even dof) in theta = atan(x / sqrt dof). upper_tail in (0, 1).
// Other arguments: std::domain_error.
double students_t_upper_quantile(double dof, double upper_tail);

}  // namespace ctmc::solvers
