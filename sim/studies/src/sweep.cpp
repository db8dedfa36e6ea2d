#include "ctmc/sim/studies/sweep.hpp"
#include "ctmc/sim/engines/stats.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "ctmc/sim/studies/pareto.hpp"
#include "ctmc/sim/studies/sweep_document.hpp"
#include "sweep_format.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/number_text.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/core/quote.hpp"

namespace ctmc::sim {
namespace {

using Json = nlohmann::ordered_json;
constexpr double kPercent = 100.0;

template <class T>
void check_unique(const std::vector<T>& v, const std::string& option) {
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (v[i] == v[j]) throw InputError(option, fmt::format("the value {} is given twice", fmt::format("{}", v[i])));
}

void check_positive(const std::vector<double>& v, const std::string& option) {
  if (v.empty()) throw InputError(option, "no value given");
  for (double x : v)
    if (!(x > 0) || !std::isfinite(x)) throw InputError(option, fmt::format("{} is not a positive finite number", x));
  check_unique(v, option);
}

void check_net(const Mlp& net, const std::string& what) { net.validate(what); }
void check_net(const Net& net, const std::string& what) { (void)spiking_stages(net, what); }

struct SweepInputs {
  std::vector<NeuronModel> neurons;
  std::vector<AnyNetwork> nets;
  DatasetSplit data;
};

// The runs of `shard` in a grid of `total` runs.
std::size_t shard_run_count(std::size_t total, Shard shard) {
  return total >= shard.index ? (total - shard.index) / shard.count + 1 : 0;
}

// The numbers in one run's record: its scalars, its per-layer triples, and
// per checkpoint its scalars, quantiles and per-layer pairs.
double record_numbers(std::size_t windows, std::size_t layers) {
  constexpr double kRecordScalars = 9, kWindowScalars = 7, kPerLayer = 3, kPerWindowLayer = 2;
  const double quantiles = static_cast<double>(std::size(kCountQuantileLevels));
  return kRecordScalars + kPerLayer * static_cast<double>(layers) +
         static_cast<double>(windows) * (kWindowScalars + quantiles + kPerWindowLayer * static_cast<double>(layers));
}

// A number with its key as JSON text: the key (at most 22 characters), the
// number (at most 24), quotes, colon, comma and the indentation of its depth
// at up to 8 spaces a level; 128 bytes leave room for any of that.
constexpr double kPartBytesPerNumber = 128;
// In memory a number of a record costs its JSON value (16 bytes) and its key
// in the ordered map (a 32-byte string and the pair), and the document holds
// it in its record, in a cell's mean and in the written text: an estimate
// of the bytes per number of the records.
constexpr double kDocumentBytesPerNumber = 160;

// The work and memory of a sweep against its limits, once the nets and test
// images are known.
void check_sweep_cost(const SweepSpec& spec, Shard shard, const SweepInputs& in, std::size_t test_images) {
  const std::size_t total = sweep_run_count(spec);
  const double steps = std::ceil(spec.T.back() / spec.dt - 1e-9);
  double work = 0, numbers = 0;
  const double per_net = static_cast<double>(total) / static_cast<double>(in.nets.size());
  for (std::size_t i = 0; i < in.nets.size(); ++i) {
    const std::size_t S = in.nets[i].visit([&](const auto& net) { return spiking_layer_count(net, spec.readout); });
    const auto neurons = static_cast<double>(
        in.nets[i].visit([&](const auto& net) { return spiking_neuron_count(net, spec.readout); }));
    work += per_net * static_cast<double>(test_images) * steps * neurons;
    numbers += per_net * record_numbers(spec.T.size(), S);
  }
  work *= static_cast<double>(shard_run_count(total, shard)) / static_cast<double>(total);
  if (work > spec.limits.neuron_steps)
    throw InputError(fmt::format(
        "sweep: about {:.3g} neuron-steps of work in {} (runs x {} test images x {:.0f} steps of dt up to T = {} x "
        "spiking neurons), more than the limit of {:.3g}; lower the grid, --T, --limit or --shard it, or raise "
        "--max-neuron-steps",
        work, shard.count > 1 ? fmt::format("shard {}/{}", shard.index, shard.count) : std::string("the grid"),
        test_images, steps, spec.T.back(), spec.limits.neuron_steps));
  const double memory = numbers * kDocumentBytesPerNumber;
  if (memory > static_cast<double>(spec.limits.memory_bytes))
    throw InputError(fmt::format(
        "sweep: the document of {} runs x {} checkpoints needs about {} of memory, more than the limit of {}; "
        "lower the grid or the number of --T checkpoints, or raise --max-memory (GiB)",
        total, spec.T.size(), solvers::byte_size_text(static_cast<std::uint64_t>(memory) >> 20 << 20),
        solvers::byte_size_text(spec.limits.memory_bytes)));
}

// The spec's files, read and checked against each other as simulate_network
// will check them, and the cost of the shard against the limits.
SweepInputs read_inputs(const SweepSpec& spec, Shard shard) {
  validate_sweep(spec);
  check_sweep_limits(spec);
  SweepInputs in;
  for (const auto& path : spec.neurons) in.neurons.push_back({solvers::read_model_file(path), path});
  for (const auto& path : spec.nets) in.nets.push_back(load_any_network(path));
  in.data = load_data(spec.data);
  int test_images = 0;
  for (std::size_t i = 0; i < in.nets.size(); ++i)
    in.nets[i].visit([&](const auto& net) {
      check_net(net, spec.nets[i]);
      const std::size_t S = spiking_layer_count(net, spec.readout);
      if (in.neurons.size() != 1 && in.neurons.size() != S)
        throw InputError("neurons", fmt::format("{} models given; {} needs one for all spiking layers or {}",
                                                in.neurons.size(), spec.nets[i], S));
      test_images =
          simulation_subset(in.data.test, spec.limit, net.input_size(), net.output_size(), spec.subset).size();
    });
  if (in.data.train.size() == 0 && spec.scale == ScaleMode::Q99)
    throw InputError("data", "no training images, and the q99 scale takes the layer scales from the train split; "
                             "add training images or use the const scale");
  check_sweep_cost(spec, shard, in, static_cast<std::size_t>(test_images));
  return in;
}

}  // namespace

std::size_t check_sweep_inputs(const SweepSpec& spec, Shard shard) {
  read_inputs(spec, shard);
  return sweep_run_count(spec);
}

std::vector<std::string> sweep_input_files(const SweepSpec& s) {
  std::vector<std::string> files;
  for (const std::string& net : s.nets) {
    const auto f = network_input_files(net);
    files.insert(files.end(), f.begin(), f.end());
  }
  files.insert(files.end(), s.neurons.begin(), s.neurons.end());
  const auto data = data_source_files(s.data);
  files.insert(files.end(), data.begin(), data.end());
  if (s.subset.text.rfind("index:", 0) == 0) files.push_back(s.subset.text.substr(6));
  return files;
}

void check_sweep_limits(const SweepSpec& s) {
  const double runs = static_cast<double>(s.nets.size()) * s.samplers.size() * s.taus.size() * s.rates.size() * s.trials;
  if (runs > static_cast<double>(s.limits.runs))
    throw InputError(fmt::format("sweep: {:.0f} runs in the grid (nets x samplers x tau x r x trials = {} x {} x {} x "
                                 "{} x {}), more than the limit of {}; lower the grid or raise --max-runs",
                                 runs, s.nets.size(), s.samplers.size(), s.taus.size(), s.rates.size(), s.trials,
                                 s.limits.runs));
}

void validate_sweep(const SweepSpec& s) {
  if (s.nets.empty()) throw InputError("nets", "no network given");
  check_unique(s.nets, "nets");
  if (s.neurons.empty()) throw InputError("neurons", "no model file given");
  if (s.samplers.empty()) throw InputError("samplers", "no sampler given");
  std::vector<std::string> names;
  for (SamplerKind k : s.samplers) names.push_back(sampler_name(k));
  check_unique(names, "samplers");
  for (SamplerKind k : s.samplers) check_kernel(s.kernel, k, "kernel");
  check_positive(s.taus, "taus");
  check_positive(s.rates, "rates");
  check_positive(s.T, "T");
  for (std::size_t k = 1; k < s.T.size(); ++k)
    if (!(s.T[k] > s.T[k - 1]))
      throw InputError("T", fmt::format("the checkpoints must increase ({} after {})", s.T[k], s.T[k - 1]));
  if (!(s.dt > 0) || !std::isfinite(s.dt)) throw InputError("dt", fmt::format("{} must be positive", s.dt));
  for (double T : s.T) window_steps(T, s.dt, "T");
  if (s.trials < 1) throw InputError("trials", fmt::format("{} must be at least 1", s.trials));
  if (s.limit < 0) throw InputError("limit", fmt::format("{} must be at least 0", s.limit));
  if (!(s.criterion > 0) || !std::isfinite(s.criterion))
    throw InputError("criterion", fmt::format("{} must be a positive number of percentage points", s.criterion));
  const double runs = static_cast<double>(s.nets.size()) * s.samplers.size() * s.taus.size() * s.rates.size() * s.trials;
  if (runs > kMaxSampleRuns) throw InputError(fmt::format("sweep: {:.3g} runs in the grid, too many", runs));
}

std::size_t sweep_run_count(const SweepSpec& s) {
  return s.nets.size() * s.samplers.size() * s.taus.size() * s.rates.size() * static_cast<std::size_t>(s.trials);
}

SweepRun sweep_run_at(const SweepSpec& s, std::size_t u) {
  SweepRun r;
  r.trial = static_cast<int>(u % static_cast<std::size_t>(s.trials));
  u /= static_cast<std::size_t>(s.trials);
  r.rate = u % s.rates.size();
  u /= s.rates.size();
  r.tau = u % s.taus.size();
  u /= s.taus.size();
  r.sampler = u % s.samplers.size();
  r.net = u / s.samplers.size();
  return r;
}

Shard parse_shard(const std::string& text, const std::string& option) {
  const auto bad = [&](const std::string& why) {
    return InputError(option, fmt::format("'{}' {} (expected i/n with 1 <= i <= n, e.g. 2/8)", text, why));
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad("has no '/'");
  const auto number = [&](const std::string& part) {
    std::string why;
    const auto v = parse_whole_number(part, std::numeric_limits<int>::max(), why);
    if (!v) throw bad(fmt::format("has '{}', which {}", part, why));
    return static_cast<std::size_t>(*v);
  };
  Shard s{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (s.count == 0) throw bad("has n = 0");
  if (s.index == 0 || s.index > s.count) throw bad("has i outside 1..n");
  return s;
}

Json sweep_spec_json(const SweepSpec& s) {
  Json j;
  j["nets"] = s.nets;
  j["data"] = s.data.dir;
  for (const auto& [key, value] : {std::pair{"test_images", &s.data.test_images}, {"test_labels", &s.data.test_labels},
                                   {"train_images", &s.data.train_images}, {"train_labels", &s.data.train_labels},
                                   {"normalize", &s.data.normalization}})
    if (!value->empty()) j[key] = *value;
  j["neurons"] = s.neurons;
  Json samplers = Json::array();
  for (SamplerKind k : s.samplers) samplers.push_back(sampler_name(k));
  j["samplers"] = samplers;
  j["kernel"] = kernel_name(s.kernel);
  j["tau"] = s.taus;
  j["rate"] = s.rates;
  j["T"] = s.T;
  j["trials"] = s.trials;
  j["dt"] = s.dt;
  j["readout"] = readout_name(s.readout);
  j["scale"] = scale_name(s.scale);
  j["limit"] = s.limit;
  j["subset"] = s.subset.text;
  j["trace_weight"] = trace_weight_name(s.trace_weight);
  j["output_scale"] = output_scale_name(s.output_scale);
  j["layer_alpha"] = s.layer_alpha;
  j["seed"] = s.seed;
  j["criterion_pp"] = s.criterion;
  return j;
}

std::vector<RunRecord> run_sweep(const SweepSpec& spec, Shard shard, int threads,
                                 const std::function<void(std::size_t, std::size_t)>& progress) {
  const SweepInputs in = read_inputs(spec, shard);
  // References, not a structured binding: clang 14 (the fuzzing build) does
  // not let the lambdas below capture structured bindings.
  const auto& neurons = in.neurons;
  const auto& nets = in.nets;
  const auto& data = in.data;

  const std::size_t total = sweep_run_count(spec);
  std::vector<std::size_t> mine;
  for (std::size_t u = shard.index - 1; u < total; u += shard.count) mine.push_back(u);
  std::vector<RunRecord> runs;
  std::vector<std::vector<double>> q99_of(nets.size());
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const std::size_t u = mine[k];
    const SweepRun run = sweep_run_at(spec, u);
    NetworkSimOptions opt;
    opt.snn.T = spec.T.back();
    opt.snn.dt = spec.dt;
    opt.snn.tau = spec.taus[run.tau];
    opt.snn.sampler = spec.samplers[run.sampler];
    opt.snn.readout = spec.readout;
    opt.snn.checkpoints = spec.T;
    opt.rate = spec.rates[run.rate];
    opt.scale = spec.scale;
    opt.trials = 1;
    opt.first_trial = run.trial;
    opt.seed = spec.seed;
    opt.threads = threads;
    opt.limit = spec.limit;
    opt.subset = spec.subset;
    opt.output_scale = spec.output_scale;
    opt.layer_alpha = spec.layer_alpha;
    opt.snn.trace_weight = spec.trace_weight;
    opt.snn.kernel = spec.kernel;

    NetworkSimResult res;
    try {
      // The layer scales depend only on the net: computed at its first run.
      nets[run.net].visit([&](const auto& net) {
        if (q99_of[run.net].empty() && spec.scale == ScaleMode::Q99 && data.train.size() > 0)
          q99_of[run.net] = layer_q99(net, data.train, neurons, spec.readout, spec.output_scale);
        opt.q99 = q99_of[run.net];
        res = simulate_network(net, data.train, data.test, neurons, opt);
      });
    } catch (const InputError& e) {
      throw InputError(fmt::format("sweep run {} (net {}, sampler {}, tau {}, r {}, trial {}): {}", u,
                                   spec.nets[run.net], sampler_name(opt.snn.sampler), opt.snn.tau, opt.rate, run.trial,
                                   e.what()));
    }
    RunRecord r;
    r.run = u;
    r.net = run.net;
    r.sampler = opt.snn.sampler;
    r.tau = opt.snn.tau;
    r.rate = opt.rate;
    r.trial = run.trial;
    r.test_images = res.samples;
    r.a_ann = kPercent * res.acc_ann;
    r.a_mf = kPercent * res.acc_mf;
    r.ann_vs_mf = res.ann_vs_mf;
    for (std::size_t l = 0; l < res.alpha.size(); ++l)
      r.layers.push_back({res.q99[l], res.alpha[l], res.outside_fit_domain[l]});
    for (const WindowResult& w : res.windows) {
      RunWindow rw{w.T, kPercent * w.acc_snn[0], w.synops_mean, w.spikes_per_neuron, w.transitions_per_sample,
                   w.tie_fraction, w.count_quantiles, w.silent_fraction, {}, w.synops_sd, w.transitions_sd,
                   w.ann_vs_snn, w.mf_vs_snn};
      for (std::size_t l = 0; l < w.layer_spikes_per_neuron.size(); ++l)
        rw.layers.push_back({w.layer_spikes_per_neuron[l], w.layer_rate_rel_rmse[l]});
      r.windows.push_back(std::move(rw));
    }
    runs.push_back(std::move(r));
    if (progress) progress(k + 1, mine.size());
  }
  return runs;
}

SweepPart sweep_part(const SweepSpec& spec, Shard shard, std::vector<RunRecord> runs) {
  return {spec, shard, std::move(runs)};
}

namespace {

// The cell (net, sampler, tau, r) x checkpoint w of the records of its trials.
SweepCell cell_of(const SweepSpec& spec, std::size_t ni, std::size_t si, std::size_t ti, std::size_t ri,
                  std::size_t w, const std::vector<const RunRecord*>& recs) {
  const RunRecord& first = *recs.front();
  const auto window_mean = [&](double RunWindow::*field) {
    std::vector<double> v;
    for (const RunRecord* r : recs) v.push_back(r->windows.at(w).*field);
    return mean_of(v);
  };
  std::vector<double> acc;
  for (const RunRecord* r : recs) acc.push_back(r->windows.at(w).a_snn);
  SweepCell c;
  c.net = ni;
  c.sampler = spec.samplers.at(si);
  c.tau = spec.taus.at(ti);
  c.rate = spec.rates.at(ri);
  c.T = spec.T.at(w);
  c.a_ann = first.a_ann;
  c.a_mf = first.a_mf;
  c.a_snn_mean = mean_of(acc);
  c.a_snn_sd = sd_of(acc);
  c.gap = first.a_ann - mean_of(acc);
  c.mean_field_mismatch = first.a_ann - first.a_mf;
  c.sampling_gap = first.a_mf - mean_of(acc);
  c.synops_per_sample = window_mean(&RunWindow::synops_per_sample);
  c.spikes_per_neuron = window_mean(&RunWindow::spikes_per_neuron);
  c.transitions_per_sample = window_mean(&RunWindow::transitions_per_sample);
  c.tie_fraction = window_mean(&RunWindow::tie_fraction);
  // Means over the trials of each quantile of the pooled counts.
  for (std::size_t q = 0; q < first.windows.at(w).count_quantiles.size(); ++q) {
    std::vector<double> v;
    for (const RunRecord* r : recs) v.push_back(r->windows.at(w).count_quantiles.at(q));
    c.count_quantiles.push_back(mean_of(v));
  }
  c.silent_fraction = window_mean(&RunWindow::silent_fraction);
  for (std::size_t l = 0; l < first.layers.size(); ++l) {
    const auto layer_mean = [&](double RunWindowLayer::*field) {
      std::vector<double> v;
      for (const RunRecord* r : recs) v.push_back(r->windows.at(w).layers.at(l).*field);
      return mean_of(v);
    };
    c.layers.push_back({layer_mean(&RunWindowLayer::spikes_per_neuron), layer_mean(&RunWindowLayer::rate_rel_rmse),
                        first.layers[l].outside_fit_domain});
  }
  return c;
}

// The point (sampler si, tau ti, r ri, checkpoint w) over its cells, one per net.
SweepPoint point_of(const SweepSpec& spec, const std::vector<std::size_t>& key, const std::vector<SweepCell>& cells,
                    const std::vector<std::size_t>& ids) {
  const auto stat = [&](double SweepCell::*field) {
    std::vector<double> v;
    for (std::size_t id : ids) v.push_back(cells.at(id).*field);
    return std::make_pair(mean_of(v), sd_of(v));
  };
  SweepPoint p;
  p.sampler = spec.samplers.at(key[0]);
  p.tau = spec.taus.at(key[1]);
  p.rate = spec.rates.at(key[2]);
  p.T = spec.T.at(key[3]);
  p.nets = ids.size();
  p.a_ann = stat(&SweepCell::a_ann).first;
  p.a_mf = stat(&SweepCell::a_mf).first;
  p.a_snn = stat(&SweepCell::a_snn_mean).first;
  std::tie(p.gap_mean, p.gap_sd) = stat(&SweepCell::gap);
  std::tie(p.synops_per_sample_mean, p.synops_per_sample_sd) = stat(&SweepCell::synops_per_sample);
  std::tie(p.transitions_per_sample_mean, p.transitions_per_sample_sd) = stat(&SweepCell::transitions_per_sample);
  std::tie(p.spikes_per_neuron_mean, p.spikes_per_neuron_sd) = stat(&SweepCell::spikes_per_neuron);
  return p;
}

// Per sampler, the frontiers and the cheapest point under the criterion.
void add_frontiers(SweepDocument& d, const std::vector<std::vector<std::size_t>>& sampler_points) {
  for (std::size_t si = 0; si < d.spec.samplers.size(); ++si) {
    const auto& ids = sampler_points[si];
    std::vector<double> gap, synops, transitions;
    for (std::size_t id : ids) {
      gap.push_back(d.points.at(id).gap_mean);
      synops.push_back(d.points.at(id).synops_per_sample_mean);
      transitions.push_back(d.points.at(id).transitions_per_sample_mean);
    }
    const auto to_points = [&](const std::vector<std::size_t>& local) {
      std::vector<std::size_t> a;
      for (std::size_t k : local) a.push_back(ids[k]);
      return a;
    };
    const auto cheapest = [&](const std::vector<double>& cost) -> std::optional<std::size_t> {
      const auto k = cheapest_below(cost, gap, d.spec.criterion);
      return k ? std::optional<std::size_t>(ids[*k]) : std::nullopt;
    };
    const SamplerKind sampler = d.spec.samplers[si];
    d.frontier.push_back({sampler, to_points(pareto_frontier(synops, gap)), to_points(pareto_frontier(transitions, gap))});
    d.min_cost.push_back({sampler, cheapest(synops), cheapest(transitions)});
  }
}

SweepDocument build_document(const SweepSpec& spec, Json recorded_spec, std::vector<RunRecord> runs) {
  const std::size_t expected = sweep_run_count(spec);
  if (runs.size() != expected)
    throw InputError(fmt::format("sweep: {} run records for a grid of {} runs", runs.size(), expected));
  for (std::size_t u = 0; u < expected; ++u)
    if (runs[u].run != u) throw InputError(fmt::format("sweep: run record {} is numbered {}", u, runs[u].run));
  SweepDocument d;
  d.spec = spec;
  d.recorded_spec = std::move(recorded_spec);
  // Cells: (net, sampler, tau, r) x checkpoint, over the trials;
  // point_cells[(sampler, tau, r, checkpoint)]: the cells of each net.
  std::map<std::vector<std::size_t>, std::vector<std::size_t>> point_cells;
  std::size_t u = 0;
  for (std::size_t ni = 0; ni < spec.nets.size(); ++ni)
    for (std::size_t si = 0; si < spec.samplers.size(); ++si)
      for (std::size_t ti = 0; ti < spec.taus.size(); ++ti)
        for (std::size_t ri = 0; ri < spec.rates.size(); ++ri) {
          std::vector<const RunRecord*> recs;
          for (int t = 0; t < spec.trials; ++t) recs.push_back(&runs.at(u++));
          for (std::size_t w = 0; w < spec.T.size(); ++w) {
            point_cells[{si, ti, ri, w}].push_back(d.cells.size());
            d.cells.push_back(cell_of(spec, ni, si, ti, ri, w, recs));
          }
        }
  // Points: (sampler, tau, r, T) over the nets.
  std::vector<std::vector<std::size_t>> sampler_points(spec.samplers.size());
  for (const auto& [key, ids] : point_cells) {
    sampler_points[key[0]].push_back(d.points.size());
    d.points.push_back(point_of(spec, key, d.cells, ids));
  }
  add_frontiers(d, sampler_points);
  d.runs = std::move(runs);
  return d;
}

}  // namespace

SweepDocument sweep_document(const SweepSpec& spec, std::vector<RunRecord> runs) {
  return sweep_document(spec, sweep_spec_json(spec), std::move(runs));
}

SweepDocument sweep_document(const SweepSpec& spec, Json recorded_spec, std::vector<RunRecord> runs) {
  try {
    return build_document(spec, std::move(recorded_spec), std::move(runs));
  } catch (const std::out_of_range&) {
    throw InputError("sweep: a run record lacks a checkpoint, a layer or a quantile of its grid");
  }
}

namespace {

// The largest count per test image (SynOps, spikes, transitions, count
// quantiles, rate errors) a part may hold: the merge sums these and squares
// their deviations over the trials and the nets, which stays finite below
// 1e100 for any grid (a real count per image is below 1e15), where values
// near the largest double would give a mean of inf (written null).
constexpr double kMaxAveraged = 1e100;

// Checks of a part's fields, each failure an InputError "<file>: <field>: <what>".
struct PartReader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", file, field, what));
  }
  const Json& member(const Json& obj, const std::string& field, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(field.empty() ? std::string(key) : field + "." + key, "missing");
    return *it;
  }
  // obj is an object whose keys are exactly `keys` (no unknown, none missing).
  void exact_keys(const Json& obj, const std::string& field, std::initializer_list<const char*> keys,
                  std::initializer_list<const char*> optional = {}) const {
    if (!obj.is_object()) fail(field.empty() ? "top level" : field, fmt::format("expected an object, got {}",
                                                                              solvers::json_type_name(obj)));
    for (const auto& item : obj.items()) {
      const auto known = [&](std::initializer_list<const char*> list) {
        return std::any_of(list.begin(), list.end(), [&](const char* k) { return item.key() == k; });
      };
      if (!known(keys) && !known(optional))
        fail(field.empty() ? "top level" : field,
             fmt::format("unknown key {}", ctmc::quote_excerpt(item.key())));
    }
    for (const char* k : keys) member(obj, field, k);
  }
  // A finite number (null: NaN, where `null_ok`) in [lo, hi]; hi =
  // kMaxAveraged for the numbers the merge averages.
  double number(const Json& obj, const std::string& field, const char* key, double lo, double hi,
                bool null_ok = false) const {
    const Json& v = member(obj, field, key);
    const std::string at = field + "." + key;
    if (v.is_null() && null_ok) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) fail(at, fmt::format("expected a number, got {}", solvers::json_excerpt(v)));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(at, fmt::format("{} is not a finite number", x));
    if (!(x >= lo && x <= hi)) {
      if (hi == kMaxAveraged)
        fail(at, fmt::format("{} is not a number in [{}, {:g}] (the merge's means and deviations over the trials "
                             "and nets must stay finite)",
                             x, lo, hi));
      fail(at, fmt::format("{} is not in [{}, {}]", x, lo, hi));
    }
    return x;
  }
  std::size_t whole(const Json& obj, const std::string& field, const char* key) const {
    const Json& v = member(obj, field, key);
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
      fail(field + "." + key, fmt::format("expected a whole number >= 0, got {}", solvers::json_excerpt(v)));
    return v.get<std::size_t>();
  }
  // A paired tally [n10, n01] of a run on `images` test images.
  void paired(const Json& obj, const std::string& field, const char* key, std::size_t images) const {
    const Json& v = array(obj, field, key, 2);
    const std::string at = field + "." + key;
    std::size_t discordant = 0;
    for (const Json& x : v) {
      if (!x.is_number_integer() || (!x.is_number_unsigned() && x.get<std::int64_t>() < 0))
        fail(at, fmt::format("expected [n10, n01] of whole numbers, got {}", solvers::json_excerpt(v)));
      discordant += x.get<std::size_t>();
    }
    if (discordant > images)
      fail(at, fmt::format("{} discordant images of a run on {} test images", discordant, images));
  }
  const Json& array(const Json& obj, const std::string& field, const char* key, std::size_t size) const {
    const Json& v = member(obj, field, key);
    if (!v.is_array()) fail(field + "." + key, fmt::format("expected an array, got {}", solvers::json_excerpt(v)));
    if (v.size() != size) fail(field + "." + key, fmt::format("{} entries, expected {}", v.size(), size));
    return v;
  }
};

// A spec without "kernel", written before the key existed, is read and
// compared as the "reference" it means: every sweep ran on that kernel then.
template <class J>  // nlohmann::json or ordered_json
J with_kernel(J spec) {
  if (spec.is_object() && !spec.contains("kernel")) spec["kernel"] = "reference";
  return spec;
}

// The spec as a SweepSpec; InputError "<file>: spec.<key>: ..." for a key
// that is unknown, missing, of the wrong type, or a grid validate_sweep
// refuses. The spec must also be exactly what sweep_spec_json writes for it.
SweepSpec spec_of_part(const PartReader& in, const Json& given) {
  const Json j = with_kernel(given);
  in.exact_keys(j, "spec",
                {"nets", "data", "neurons", "samplers", "kernel", "tau", "rate", "T", "trials", "dt", "readout", "scale",
                 "limit", "subset", "trace_weight", "output_scale", "layer_alpha", "seed", "criterion_pp"},
                {"test_images", "test_labels", "train_images", "train_labels", "normalize"});
  SweepSpec s;
  std::string key;  // the key being read, for messages
  try {
    const auto strings = [&](const char* k) {
      key = k;
      std::vector<std::string> v;
      const Json& a = in.member(j, "spec", k);
      if (!a.is_array()) in.fail(std::string("spec.") + k, "expected an array of strings");
      for (const Json& x : a) {
        if (!x.is_string()) in.fail(std::string("spec.") + k, "expected an array of strings");
        v.push_back(x.get<std::string>());
      }
      return v;
    };
    const auto numbers = [&](const char* k, bool null_is_nan) {
      key = k;
      std::vector<double> v;
      const Json& a = in.member(j, "spec", k);
      if (!a.is_array()) in.fail(std::string("spec.") + k, "expected an array of numbers");
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].is_null() && null_is_nan) {
          v.push_back(std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        if (!a[i].is_number())
          in.fail(fmt::format("spec.{}[{}]", k, i), fmt::format("expected a number, got {}", solvers::json_excerpt(a[i])));
        v.push_back(a[i].get<double>());
      }
      return v;
    };
    const auto text = [&](const char* k) {
      key = k;
      const Json& v = in.member(j, "spec", k);
      if (!v.is_string()) in.fail(std::string("spec.") + k, fmt::format("expected a string, got {}", solvers::json_excerpt(v)));
      return v.get<std::string>();
    };
    s.nets = strings("nets");
    s.data.dir = text("data");
    for (const auto& [k, value] : {std::pair{"test_images", &s.data.test_images}, {"test_labels", &s.data.test_labels},
                                   {"train_images", &s.data.train_images}, {"train_labels", &s.data.train_labels},
                                   {"normalize", &s.data.normalization}})
      if (j.contains(k)) *value = text(k);
    s.neurons = strings("neurons");
    s.samplers.clear();
    for (const std::string& name : strings("samplers")) s.samplers.push_back(parse_sampler(name, "samplers"));
    s.kernel = parse_kernel(text("kernel"), "kernel");
    s.taus = numbers("tau", false);
    s.rates = numbers("rate", false);
    s.T = numbers("T", false);
    key = "trials";
    const std::size_t trials = in.whole(j, "spec", "trials");
    if (trials < 1 || trials > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      in.fail("spec.trials", fmt::format("{} is not a whole number from 1 to {}", trials, std::numeric_limits<int>::max()));
    s.trials = static_cast<int>(trials);
    s.dt = in.number(j, "spec", "dt", 0, std::numeric_limits<double>::max());
    s.readout = parse_readout(text("readout"), "readout");
    s.scale = parse_scale_mode(text("scale"), "scale");
    key = "limit";
    const std::size_t limit = in.whole(j, "spec", "limit");
    if (limit > static_cast<std::size_t>(std::numeric_limits<int>::max())) in.fail("spec.limit", "too large");
    s.limit = static_cast<int>(limit);
    s.subset.text = text("subset");
    s.trace_weight = parse_trace_weight(text("trace_weight"), "trace_weight");
    s.output_scale = parse_output_scale(text("output_scale"), "output_scale");
    s.layer_alpha = numbers("layer_alpha", true);
    for (std::size_t l = 0; l < s.layer_alpha.size(); ++l)
      if (!std::isnan(s.layer_alpha[l]) && !(s.layer_alpha[l] > 0 && std::isfinite(s.layer_alpha[l])))
        in.fail(fmt::format("spec.layer_alpha[{}]", l), fmt::format("{} is not a positive number", s.layer_alpha[l]));
    key = "seed";
    s.seed = in.whole(j, "spec", "seed");
    s.criterion = in.number(j, "spec", "criterion_pp", 0, std::numeric_limits<double>::max());
    key = "grid";
    validate_sweep(s);
  } catch (const InputError& e) {
    if (std::string(e.what()).rfind(in.file + ": ", 0) == 0) throw;
    // An error of the grid names its parameter ("taus", "T"): shown as the spec's key.
    static const std::map<std::string, std::string> kKeys{{"taus", "tau"}, {"rates", "rate"}, {"criterion", "criterion_pp"}};
    std::string field = e.input().empty() ? key : e.input();
    if (const auto it = kKeys.find(field); it != kKeys.end()) field = it->second;
    in.fail("spec." + field, e.input().empty() ? std::string(e.what()) : e.detail());
  }
  // What the spec says, written back, is the spec: a value our writer would
  // write differently (1 for a criterion of 1.0 aside) is not from a sweep.
  if (nlohmann::json::parse(sweep_spec_json(s).dump()) != nlohmann::json::parse(j.dump()))
    in.fail("spec", "is not a spec that 'ctmc-snn sweep' writes (a value differs from its reading)");
  return s;
}

// One run's record against the grid: its run number's place in the grid, the
// checkpoints, the layers (`layers`: the count of the net's earlier records,
// 0 for none yet), every number in its range.
void check_record(const PartReader& in, const Json& r, const std::string& field, const SweepSpec& s, const Json& spec,
                  std::size_t& layers, std::size_t& test_images) {
  in.exact_keys(r, field, {"run", "net", "sampler", "tau", "rate", "trial", "test_images", "A_ANN", "A_MF", "ann_vs_mf",
                           "layers", "windows"});
  const std::size_t u = in.whole(r, field, "run");
  const SweepRun at = sweep_run_at(s, u);
  if (in.whole(r, field, "net") != at.net) in.fail(field + ".net", fmt::format("is not {}, the net of run {}", at.net, u));
  if (in.member(r, field, "sampler") != spec.at("samplers").at(at.sampler))
    in.fail(field + ".sampler", fmt::format("is not {}, the sampler of run {}", spec.at("samplers").at(at.sampler).dump(), u));
  if (in.number(r, field, "tau", 0, std::numeric_limits<double>::max()) != s.taus[at.tau])
    in.fail(field + ".tau", fmt::format("is not {}, the tau of run {} in the grid", s.taus[at.tau], u));
  if (in.number(r, field, "rate", 0, std::numeric_limits<double>::max()) != s.rates[at.rate])
    in.fail(field + ".rate", fmt::format("is not {}, the r of run {} in the grid", s.rates[at.rate], u));
  if (in.whole(r, field, "trial") != static_cast<std::size_t>(at.trial))
    in.fail(field + ".trial", fmt::format("is not {}, the trial of run {}", at.trial, u));
  const std::size_t images = in.whole(r, field, "test_images");
  if (images == 0) in.fail(field + ".test_images", "is 0");
  if (test_images == 0) test_images = images;
  if (images != test_images)
    in.fail(field + ".test_images", fmt::format("{} here, {} in another run (every run reads the same images)", images,
                                                test_images));
  in.number(r, field, "A_ANN", 0, 100);
  in.number(r, field, "A_MF", 0, 100);
  in.paired(r, field, "ann_vs_mf", images);
  const Json& ls = in.member(r, field, "layers");
  if (!ls.is_array() || ls.empty()) in.fail(field + ".layers", "expected a non-empty array");
  if (layers == 0) layers = ls.size();
  if (ls.size() != layers)
    in.fail(field + ".layers", fmt::format("{} layers, another run of the same net has {}", ls.size(), layers));
  if (s.neurons.size() > 1 && ls.size() != s.neurons.size())
    in.fail(field + ".layers", fmt::format("{} layers for {} neuron models (one per spiking layer)", ls.size(),
                                           s.neurons.size()));
  for (std::size_t l = 0; l < ls.size(); ++l) {
    const std::string lf = fmt::format("{}.layers[{}]", field, l);
    in.exact_keys(ls[l], lf, {"q99", "alpha", "outside_fit_domain"});
    in.number(ls[l], lf, "q99", -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), true);
    const double alpha = in.number(ls[l], lf, "alpha", 0, std::numeric_limits<double>::max());
    if (!(alpha > 0)) in.fail(lf + ".alpha", "is not positive");
    in.number(ls[l], lf, "outside_fit_domain", 0, 1, true);
  }
  const Json& ws = in.array(r, field, "windows", s.T.size());
  for (std::size_t w = 0; w < ws.size(); ++w) {
    const std::string wf = fmt::format("{}.windows[{}]", field, w);
    in.exact_keys(ws[w], wf, {"T", "A_SNN", "synops_per_sample", "spikes_per_neuron", "transitions_per_sample",
                              "tie_fraction", "count_quantiles", "silent_fraction", "layers", "synops_sd",
                              "transitions_sd", "ann_vs_snn", "mf_vs_snn"});
    if (in.number(ws[w], wf, "T", 0, std::numeric_limits<double>::max()) != s.T[w])
      in.fail(wf + ".T", fmt::format("is not {}, checkpoint {} of the grid", s.T[w], w + 1));
    in.number(ws[w], wf, "A_SNN", 0, 100);
    in.number(ws[w], wf, "synops_per_sample", 0, kMaxAveraged);
    in.number(ws[w], wf, "spikes_per_neuron", 0, kMaxAveraged);
    in.number(ws[w], wf, "transitions_per_sample", 0, kMaxAveraged);
    in.number(ws[w], wf, "tie_fraction", 0, 1);
    in.number(ws[w], wf, "silent_fraction", 0, 1);
    in.number(ws[w], wf, "synops_sd", 0, kMaxAveraged, true);  // null: one test image, no spread
    in.number(ws[w], wf, "transitions_sd", 0, kMaxAveraged, true);
    in.paired(ws[w], wf, "ann_vs_snn", images);
    in.paired(ws[w], wf, "mf_vs_snn", images);
    const Json& q = in.array(ws[w], wf, "count_quantiles", std::size(kCountQuantileLevels));
    for (std::size_t k = 0; k < q.size(); ++k) {
      const std::string qf = fmt::format("{}.count_quantiles[{}]", wf, k);
      if (!q[k].is_number() || !(q[k].get<double>() >= 0) || !(q[k].get<double>() <= kMaxAveraged))
        in.fail(qf, fmt::format("{} is not a spike count in [0, {:g}]", solvers::json_excerpt(q[k]), kMaxAveraged));
      if (k > 0 && q[k].get<double>() < q[k - 1].get<double>())
        in.fail(qf, "is below the quantile before it (quantiles increase)");
    }
    const Json& wl = in.array(ws[w], wf, "layers", layers);
    for (std::size_t l = 0; l < wl.size(); ++l) {
      const std::string lf = fmt::format("{}.layers[{}]", wf, l);
      in.exact_keys(wl[l], lf, {"spikes_per_neuron", "rate_rel_rmse"});
      in.number(wl[l], lf, "spikes_per_neuron", 0, kMaxAveraged);
      in.number(wl[l], lf, "rate_rel_rmse", 0, kMaxAveraged, true);
    }
  }
}

// What a run's record says that does not depend on its trial, sampler or
// tau: the merge reads a cell's A_ANN, A_MF and layer facts from its first
// trial, so every run must agree with the first run of its net (A_ANN, the
// layers' q99) and of its net and r (A_MF, the layers' alpha and fraction
// outside the fit domain).
struct RunInvariants {
  struct First {
    const Json* record = nullptr;
    std::string file, field;
  };
  std::map<std::size_t, First> of_net;
  std::map<std::pair<std::size_t, std::size_t>, First> of_net_rate;

  // `key` of this record (mine) against the first record's (theirs).
  static void agree(const PartReader& in, const std::string& field, const std::string& key, const Json& mine,
                    const Json& theirs, const First& first, const char* depends) {
    if (mine != theirs)
      in.fail(field + "." + key, fmt::format("{} here, {} in {} of {} ({} depends on {} only, not on the trial, sampler "
                                             "or tau)",
                                             mine.dump(), theirs.dump(), first.field, first.file, key, depends));
  }

  void check(const PartReader& in, const Json& r, const std::string& field, const SweepRun& at) {
    const auto first = [&](First& f) {
      if (f.record) return false;
      f = {&r, in.file, field};
      return true;
    };
    const auto layer = [](const Json& rec, std::size_t l, const char* k) -> const Json& {
      return rec.at("layers").at(l).at(k);
    };
    First& net = of_net[at.net];
    if (!first(net)) {
      agree(in, field, "A_ANN", r.at("A_ANN"), net.record->at("A_ANN"), net, "the net");
      for (std::size_t l = 0; l < r.at("layers").size(); ++l)
        agree(in, field, fmt::format("layers[{}].q99", l), layer(r, l, "q99"), layer(*net.record, l, "q99"), net,
              "the net");
    }
    First& rate = of_net_rate[{at.net, at.rate}];
    if (!first(rate)) {
      agree(in, field, "A_MF", r.at("A_MF"), rate.record->at("A_MF"), rate, "the net and r");
      for (std::size_t l = 0; l < r.at("layers").size(); ++l)
        for (const char* k : {"alpha", "outside_fit_domain"})
          agree(in, field, fmt::format("layers[{}].{}", l, k), layer(r, l, k), layer(*rate.record, l, k), rate,
                "the net and r");
    }
  }
};

SweepDocument merge_parts(std::vector<std::pair<std::string, Json>>& parts) {
  if (parts.empty()) throw InputError("sweep merge: no parts given");
  const std::string& first_file = parts.front().first;
  std::size_t count = 0;
  std::map<std::size_t, std::string> seen;  // shard index -> file
  std::vector<Shard> shards;
  SweepSpec grid;
  std::size_t records = 0;
  for (auto& [file, part] : parts) {
    const PartReader in{file};
    if (!part.is_object() || !part.contains("format") || part.at("format") != kSweepPartFormat)
      throw InputError(fmt::format("{}: not a sweep part (\"format\" is not \"{}\")", file, kSweepPartFormat));
    if (part.contains("version") && part.at("version") != kSweepFormatVersion)
      throw InputError(fmt::format("{}: sweep part version {} (this tool reads {})", file,
                                   solvers::json_excerpt(part.at("version")), kSweepFormatVersion));
    in.exact_keys(part, "", {"format", "version", "spec", "shard", "runs"});
    if (&part == &parts.front().second) {
      grid = spec_of_part(in, part.at("spec"));
    } else if (with_kernel(nlohmann::json::parse(part.at("spec").dump())) !=
               with_kernel(nlohmann::json::parse(parts.front().second.at("spec").dump()))) {
      // Compared as unordered JSON: a part whose keys another tool reordered
      // is still the same sweep, and so is one that names the kernel a part
      // written before the key ran on.
      throw InputError(fmt::format("{}: a part of another sweep than {} (the specs differ)", file, first_file));
    }
    const Json& sh = part.at("shard");
    in.exact_keys(sh, "shard", {"index", "count"});
    const Shard s{in.whole(sh, "shard", "index"), in.whole(sh, "shard", "count")};
    if (s.count == 0 || s.index == 0 || s.index > s.count)
      throw InputError(fmt::format("{}: shard {}/{} is not i/n with 1 <= i <= n", file, s.index, s.count));
    if (count == 0) {
      count = s.count;
    } else if (s.count != count) {
      throw InputError(fmt::format("{}: shard {}/{}, but {} is one of {} parts", file, s.index, s.count, first_file,
                                   count));
    }
    if (const auto it = seen.find(s.index); it != seen.end())
      throw InputError(fmt::format("{}: shard {}/{} is given twice (also {})", file, s.index, s.count, it->second));
    seen[s.index] = file;
    shards.push_back(s);
    if (!part.at("runs").is_array()) in.fail("runs", "expected an array");
    records += part.at("runs").size();
  }
  std::string missing;
  for (std::size_t i = 1; i <= count; ++i)
    if (!seen.count(i)) missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, count);
  if (!missing.empty()) throw InputError("sweep merge: missing shard(s) " + missing);
  // The parts hold every run once, so the grid has as many runs as they hold
  // records (checked before a table of the grid's size is made).
  const std::size_t total = sweep_run_count(grid);
  if (total != records)
    throw InputError(fmt::format("sweep merge: the grid has {} runs, the parts hold {} records", total, records));

  const Json& spec = parts.front().second.at("spec");
  std::vector<Json*> by_run(total, nullptr);
  std::vector<std::size_t> layers(grid.nets.size(), 0);
  std::size_t test_images = 0;
  RunInvariants invariants;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    auto& [file, part] = parts[p];
    const PartReader in{file};
    const Shard s = shards[p];
    Json& runs = part.at("runs");
    for (std::size_t k = 0; k < runs.size(); ++k) {
      Json& r = runs[k];
      const std::string field = fmt::format("runs[{}]", k);
      if (!r.is_object()) in.fail(field, "expected an object");
      const std::size_t u = in.whole(r, field, "run");
      if (u >= total || u % count != s.index - 1)
        throw InputError(fmt::format("{}: run {} does not belong to shard {}/{}", file, u, s.index, count));
      if (by_run[u]) throw InputError(fmt::format("{}: run {} appears twice", file, u));
      check_record(in, r, field, grid, spec, layers[sweep_run_at(grid, u).net], test_images);
      invariants.check(in, r, field, sweep_run_at(grid, u));
      by_run[u] = &r;
    }
  }
  std::vector<RunRecord> runs;
  for (std::size_t u = 0; u < by_run.size(); ++u) {
    if (!by_run[u]) throw InputError(fmt::format("sweep merge: run {} is in no part", u));
    runs.push_back(by_run[u]->get<RunRecord>());
    *by_run[u] = nullptr;  // the record read: its text no longer needed
  }
  return sweep_document(grid, spec, std::move(runs));
}

// The longest token (a string or a bare number or word) a part may hold: its
// strings are file names, keys and option texts, its numbers 24 characters.
constexpr std::size_t kMaxPartToken = 1 << 16;

// One pass over the file's bytes, in constant memory, before any parser
// holds a token: a parser keeps a token whole, so a single string of
// gigabytes would be read into memory before anything could refuse it.
void check_part_tokens(const std::string& path, std::FILE* f) {
  std::vector<char> buf(std::size_t(1) << 20);
  bool in_string = false, escaped = false;
  std::size_t token = 0;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), f)) > 0;) {
    for (std::size_t i = 0; i < n; ++i) {
      const char c = buf[i];
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false, token = 0;
        if (in_string && ++token > kMaxPartToken) break;
        continue;
      }
      if (c == '"') in_string = true, token = 0;
      else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ',' || c == ':' || c == '[' || c == ']' ||
               c == '{' || c == '}')
        token = 0;
      else if (++token > kMaxPartToken)
        break;
    }
    if (token > kMaxPartToken)
      throw InputError(fmt::format("{}: holds a token (a string or number) of more than {} bytes, not a sweep part",
                                   path, kMaxPartToken));
  }
  if (std::ferror(f)) throw InputError(fmt::format("{}: cannot read sweep part ({})", path, std::strerror(errno)));
  std::rewind(f);
}

// The spec and shard of a part, read as a stream (its runs parsed, not kept).
std::pair<Json, Json> scan_part_header(const std::string& path) {
  // Opened as every input is (a regular file only, never waiting on a pipe),
  // then read through stdio for the streaming parser.
  const solvers::InputFile in(path, "sweep part");
  const int fd = ::dup(in.descriptor());
  std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "rb");
  if (!f) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    throw InputError(fmt::format("{}: cannot open sweep part ({})", path, std::strerror(e)));
  }
  struct Close {
    std::FILE* f;
    ~Close() { std::fclose(f); }
  } close{f};
  check_part_tokens(path, f);
  std::string top_key;
  std::size_t kept = 0;
  constexpr std::size_t kMaxKeptValues = 1000000;  // a spec has a few hundred values
  constexpr std::size_t kMaxKeptString = 1 << 16;    // its strings are file names and option texts
  const auto keep = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth > static_cast<int>(solvers::kMaxJsonDepth))
      throw InputError(fmt::format("{}: malformed JSON: nested deeper than {} levels", path, solvers::kMaxJsonDepth));
    if (event == Json::parse_event_t::key && depth == 1) {
      top_key = parsed.get<std::string>();
      return top_key == "spec" || top_key == "shard";
    }
    if (depth >= 1 && (top_key == "spec" || top_key == "shard")) {
      // What is kept stays small, so that the spec cannot make room for itself in the bound.
      if (++kept > kMaxKeptValues)
        throw InputError(fmt::format("{}: \"{}\" holds more than {} values, not a sweep part's", path, top_key,
                                     kMaxKeptValues));
      if ((event == Json::parse_event_t::value || event == Json::parse_event_t::key) && parsed.is_string() &&
          parsed.get_ref<const std::string&>().size() > kMaxKeptString)
        throw InputError(fmt::format("{}: \"{}\" holds a string of more than {} bytes, not a sweep part's", path,
                                     top_key, kMaxKeptString));
    }
    return true;
  };
  Json head;
  try {
    head = Json::parse(f, keep);
  } catch (const Json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON: {}", path, ctmc::quote_excerpt(e.what())));
  }
  if (!head.is_object() || !head.contains("spec") || !head.contains("shard"))
    throw InputError(fmt::format("{}: not a sweep part (no \"spec\" and \"shard\")", path));
  return {head.at("spec"), head.at("shard")};
}

}  // namespace

SweepSpec read_sweep_spec(const Json& spec, const std::string& file) { return spec_of_part(PartReader{file}, spec); }

std::uint64_t max_sweep_part_bytes(const Json& spec, Shard shard) {
  SweepSpec dims;  // only the list sizes matter
  for (const auto& [key, list] : {std::pair{"nets", &dims.nets}, {"neurons", &dims.neurons}})
    if (spec.contains(key) && spec.at(key).is_array()) list->resize(spec.at(key).size());
  dims.samplers.resize(spec.contains("samplers") && spec.at("samplers").is_array() ? spec.at("samplers").size() : 0);
  for (const auto& [key, list] : {std::pair{"tau", &dims.taus}, {"rate", &dims.rates}, {"T", &dims.T}})
    if (spec.contains(key) && spec.at(key).is_array()) list->resize(spec.at(key).size());
  const double trials = spec.contains("trials") && spec.at("trials").is_number_integer() ? spec.at("trials").get<double>() : 0;
  const double total = static_cast<double>(dims.nets.size()) * static_cast<double>(dims.samplers.size()) *
                       static_cast<double>(dims.taus.size()) * static_cast<double>(dims.rates.size()) * trials;
  const double runs = shard.count > 0 && total >= static_cast<double>(shard.index)
                          ? std::floor((total - static_cast<double>(shard.index)) / static_cast<double>(shard.count)) + 1
                          : 0;
  const std::size_t layers = dims.neurons.size() > 1 ? dims.neurons.size() : kPartLayersAssumed;
  constexpr double kHeaderBytes = 1 << 20;  // format, version, shard
  const double bytes = kHeaderBytes + 8.0 * static_cast<double>(spec.dump().size()) +
                       runs * record_numbers(dims.T.size(), layers) * kPartBytesPerNumber;
  return bytes >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(bytes);
}

Json read_sweep_part(const std::string& path, std::uint64_t scan_above) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw InputError(fmt::format("{}: cannot open sweep part ({})", path, ec ? ec.message() : "No such file or directory"));
  if (!std::filesystem::is_regular_file(status))
    throw InputError(fmt::format("{}: not a regular file (a sweep part is a file that 'sweep --shard' wrote)", path));
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read sweep part ({})", path, ec.message()));
  std::uint64_t cap = scan_above;
  if (size > scan_above) {
    // Larger than most parts: its own grid says how large it may be.
    const auto [spec, shard] = scan_part_header(path);
    Shard s;
    if (shard.is_object() && shard.contains("index") && shard.at("index").is_number_unsigned() &&
        shard.contains("count") && shard.at("count").is_number_unsigned())
      s = {shard.at("index").get<std::size_t>(), shard.at("count").get<std::size_t>()};
    cap = std::max(scan_above, max_sweep_part_bytes(spec, s));
    if (size > cap)
      throw InputError(fmt::format("{}: {} bytes, more than the {} that shard {}/{} of its grid can hold ({} "
                                   "checkpoints, at most {} layers); refusing",
                                   path, size, cap, s.index, s.count,
                                   spec.contains("T") && spec.at("T").is_array() ? spec.at("T").size() : 0,
                                   spec.contains("neurons") && spec.at("neurons").is_array() &&
                                           spec.at("neurons").size() > 1
                                       ? spec.at("neurons").size()
                                       : kPartLayersAssumed));
  }
  const solvers::InputKind kind{"sweep part", cap, "a part holds a few KB per run and checkpoint"};
  const std::string text = solvers::read_input_file(path, kind);
  return solvers::parse_json_strict<Json>(text, path);
}

SweepDocument merge_sweep_parts(std::vector<std::pair<std::string, Json>> parts) {
  try {
    return merge_parts(parts);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("sweep merge: a part is malformed ({})", e.what()));
  }
}

}  // namespace ctmc::sim
