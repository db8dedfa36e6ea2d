// Unit exponential variates by the ziggurat method of Marsaglia and Tsang,
// "The ziggurat method for generating random variables", J. Stat. Software
// 5(8), 2000, with 256 layers: the density e^-x is covered by 255 layers of
// equal area V and a base layer (a rectangle plus the tail beyond R). One
// 64-bit word picks a layer (its low 8 bits) and a point in it (its top 52
// bits); the point lies under the density without a test in about 98.9% of
// draws, so most variates cost a multiply and a compare instead of a log.
// The rest: the base layer's tail is R + Exp(1) (memoryless, drawn as
// R - log U), a wedge point is accepted when a uniform height lies under
// e^-x; a rejected point draws a fresh word. The variates have exactly the
// Exp(1) law (up to the 52-bit grid of the uniforms), like -log U.
//
// Tables (x_0 = V / e^-R, x_1 = R, x_{i+1} = -log(V / x_i + e^-x_i),
// x_256 = 0; f_i = e^-x_i) are built once with the kernel's math functions.
#pragma once
#include <array>
#include <cstdint>

#include "kernel_math.hpp"

namespace ctmc::sim {

class ExpZiggurat {
 public:
  static const ExpZiggurat& get() {
    static const ExpZiggurat z;
    return z;
  }

  // word() returns independent uniform 64-bit words.
  template <class Words>
  double sample(Words&& word) const {
    for (;;) {
      const std::uint64_t bits = word();
      const std::size_t i = bits & 0xff;
      const double x = static_cast<double>(bits >> 12) * 0x1.0p-52 * x_[i];
      if (x < x_[i + 1]) return x;
      if (i == 0) return kR - kmath::log(static_cast<double>((word() >> 11) + 1) * 0x1.0p-53);
      const double y = static_cast<double>(word() >> 11) * 0x1.0p-53;
      if (f_[i + 1] + (f_[i] - f_[i + 1]) * y < kmath::exp(-x)) return x;
    }
  }

  // The same method on 32-bit words (word32() returns independent uniform
  // 32-bit words), for the fast kernel's float32 hazard budgets: the low 8
  // bits pick the layer, the top 24 bits the point in it, so the variates
  // have the Exp(1) law up to a 24-bit grid (the float32 budget's own
  // resolution) and four of them come from one Philox4x32 block.
  template <class Words>
  double sample32(Words&& word32) const {
    for (;;) {
      const std::uint32_t bits = word32();
      const std::size_t i = bits & 0xff;
      const double x = static_cast<double>(bits >> 8) * 0x1.0p-24 * x_[i];
      if (x < x_[i + 1]) return x;
      if (i == 0) return kR - kmath::log(static_cast<double>((word32() >> 8) + 1) * 0x1.0p-24);
      const double y = static_cast<double>(word32() >> 8) * 0x1.0p-24;
      if (f_[i + 1] + (f_[i] - f_[i + 1]) * y < kmath::exp(-x)) return x;
    }
  }

  double x(std::size_t i) const { return x_[i]; }

  static constexpr double kR = 7.69711747013104972;       // start of the tail
  static constexpr double kV = 0.0039496598225815571993;  // area of every layer

 private:
  ExpZiggurat() {
    x_[0] = kV / kmath::exp(-kR);
    x_[1] = kR;
    for (std::size_t i = 1; i < 255; ++i) x_[i + 1] = -kmath::log(kV / x_[i] + kmath::exp(-x_[i]));
    x_[256] = 0;
    for (std::size_t i = 0; i < 257; ++i) f_[i] = kmath::exp(-x_[i]);
  }
  std::array<double, 257> x_{}, f_{};
};

}  // namespace ctmc::sim
