// simulate neuron MODEL --H h --T t --trials n [--seed s] [--threads k]
//                 [--start stationary|STATE] [--alpha a] [--json]:
// exact Gillespie simulation of one neuron at a fixed H (sim/neurons/ssa.hpp) beside
// the exact moments of N(T) (solvers/counting.hpp), and their agreement in
// standard errors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/commands/model_input.hpp"

namespace ctmc::commands {

struct NeuronSimOptions {
  std::string h, start = "stationary";
  double T = 0, alpha = 1;
  std::size_t trials = 1000;
  unsigned long long seed = 1;
  int threads = 0;
  // Refused before anything is allocated when the trials' counts and
  // per-block tallies (neuron_sim_memory_bytes) need more than this.
  std::uint64_t max_memory_bytes = std::uint64_t(4) << 30;
};
// The memory a simulation of `trials` trials of an n-state chain holds: a
// count per trial (and, with_counts, its copy handed to the caller, costed
// as the JSON number it once was) and a tally per block of 256 trials.
std::uint64_t neuron_sim_memory_bytes(std::size_t trials, std::size_t states, bool with_counts);
// The agreement of the simulated mean and variance of N(T) with the exact
// values is judged (agreement.ok) with at least this many trials, at |z| <
// agreement.threshold.
inline constexpr std::size_t kMinCheckedTrials = 100;

struct NeuronEmpirical {
  double mean_count = 0, rate = 0, se_rate = 0, variance_count = 0, se_variance_count = 0, variance_per_time = 0;
  double fano = 0;  // NaN without spikes
};
struct NeuronExact {
  double stationary_flux = 0, mean_count = 0, rate = 0, variance_count = 0, asymptotic_variance_rate = 0;
  double asymptotic_fano = 0;  // NaN without spikes
};
struct NeuronAgreement {
  double z_mean = 0;
  std::optional<double> z_variance;  // unset: the variance is not judged (variance_tested false)
  bool variance_tested = false;
  double threshold = 0;
  bool checked = false;  // at least kMinCheckedTrials trials
  bool ok = false;
};
struct NeuronOccupancy {
  std::string state;
  double empirical = 0, stationary = 0;
};
struct NeuronSimResult {
  std::string model, H, start;
  double T = 0, alpha = 0;
  std::size_t trials = 0;
  unsigned long long seed = 0;
  std::uint64_t transitions = 0;
  NeuronEmpirical empirical;
  NeuronExact exact;
  NeuronAgreement agreement;
  std::vector<NeuronOccupancy> occupancy;  // in state order
  std::vector<std::uint64_t> counts;       // each trial's N(T), with_counts only
};

// with_counts: keep every trial's count in the result (beyond the CLI's document).
NeuronSimResult run_simulate_neuron(const ModelInput& model, const NeuronSimOptions& o, bool with_counts = false);
void write(DocumentWriter& w, const NeuronSimResult& r);
nlohmann::ordered_json to_json(const NeuronSimResult& r);

}  // namespace ctmc::commands
