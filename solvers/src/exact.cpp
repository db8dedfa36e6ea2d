#include "ctmc/solvers/exact.hpp"

#include <cctype>
#include <cmath>

#include "ctmc/solvers/det_math.hpp"

namespace ctmc::solvers {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Boost's gmp_int string constructor reads a leading 0 as an octal prefix
// ("010" = 8, "09" throws), so decimal digit strings are stripped of leading
// zeros first.
Integer decimal_integer(std::string_view digits) {
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  return Integer{std::string(digits.empty() ? std::string_view("0") : digits)};
}

std::optional<Integer> parse_integer(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (!all_digits(s)) return std::nullopt;
  Integer z = decimal_integer(s);
  return neg ? Integer(-z) : z;
}

// GMP's powering (repeated squaring): e is the number of digits written after
// the point, and a loop of e multiplications by 10 would be quadratic in e
// (18 s for a 1 MB rate "0.000...1").
Integer pow10(long e) {
  Integer r;
  mpz_ui_pow_ui(r.backend().data(), 10, static_cast<unsigned long>(e));
  return r;
}

std::optional<Rational> parse_decimal(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  std::string_view mant = s, expo;
  if (auto p = s.find_first_of("eE"); p != std::string_view::npos) {
    mant = s.substr(0, p);
    expo = s.substr(p + 1);
  }
  std::string_view ip = mant, fp;
  if (auto p = mant.find('.'); p != std::string_view::npos) {
    ip = mant.substr(0, p);
    fp = mant.substr(p + 1);
  }
  if (ip.empty() && fp.empty()) return std::nullopt;
  if (!ip.empty() && !all_digits(ip)) return std::nullopt;
  if (!fp.empty() && !all_digits(fp)) return std::nullopt;
  long e = 0;
  if (mant.size() != s.size()) {
    auto ez = parse_integer(expo);
    if (!ez || abs(*ez) > 100000) return std::nullopt;  // 1e100000 is not a rate
    e = ez->convert_to<long>();
  }
  const std::string all = std::string(ip) + std::string(fp);
  Integer digits = decimal_integer(all);
  e -= static_cast<long>(fp.size());
  Rational q = e >= 0 ? Rational(digits * pow10(e)) : Rational(digits, pow10(-e));
  return neg ? Rational(-q) : q;
}

}  // namespace

std::optional<Rational> parse_exact(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  if (auto slash = text.find('/'); slash != std::string_view::npos) {
    auto p = parse_integer(text.substr(0, slash));
    auto q = parse_integer(text.substr(slash + 1));
    if (!p || !q || *q == 0) return std::nullopt;
    return Rational(*p, *q);
  }
  return parse_decimal(text);
}

std::string exact_text(const Rational& q) {
  Integer den = denominator(q);
  // A finite decimal exists iff the denominator is 2^a 5^b. Whole powers are
  // removed at once (a division per factor would be quadratic for 10^-1000000).
  Integer d = den;
  const auto twos = static_cast<unsigned>(mpz_scan1(d.backend().data(), 0));
  mpz_tdiv_q_2exp(d.backend().data(), d.backend().data(), twos);
  const Integer five = 5;
  const auto fives = static_cast<unsigned>(mpz_remove(d.backend().data(), d.backend().data(), five.backend().data()));
  if (den == 1) return numerator(q).str();
  if (d == 1) {
    unsigned k = std::max(twos, fives);
    Integer scaled = numerator(q) * (pow10(k) / den);
    bool neg = scaled < 0;
    std::string s = (neg ? Integer(-scaled) : scaled).str();
    if (s.size() <= k) s = std::string(k + 1 - s.size(), '0') + s;
    s.insert(s.size() - k, ".");
    if (neg) s = "-" + s;
    if (s.size() <= 40) return s;
  }
  return numerator(q).str() + "/" + den.str();
}

double log2_rational(const Rational& q) {
  long en = 0, ed = 0;
  const double mn = mpz_get_d_2exp(&en, mpq_numref(q.backend().data()));
  const double md = mpz_get_d_2exp(&ed, mpq_denref(q.backend().data()));
  return detmath::log2(mn) - detmath::log2(md) + static_cast<double>(en - ed);
}

}  // namespace ctmc::solvers
