// A CTMC neuron in double precision, for simulation (DESIGN.md sections 4, 7).
//
// The exact Model (rational offsets p and slopes s) is rounded once to double
// and multiplied by a positive rate scale c (the layer factor
// alpha_l / alpha_fit of DESIGN section 7), so a transition's rate at input H
// is   r(H) = c * max(0, p + s H) = max(0, c p + c s H).
// Scaling every rate by c scales the stationary flux by c and leaves the
// stationary distribution unchanged.
//
// Transitions are stored grouped by source state and padded to the largest
// out-degree (zero-rate slots), so the exit rate of the current state costs a
// fixed handful of flops per neuron-step (the simulator's inner loop).
//
// Errors: ctmc::InputError for a non-positive or non-finite scale, a model
// whose meta.alpha_fit is not a positive number, or (from flux/stationary) a
// chain with several closed classes at H.
#pragma once
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <optional>
#include <utility>

#include "ctmc/solvers/model.hpp"

namespace ctmc::sim {

// meta.alpha_fit of a fitted model (number or exact string), 1 when absent:
// the fitted chain approximates alpha_fit * phi (DESIGN section 7).
double alpha_fit_of(const solvers::Model& m, const std::string& source);

// meta.domain [lo, hi] of a fitted model (`ctmc-snn fit` writes the exact
// ends as strings; numbers are accepted too), or nullopt when absent: the
// inputs H the chain was fitted on. Outside it the flux is the chain's, not a
// fit of phi. InputError naming the source when present but not two finite
// numbers with lo < hi.
std::optional<std::pair<double, double>> fit_domain_of(const solvers::Model& m, const std::string& source);

class NeuronKernel {
 public:
  NeuronKernel() = default;
  // Rates of `model` times `scale` (> 0). `source` names the model in errors.
  NeuronKernel(const solvers::Model& model, double scale, std::string source);

  std::size_t size() const { return n_; }
  std::size_t max_out_degree() const { return kmax_; }
  double scale() const { return scale_; }
  const std::string& source() const { return source_; }
  const solvers::Model& model() const { return model_; }

  // Slot k (< max_out_degree) of state i: a transition i -> to(i,k) with
  // scaled offset/slope; padded slots have offset = slope = 0.
  std::size_t slot(std::size_t i, std::size_t k) const { return i * kmax_ + k; }
  double slot_offset(std::size_t s) const { return off_[s]; }
  double slot_slope(std::size_t s) const { return slope_[s]; }
  std::uint32_t slot_to(std::size_t s) const { return to_[s]; }
  bool slot_spike(std::size_t s) const { return spike_[s] != 0; }
  double slot_rate(std::size_t s, double H) const {
    const double r = off_[s] + slope_[s] * H;
    return r > 0 ? r : 0.0;
  }

  // Exit rate of state i at H (sum of its rectified rates).
  double exit_rate(std::size_t i, double H) const;
  // max_i exit_rate(i, H): the smallest valid uniformization rate Lambda.
  double max_exit_rate(double H) const;

  // Stationary distribution and flux of the scaled chain at H: the solvers'
  // GTH on the rounded rates (gth_dense up to solvers::kDenseGthLimit states,
  // gth_sparse with its minimum-degree order above: O(n) on the Bernstein
  // chain), which rescales the back-substitution so that products of rate
  // ratios beyond 1e308 (the 502-state Bernstein chain near u = 1) stay
  // finite. When the reduction meets a state with no exit to the states left
  // (the chain is reducible at H: a rectified rate is 0), or the double
  // elimination still overflows (rates spanning more than double's range),
  // it falls back to solvers::solve_stationary<double> on the exact model at
  // the exact rational value of H, which restricts to the closed class, or
  // throws an InputError naming the model and H.
  std::vector<double> stationary(double H) const;
  double flux(double H) const;
  // Stationary rate of all transitions (spikes or not) at H: sum_i pi_i
  // exit_rate(i, H), the sampler's expected work per unit time.
  double jump_rate(double H) const;

 private:
  solvers::Model model_;
  std::string source_;
  double scale_ = 1.0;
  std::size_t n_ = 0, kmax_ = 0;
  std::vector<double> off_, slope_;
  std::vector<std::uint32_t> to_;
  std::vector<std::uint8_t> spike_;
};

// The end-state sampler's rule for counting a spike in a step (sampler.hpp):
// a step from state i that ends in state j counts one spike when j cannot be
// reached from i using only non-spike transitions that are not identically
// zero (offset != 0 or slope != 0 in the exact model); i == j counts none.
//
// Built from the strongly connected components of that subgraph (Tarjan,
// O(n + m)): states of one component reach each other, and each component
// keeps a bitset of the components it reaches (filled in Tarjan's completion
// order, in which every edge between components points to an earlier one).
// C components cost C^2 / 8 bytes and O(C (C + m) / 64) word operations, so
// a chain whose table exceeds kMaxBytes (C above about 23000) is refused with
// an InputError naming the model; queries are O(1). Only the end-state
// sampler builds it.
class EndStateRule {
 public:
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  EndStateRule() = default;
  explicit EndStateRule(const NeuronKernel& kernel);

  bool implies_spike(std::size_t i, std::size_t j) const {
    const std::size_t a = comp_[i], b = comp_[j];
    if (a == b) return false;
    return ((reach_[a * words_ + (b >> 6)] >> (b & 63)) & 1u) == 0;
  }
  // Number of strongly connected components of the non-spike subgraph.
  std::size_t components() const { return components_; }

 private:
  std::vector<std::uint32_t> comp_;
  std::size_t components_ = 0, words_ = 0;
  std::vector<std::uint64_t> reach_;
};

}  // namespace ctmc::sim
