// Exact stochastic simulation (Gillespie's direct method) of one CTMC neuron
// at a fixed input H over [0, T] (DESIGN.md section 7, paper section 3.3 and
// Appendix C).
//
// The chain is compiled once at H: rates r_ij = max(0, p_ij + s_ij H) are
// evaluated exactly at the rational H (model.hpp) and rounded once to double,
// then optionally multiplied by a layer scale alpha (DESIGN section 4: all
// rates times alpha multiplies the flux by alpha). In state i the holding time
// is Exp(q_i), q_i = sum_j r_ij, and the next state is j with probability
// r_ij / q_i; the path is exact (no time step), so every spike transition on
// [0, T] is counted. N(T) counts spike transitions; occupancy is the time
// spent in each state.
//
// Reproducibility: trial k draws only from Rng(stream_seed(seed, k)) (its
// initial state first, then the path), so results for a given seed are
// identical for any thread count; occupancy sums are reduced over fixed blocks
// of trials in a fixed order for the same reason.
//
// Errors: InputError for T < 0 or non-finite, zero trials, a start state out
// of range, a non-positive or non-finite rate scale, or (stationary start) a
// chain with several closed classes at H.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::sim {

// The generator at one H in the form the direct method needs: for each state
// its exit rate and its outgoing transitions with cumulative rates.
class SsaChain {
 public:
  SsaChain(const solvers::Model& m, const solvers::Rational& H, double rate_scale = 1.0);
  // From explicit rates (one per transition of m, in transition order, >= 0).
  SsaChain(const solvers::Model& m, const std::vector<double>& rates);

  std::size_t size() const { return exit_rate_.size(); }
  double exit_rate(std::size_t i) const { return exit_rate_[i]; }
  double inv_exit_rate(std::size_t i) const { return inv_exit_[i]; }  // 0 for an absorbing state

  struct Edge {
    double cum_rate;        // sum of the rates of this and earlier edges of the state
    std::uint32_t target;
    std::uint32_t spike;    // 1 when the transition emits a spike
  };
  // Outgoing edges of state i (positive rates only).
  std::span<const Edge> edges(std::size_t i) const {
    return {edges_.data() + first_[i], edges_.data() + first_[i + 1]};
  }

 private:
  void build(const solvers::Model& m, const std::vector<double>& rates);
  std::vector<double> exit_rate_, inv_exit_;
  std::vector<std::size_t> first_;  // CSR row starts, size n + 1
  std::vector<Edge> edges_;
};

// One path from `start`. For each checkpoint time (sorted, >= 0) writes the
// spike count N(times[k]) into counts_at[k]; the path ends at times.back().
// Adds the time spent in each state to occupancy (size n) when it is non-null.
// Returns the number of transitions taken.
std::uint64_t simulate_path(const SsaChain& chain, std::size_t start, std::span<const double> times, Rng& rng,
                            std::span<std::uint64_t> counts_at, double* occupancy = nullptr);

enum class StartMode { Stationary, State };

struct SsaOptions {
  double T = 1.0;                 // horizon (one checkpoint) unless `times` is set
  std::vector<double> times;      // optional checkpoints; the horizon is times.back()
  std::size_t trials = 1000;
  std::uint64_t seed = 1;
  int threads = 0;                // 0: all cores
  StartMode start = StartMode::Stationary;
  std::size_t start_state = 0;    // with StartMode::State
  double rate_scale = 1.0;        // alpha: every rate times alpha
  bool occupancy = true;          // accumulate state occupancy
};

struct SsaRun {
  std::vector<double> times;                        // checkpoints (one: T)
  std::vector<std::vector<std::uint64_t>> counts;   // counts[k][trial] = N(times[k]) of that trial
  std::vector<double> occupancy;                    // mean fraction of [0, horizon] in each state
  std::vector<double> initial;                      // initial distribution the starts were drawn from
  std::uint64_t transitions = 0;                    // over all trials
};

// Runs opt.trials independent paths at H. `source` names the model in errors.
SsaRun simulate_neuron(const solvers::Model& m, const solvers::Rational& H, const SsaOptions& opt,
                       const std::string& source = "model");

// Sample statistics of counts: mean, unbiased variance and their standard
// errors. se_var uses the sample fourth central moment m4:
// Var(s^2) ~ (m4 - s^4 (n - 3) / (n - 1)) / n (normal-free, large n).
struct CountStats {
  std::size_t n = 0;
  double mean = 0, variance = 0, se_mean = 0, se_variance = 0;
};
CountStats count_stats(std::span<const std::uint64_t> counts);

// z-score of an observed statistic against an exact value: (obs - exact) / se.
inline double z_score(double observed, double exact, double se) {
  return se > 0 ? (observed - exact) / se : (observed == exact ? 0.0 : (observed > exact ? 1e300 : -1e300));
}

}  // namespace ctmc::sim
