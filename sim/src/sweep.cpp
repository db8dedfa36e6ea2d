#include "ctmc/sim/sweep.hpp"
#include "ctmc/sim/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "ctmc/sim/pareto.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::sim {
namespace {

using Json = nlohmann::ordered_json;
constexpr double kPercent = 100.0;
constexpr const char* kPartFormat = "ctmc-snn sweep part";
constexpr const char* kDocumentFormat = "ctmc-snn sweep";
constexpr int kVersion = 1;

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

// A number of a record; JSON null stands for NaN (nlohmann writes NaN so).
double num(const Json& j) { return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>(); }

// The mean over records of the number at `key` of each.
double mean_over(const std::vector<const Json*>& records, const std::function<double(const Json&)>& get) {
  std::vector<double> v;
  for (const Json* r : records) v.push_back(get(*r));
  return mean_of(v);
}

struct SweepInputs {
  std::vector<NeuronModel> neurons;
  std::vector<Mlp> nets;
  DatasetSplit data;
};

// The spec's files, read and checked against each other as simulate_network
// will check them.
SweepInputs read_inputs(const SweepSpec& spec) {
  validate_sweep(spec);
  SweepInputs in;
  for (const auto& path : spec.neurons) in.neurons.push_back({solvers::read_model_file(path), path});
  for (const auto& path : spec.nets) in.nets.push_back(load_network(path));
  in.data = load_data(spec.data);
  for (std::size_t i = 0; i < in.nets.size(); ++i) {
    const Mlp& net = in.nets[i];
    net.validate(spec.nets[i]);
    const std::size_t S = spiking_layer_count(net, spec.readout);
    if (in.neurons.size() != 1 && in.neurons.size() != S)
      throw InputError("neurons", fmt::format("{} models given; {} needs one for all spiking layers or {}",
                                              in.neurons.size(), spec.nets[i], S));
    simulation_subset(in.data.test, spec.limit, net.input_size(), net.output_size(), spec.subset);
  }
  if (in.data.train.size() == 0 && spec.scale == ScaleMode::Q99)
    throw InputError("data", "no training images, and the q99 scale takes the layer scales from the train split; "
                             "add training images or use the const scale");
  return in;
}

}  // namespace

std::size_t check_sweep_inputs(const SweepSpec& spec) {
  read_inputs(spec);
  return sweep_run_count(spec);
}

void validate_sweep(const SweepSpec& s) {
  if (s.nets.empty()) throw InputError("nets", "no network given");
  check_unique(s.nets, "nets");
  if (s.neurons.empty()) throw InputError("neurons", "no model file given");
  if (s.samplers.empty()) throw InputError("samplers", "no sampler given");
  std::vector<std::string> names;
  for (SamplerKind k : s.samplers) names.push_back(sampler_name(k));
  check_unique(names, "samplers");
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
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad("is not two whole numbers");
    return static_cast<std::size_t>(std::stoul(part));
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
  j["tau"] = s.taus;
  j["rate"] = s.rates;
  j["T"] = s.T;
  j["trials"] = s.trials;
  j["dt"] = s.dt;
  j["readout"] = readout_name(s.readout);
  j["scale"] = s.scale == ScaleMode::Q99 ? "q99" : "const";
  j["limit"] = s.limit;
  j["subset"] = s.subset.text;
  j["trace_weight"] = trace_weight_name(s.trace_weight);
  j["output_scale"] = s.output_scale == OutputScale::Logits ? "logits" : "activation";
  j["layer_alpha"] = s.layer_alpha;
  j["seed"] = s.seed;
  j["criterion_pp"] = s.criterion;
  return j;
}

Json run_sweep(const SweepSpec& spec, Shard shard, int threads,
               const std::function<void(std::size_t, std::size_t)>& progress) {
  const SweepInputs in = read_inputs(spec);
  const auto& [neurons, nets, data] = in;

  const std::size_t total = sweep_run_count(spec);
  std::vector<std::size_t> mine;
  for (std::size_t u = shard.index - 1; u < total; u += shard.count) mine.push_back(u);
  Json runs = Json::array();
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

    NetworkSimResult res;
    try {
      // The layer scales depend only on the net: computed at its first run.
      if (q99_of[run.net].empty() && spec.scale == ScaleMode::Q99 && data.train.size() > 0)
        q99_of[run.net] = layer_q99(nets[run.net], data.train, neurons, spec.readout, spec.output_scale);
      opt.q99 = q99_of[run.net];
      res = simulate_network(nets[run.net], data.train, data.test, neurons, opt);
    } catch (const InputError& e) {
      throw InputError(fmt::format("sweep run {} (net {}, sampler {}, tau {}, r {}, trial {}): {}", u,
                                   spec.nets[run.net], sampler_name(opt.snn.sampler), opt.snn.tau, opt.rate, run.trial,
                                   e.what()));
    }
    Json r;
    r["run"] = u;
    r["net"] = run.net;
    r["sampler"] = sampler_name(opt.snn.sampler);
    r["tau"] = opt.snn.tau;
    r["rate"] = opt.rate;
    r["trial"] = run.trial;
    r["test_images"] = res.samples;
    r["A_ANN"] = kPercent * res.acc_ann;
    r["A_MF"] = kPercent * res.acc_mf;
    Json layers = Json::array();
    for (std::size_t l = 0; l < res.alpha.size(); ++l)
      layers.push_back({{"q99", res.q99[l]}, {"alpha", res.alpha[l]}, {"outside_fit_domain", res.outside_fit_domain[l]}});
    r["layers"] = layers;
    Json windows = Json::array();
    for (const WindowResult& w : res.windows) {
      Json wl = Json::array();
      for (std::size_t l = 0; l < w.layer_spikes_per_neuron.size(); ++l)
        wl.push_back({{"spikes_per_neuron", w.layer_spikes_per_neuron[l]}, {"rate_rel_rmse", w.layer_rate_rel_rmse[l]}});
      windows.push_back({{"T", w.T},
                         {"A_SNN", kPercent * w.acc_snn[0]},
                         {"synops_per_sample", w.synops_mean},
                         {"spikes_per_neuron", w.spikes_per_neuron},
                         {"transitions_per_sample", w.transitions_per_sample},
                         {"tie_fraction", w.tie_fraction},
                         {"count_quantiles", w.count_quantiles},
                         {"silent_fraction", w.silent_fraction},
                         {"layers", wl}});
    }
    r["windows"] = windows;
    runs.push_back(std::move(r));
    if (progress) progress(k + 1, mine.size());
  }
  return runs;
}

Json sweep_part(const SweepSpec& spec, Shard shard, Json runs) {
  Json j;
  j["format"] = kPartFormat;
  j["version"] = kVersion;
  j["spec"] = sweep_spec_json(spec);
  j["shard"] = {{"index", shard.index}, {"count", shard.count}};
  j["runs"] = std::move(runs);
  return j;
}

Json sweep_document(const Json& spec, const Json& runs) {
  const auto& nets = spec.at("nets");
  const auto& samplers = spec.at("samplers");
  const auto& taus = spec.at("tau");
  const auto& rates = spec.at("rate");
  const auto& Ts = spec.at("T");
  const int trials = spec.at("trials").get<int>();
  const double criterion = spec.at("criterion_pp").get<double>();
  const std::size_t n_windows = Ts.size();
  const std::size_t expected = nets.size() * samplers.size() * taus.size() * rates.size() * static_cast<std::size_t>(trials);
  if (runs.size() != expected)
    throw InputError(fmt::format("sweep: {} run records for a grid of {} runs", runs.size(), expected));
  for (std::size_t u = 0; u < expected; ++u)
    if (runs.at(u).at("run").get<std::size_t>() != u)
      throw InputError(fmt::format("sweep: run record {} is numbered {}", u, runs.at(u).at("run").dump()));

  // Cells: (net, sampler, tau, r) x window, over the trials.
  Json cells = Json::array();
  // points[(sampler, tau, r, window)] -> the cells of each net
  std::map<std::vector<std::size_t>, std::vector<std::size_t>> point_cells;
  std::size_t u = 0;
  for (std::size_t ni = 0; ni < nets.size(); ++ni)
    for (std::size_t si = 0; si < samplers.size(); ++si)
      for (std::size_t ti = 0; ti < taus.size(); ++ti)
        for (std::size_t ri = 0; ri < rates.size(); ++ri) {
          std::vector<const Json*> recs;
          for (int t = 0; t < trials; ++t) recs.push_back(&runs.at(u++));
          const Json& first = *recs.front();
          const double a_ann = first.at("A_ANN").get<double>(), a_mf = first.at("A_MF").get<double>();
          for (std::size_t w = 0; w < n_windows; ++w) {
            std::vector<double> acc;
            for (const Json* r : recs) acc.push_back(r->at("windows").at(w).at("A_SNN").get<double>());
            const auto window_mean = [&](const char* key) {
              return mean_over(recs, [&](const Json& r) { return num(r.at("windows").at(w).at(key)); });
            };
            Json c;
            c["net"] = ni;
            c["sampler"] = samplers.at(si);
            c["tau"] = taus.at(ti);
            c["rate"] = rates.at(ri);
            c["T"] = Ts.at(w);
            c["A_ANN"] = a_ann;
            c["A_MF"] = a_mf;
            c["A_SNN_mean"] = mean_of(acc);
            c["A_SNN_sd"] = sd_of(acc);
            c["gap"] = a_ann - mean_of(acc);
            c["mean_field_mismatch"] = a_ann - a_mf;
            c["sampling_gap"] = a_mf - mean_of(acc);
            c["synops_per_sample"] = window_mean("synops_per_sample");
            c["spikes_per_neuron"] = window_mean("spikes_per_neuron");
            c["transitions_per_sample"] = window_mean("transitions_per_sample");
            c["tie_fraction"] = window_mean("tie_fraction");
            // Means over the trials of each quantile of the pooled counts.
            Json quantiles = Json::array();
            for (std::size_t q = 0; q < first.at("windows").at(w).at("count_quantiles").size(); ++q)
              quantiles.push_back(
                  mean_over(recs, [&](const Json& r) { return num(r.at("windows").at(w).at("count_quantiles").at(q)); }));
            c["count_quantiles"] = quantiles;
            c["silent_fraction"] = window_mean("silent_fraction");
            Json layers = Json::array();
            for (std::size_t l = 0; l < first.at("layers").size(); ++l) {
              const auto layer_mean = [&](const char* key) {
                return mean_over(recs, [&](const Json& r) { return num(r.at("windows").at(w).at("layers").at(l).at(key)); });
              };
              layers.push_back({{"spikes_per_neuron", layer_mean("spikes_per_neuron")},
                                {"rate_rel_rmse", layer_mean("rate_rel_rmse")},
                                {"outside_fit_domain", num(first.at("layers").at(l).at("outside_fit_domain"))}});
            }
            c["layers"] = layers;
            point_cells[{si, ti, ri, w}].push_back(cells.size());
            cells.push_back(std::move(c));
          }
        }

  // Points: (sampler, tau, r, T) over the nets.
  Json points = Json::array();
  std::vector<std::vector<std::size_t>> sampler_points(samplers.size());
  for (const auto& entry : point_cells) {
    const std::vector<std::size_t>& key = entry.first;
    const std::vector<std::size_t>& ids = entry.second;  // a named variable: clang 14 lambdas cannot capture bindings
    const auto stat = [&](const char* name) {
      std::vector<double> v;
      for (std::size_t id : ids) v.push_back(num(cells.at(id).at(name)));
      return std::make_pair(mean_of(v), sd_of(v));
    };
    Json p;
    p["sampler"] = samplers.at(key[0]);
    p["tau"] = taus.at(key[1]);
    p["rate"] = rates.at(key[2]);
    p["T"] = Ts.at(key[3]);
    p["nets"] = ids.size();
    for (const char* name : {"A_ANN", "A_MF"}) p[name] = stat(name).first;
    p["A_SNN"] = stat("A_SNN_mean").first;
    for (const char* name : {"gap", "synops_per_sample", "transitions_per_sample", "spikes_per_neuron"}) {
      const auto [m, s] = stat(name);
      p[std::string(name) + "_mean"] = m;
      p[std::string(name) + "_sd"] = s;
    }
    sampler_points[key[0]].push_back(points.size());
    points.push_back(std::move(p));
  }

  // Frontiers and the cheapest point under the criterion, per sampler.
  Json frontier = Json::object(), min_cost = Json::object();
  for (std::size_t si = 0; si < samplers.size(); ++si) {
    const auto& ids = sampler_points[si];
    std::vector<double> gap, synops, transitions;
    for (std::size_t id : ids) {
      gap.push_back(num(points.at(id).at("gap_mean")));
      synops.push_back(num(points.at(id).at("synops_per_sample_mean")));
      transitions.push_back(num(points.at(id).at("transitions_per_sample_mean")));
    }
    const auto to_points = [&](const std::vector<std::size_t>& local) {
      Json a = Json::array();
      for (std::size_t k : local) a.push_back(ids[k]);
      return a;
    };
    const auto cheapest = [&](const std::vector<double>& cost) {
      const auto k = cheapest_below(cost, gap, criterion);
      return k ? Json(ids[*k]) : Json(nullptr);
    };
    const std::string name = samplers.at(si).get<std::string>();
    frontier[name] = {{"synops", to_points(pareto_frontier(synops, gap))},
                      {"transitions", to_points(pareto_frontier(transitions, gap))}};
    min_cost[name] = {{"synops", cheapest(synops)}, {"transitions", cheapest(transitions)}};
  }

  Json doc;
  doc["format"] = kDocumentFormat;
  doc["version"] = kVersion;
  doc["units"] = "accuracies in percent, gaps in percentage points, costs per test image";
  doc["spec"] = spec;
  doc["points"] = points;
  doc["frontier"] = frontier;
  doc["min_cost"] = min_cost;
  doc["cells"] = cells;
  doc["runs"] = runs;
  return doc;
}

namespace {

Json merge_parts(const std::vector<std::pair<std::string, Json>>& parts) {
  if (parts.empty()) throw InputError("sweep merge: no parts given");
  const auto field = [](const std::string& file, const Json& j, const char* key) -> const Json& {
    if (!j.is_object() || !j.contains(key)) throw InputError(fmt::format("{}: not a sweep part (no \"{}\")", file, key));
    return j.at(key);
  };
  const std::string& first_file = parts.front().first;
  const Json& spec = field(first_file, parts.front().second, "spec");
  std::size_t count = 0;
  std::map<std::size_t, std::string> seen;  // shard index -> file
  std::vector<const Json*> by_run;
  for (const auto& [file, part] : parts) {
    if (field(file, part, "format") != kPartFormat)
      throw InputError(fmt::format("{}: not a sweep part (format is not \"{}\")", file, kPartFormat));
    if (field(file, part, "version") != kVersion)
      throw InputError(fmt::format("{}: sweep part version {} (this tool reads {})", file,
                                   field(file, part, "version").dump(), kVersion));
    // Compared as unordered JSON: a part whose keys another tool reordered is still the same sweep.
    if (nlohmann::json::parse(field(file, part, "spec").dump()) != nlohmann::json::parse(spec.dump()))
      throw InputError(fmt::format("{}: a part of another sweep than {} (the specs differ)", file, first_file));
    const Json& sh = field(file, part, "shard");
    Shard s;
    try {
      s = {sh.at("index").get<std::size_t>(), sh.at("count").get<std::size_t>()};
    } catch (const nlohmann::json::exception&) {
      throw InputError(fmt::format("{}: \"shard\" is not {{\"index\": i, \"count\": n}}", file));
    }
    if (s.count == 0 || s.index == 0 || s.index > s.count)
      throw InputError(fmt::format("{}: shard {}/{} is not i/n with 1 <= i <= n", file, s.index, s.count));
    if (count == 0) {
      count = s.count;
      SweepSpec dims;  // only the list sizes matter for the run count
      dims.nets.resize(spec.at("nets").size());
      dims.samplers.resize(spec.at("samplers").size());
      dims.taus.resize(spec.at("tau").size());
      dims.rates.resize(spec.at("rate").size());
      dims.trials = spec.at("trials").get<int>();
      by_run.assign(sweep_run_count(dims), nullptr);
    } else if (s.count != count) {
      throw InputError(fmt::format("{}: shard {}/{}, but {} is one of {} parts", file, s.index, s.count, first_file,
                                   count));
    }
    if (const auto it = seen.find(s.index); it != seen.end())
      throw InputError(fmt::format("{}: shard {}/{} is given twice (also {})", file, s.index, s.count, it->second));
    seen[s.index] = file;
    for (const Json& r : field(file, part, "runs")) {
      const std::size_t u = r.at("run").get<std::size_t>();
      if (u >= by_run.size() || u % count != s.index - 1)
        throw InputError(fmt::format("{}: run {} does not belong to shard {}/{}", file, u, s.index, count));
      if (by_run[u]) throw InputError(fmt::format("{}: run {} appears twice", file, u));
      by_run[u] = &r;
    }
  }
  std::string missing;
  for (std::size_t i = 1; i <= count; ++i)
    if (!seen.count(i)) missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, count);
  if (!missing.empty()) throw InputError("sweep merge: missing shard(s) " + missing);
  Json runs = Json::array();
  for (std::size_t u = 0; u < by_run.size(); ++u) {
    if (!by_run[u]) throw InputError(fmt::format("sweep merge: run {} is in no part", u));
    runs.push_back(*by_run[u]);
  }
  return sweep_document(spec, runs);
}

}  // namespace

Json read_sweep_part(const std::string& path) {
  // A part holds a few KB per run (its windows and layers).
  static constexpr solvers::InputKind kSweepPartKind{"sweep part", 256 * solvers::kMiB,
                                                     "a sweep part holds a few KB per run"};
  const std::string text = solvers::read_input_file(path, kSweepPartKind);
  return solvers::parse_json_strict<Json>(text, path);
}

Json merge_sweep_parts(const std::vector<std::pair<std::string, Json>>& parts) {
  try {
    return merge_parts(parts);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("sweep merge: a part is malformed ({})", e.what()));
  }
}

}  // namespace ctmc::sim
