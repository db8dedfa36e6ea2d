#include "ctmc/sim/studies/sweep_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ctmc/core/errors.hpp"
#include "sweep_format.hpp"

namespace ctmc::sim {
namespace {

using Json = nlohmann::ordered_json;

// A number of the file; null stands for NaN (nlohmann writes NaN so).
double number(const Json& j) { return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>(); }

std::vector<double> numbers(const Json& j) {
  std::vector<double> v;
  for (const Json& x : j) v.push_back(number(x));
  return v;
}

SamplerKind sampler_of(const Json& j) { return parse_sampler(j.get<std::string>(), "sampler"); }

Json index_list(const std::vector<std::size_t>& ids) {
  Json a = Json::array();
  for (std::size_t id : ids) a.push_back(id);
  return a;
}

template <class T>
Json array_of(const std::vector<T>& items) {
  Json a = Json::array();
  for (const T& x : items) a.push_back(Json(x));
  return a;
}

// A paired tally of a run over its n test images, in the file [n10, n01].
Json paired_json(const solvers::PairedCounts& c) { return Json::array({c.n10, c.n01}); }

solvers::PairedCounts paired_of(const Json& j, std::size_t n, const char* key) {
  if (!j.is_array() || j.size() != 2)
    throw InputError(key, "expected [n10, n01]: the discordant images of a paired comparison");
  solvers::PairedCounts c{j.at(0).get<std::uint64_t>(), j.at(1).get<std::uint64_t>(), n};
  if (c.n10 + c.n01 > n)
    throw InputError(key, fmt::format("{} + {} discordant images of a run on {} test images", c.n10, c.n01, n));
  return c;
}

RunWindow window_of(const Json& j, std::size_t n) {
  RunWindow w;
  w.T = number(j.at("T"));
  w.a_snn = number(j.at("A_SNN"));
  w.synops_per_sample = number(j.at("synops_per_sample"));
  w.spikes_per_neuron = number(j.at("spikes_per_neuron"));
  w.transitions_per_sample = number(j.at("transitions_per_sample"));
  w.tie_fraction = number(j.at("tie_fraction"));
  w.count_quantiles = numbers(j.at("count_quantiles"));
  w.silent_fraction = number(j.at("silent_fraction"));
  for (const Json& l : j.at("layers"))
    w.layers.push_back({number(l.at("spikes_per_neuron")), number(l.at("rate_rel_rmse"))});
  w.synops_sd = number(j.at("synops_sd"));
  w.transitions_sd = number(j.at("transitions_sd"));
  w.ann_vs_snn = paired_of(j.at("ann_vs_snn"), n, "ann_vs_snn");
  w.mf_vs_snn = paired_of(j.at("mf_vs_snn"), n, "mf_vs_snn");
  return w;
}

Json window_json(const RunWindow& w) {
  Json layers = Json::array();
  for (const RunWindowLayer& l : w.layers)
    layers.push_back({{"spikes_per_neuron", l.spikes_per_neuron}, {"rate_rel_rmse", l.rate_rel_rmse}});
  return {{"T", w.T},
          {"A_SNN", w.a_snn},
          {"synops_per_sample", w.synops_per_sample},
          {"spikes_per_neuron", w.spikes_per_neuron},
          {"transitions_per_sample", w.transitions_per_sample},
          {"tie_fraction", w.tie_fraction},
          {"count_quantiles", w.count_quantiles},
          {"silent_fraction", w.silent_fraction},
          {"layers", layers},
          {"synops_sd", w.synops_sd},
          {"transitions_sd", w.transitions_sd},
          {"ann_vs_snn", paired_json(w.ann_vs_snn)},
          {"mf_vs_snn", paired_json(w.mf_vs_snn)}};
}

SweepCell cell_of(const Json& j) {
  SweepCell c;
  c.net = j.at("net").get<std::size_t>();
  c.sampler = sampler_of(j.at("sampler"));
  c.tau = number(j.at("tau"));
  c.rate = number(j.at("rate"));
  c.T = number(j.at("T"));
  c.a_ann = number(j.at("A_ANN"));
  c.a_mf = number(j.at("A_MF"));
  c.a_snn_mean = number(j.at("A_SNN_mean"));
  c.a_snn_sd = number(j.at("A_SNN_sd"));
  c.gap = number(j.at("gap"));
  c.mean_field_mismatch = number(j.at("mean_field_mismatch"));
  c.sampling_gap = number(j.at("sampling_gap"));
  c.synops_per_sample = number(j.at("synops_per_sample"));
  c.spikes_per_neuron = number(j.at("spikes_per_neuron"));
  c.transitions_per_sample = number(j.at("transitions_per_sample"));
  c.tie_fraction = number(j.at("tie_fraction"));
  c.count_quantiles = numbers(j.at("count_quantiles"));
  c.silent_fraction = number(j.at("silent_fraction"));
  for (const Json& l : j.at("layers"))
    c.layers.push_back(
        {number(l.at("spikes_per_neuron")), number(l.at("rate_rel_rmse")), number(l.at("outside_fit_domain"))});
  return c;
}

SweepPoint point_of(const Json& j) {
  SweepPoint p;
  p.sampler = sampler_of(j.at("sampler"));
  p.tau = number(j.at("tau"));
  p.rate = number(j.at("rate"));
  p.T = number(j.at("T"));
  p.nets = j.at("nets").get<std::size_t>();
  p.a_ann = number(j.at("A_ANN"));
  p.a_mf = number(j.at("A_MF"));
  p.a_snn = number(j.at("A_SNN"));
  p.gap_mean = number(j.at("gap_mean"));
  p.gap_sd = number(j.at("gap_sd"));
  p.synops_per_sample_mean = number(j.at("synops_per_sample_mean"));
  p.synops_per_sample_sd = number(j.at("synops_per_sample_sd"));
  p.transitions_per_sample_mean = number(j.at("transitions_per_sample_mean"));
  p.transitions_per_sample_sd = number(j.at("transitions_per_sample_sd"));
  p.spikes_per_neuron_mean = number(j.at("spikes_per_neuron_mean"));
  p.spikes_per_neuron_sd = number(j.at("spikes_per_neuron_sd"));
  return p;
}

std::vector<std::size_t> index_list_of(const Json& j) {
  std::vector<std::size_t> v;
  for (const Json& x : j) v.push_back(x.get<std::size_t>());
  return v;
}

std::optional<std::size_t> optional_index(const Json& j) {
  return j.is_null() ? std::nullopt : std::optional<std::size_t>(j.get<std::size_t>());
}

// The document's fields after its format and spec.
void read_results(const Json& j, SweepDocument& d) {
  for (const Json& p : j.at("points")) d.points.push_back(point_of(p));
  const Json& frontier = j.at("frontier");
  if (!frontier.is_object()) throw InputError("frontier", "expected an object");
  for (const auto& item : frontier.items())
    d.frontier.push_back({parse_sampler(item.key(), "frontier"), index_list_of(item.value().at("synops")),
                          index_list_of(item.value().at("transitions"))});
  const Json& min_cost = j.at("min_cost");
  if (!min_cost.is_object()) throw InputError("min_cost", "expected an object");
  for (const auto& item : min_cost.items())
    d.min_cost.push_back({parse_sampler(item.key(), "min_cost"), optional_index(item.value().at("synops")),
                          optional_index(item.value().at("transitions"))});
  for (const Json& c : j.at("cells")) d.cells.push_back(cell_of(c));
  for (const Json& r : j.at("runs")) d.runs.push_back(r.get<RunRecord>());
}

}  // namespace

void to_json(Json& j, const RunRecord& r) {
  j = Json();
  j["run"] = r.run;
  j["net"] = r.net;
  j["sampler"] = sampler_name(r.sampler);
  j["tau"] = r.tau;
  j["rate"] = r.rate;
  j["trial"] = r.trial;
  j["test_images"] = r.test_images;
  j["A_ANN"] = r.a_ann;
  j["A_MF"] = r.a_mf;
  j["ann_vs_mf"] = paired_json(r.ann_vs_mf);
  Json layers = Json::array();
  for (const RunLayer& l : r.layers)
    layers.push_back({{"q99", l.q99}, {"alpha", l.alpha}, {"outside_fit_domain", l.outside_fit_domain}});
  j["layers"] = layers;
  Json windows = Json::array();
  for (const RunWindow& w : r.windows) windows.push_back(window_json(w));
  j["windows"] = windows;
}

void from_json(const Json& j, RunRecord& r) {
  r = RunRecord();
  r.run = j.at("run").get<std::size_t>();
  r.net = j.at("net").get<std::size_t>();
  r.sampler = sampler_of(j.at("sampler"));
  r.tau = number(j.at("tau"));
  r.rate = number(j.at("rate"));
  r.trial = j.at("trial").get<int>();
  r.test_images = j.at("test_images").get<std::size_t>();
  r.a_ann = number(j.at("A_ANN"));
  r.a_mf = number(j.at("A_MF"));
  r.ann_vs_mf = paired_of(j.at("ann_vs_mf"), r.test_images, "ann_vs_mf");
  for (const Json& l : j.at("layers"))
    r.layers.push_back({number(l.at("q99")), number(l.at("alpha")), number(l.at("outside_fit_domain"))});
  for (const Json& w : j.at("windows")) r.windows.push_back(window_of(w, r.test_images));
}

void to_json(Json& j, const SweepCell& c) {
  j = Json();
  j["net"] = c.net;
  j["sampler"] = sampler_name(c.sampler);
  j["tau"] = c.tau;
  j["rate"] = c.rate;
  j["T"] = c.T;
  j["A_ANN"] = c.a_ann;
  j["A_MF"] = c.a_mf;
  j["A_SNN_mean"] = c.a_snn_mean;
  j["A_SNN_sd"] = c.a_snn_sd;
  j["gap"] = c.gap;
  j["mean_field_mismatch"] = c.mean_field_mismatch;
  j["sampling_gap"] = c.sampling_gap;
  j["synops_per_sample"] = c.synops_per_sample;
  j["spikes_per_neuron"] = c.spikes_per_neuron;
  j["transitions_per_sample"] = c.transitions_per_sample;
  j["tie_fraction"] = c.tie_fraction;
  Json quantiles = Json::array();
  for (double q : c.count_quantiles) quantiles.push_back(q);
  j["count_quantiles"] = quantiles;
  j["silent_fraction"] = c.silent_fraction;
  Json layers = Json::array();
  for (const CellLayer& l : c.layers)
    layers.push_back({{"spikes_per_neuron", l.spikes_per_neuron},
                      {"rate_rel_rmse", l.rate_rel_rmse},
                      {"outside_fit_domain", l.outside_fit_domain}});
  j["layers"] = layers;
}

void to_json(Json& j, const SweepPoint& p) {
  j = Json();
  j["sampler"] = sampler_name(p.sampler);
  j["tau"] = p.tau;
  j["rate"] = p.rate;
  j["T"] = p.T;
  j["nets"] = p.nets;
  j["A_ANN"] = p.a_ann;
  j["A_MF"] = p.a_mf;
  j["A_SNN"] = p.a_snn;
  j["gap_mean"] = p.gap_mean;
  j["gap_sd"] = p.gap_sd;
  j["synops_per_sample_mean"] = p.synops_per_sample_mean;
  j["synops_per_sample_sd"] = p.synops_per_sample_sd;
  j["transitions_per_sample_mean"] = p.transitions_per_sample_mean;
  j["transitions_per_sample_sd"] = p.transitions_per_sample_sd;
  j["spikes_per_neuron_mean"] = p.spikes_per_neuron_mean;
  j["spikes_per_neuron_sd"] = p.spikes_per_neuron_sd;
}

void to_json(Json& j, const SweepDocument& d) {
  Json frontier = Json::object(), min_cost = Json::object();
  for (const SamplerFrontier& f : d.frontier)
    frontier[sampler_name(f.sampler)] = {{"synops", index_list(f.synops)}, {"transitions", index_list(f.transitions)}};
  const auto id = [](const std::optional<std::size_t>& k) { return k ? Json(*k) : Json(nullptr); };
  for (const SamplerMinCost& m : d.min_cost)
    min_cost[sampler_name(m.sampler)] = {{"synops", id(m.synops)}, {"transitions", id(m.transitions)}};
  j = Json();
  j["format"] = kSweepDocumentFormat;
  j["version"] = kSweepFormatVersion;
  j["units"] = "accuracies in percent, gaps in percentage points, costs per test image";
  j["spec"] = d.recorded_spec;
  j["points"] = array_of(d.points);
  j["frontier"] = frontier;
  j["min_cost"] = min_cost;
  j["cells"] = array_of(d.cells);
  j["runs"] = array_of(d.runs);
}

void to_json(Json& j, const SweepPart& p) {
  j = Json();
  j["format"] = kSweepPartFormat;
  j["version"] = kSweepFormatVersion;
  j["spec"] = sweep_spec_json(p.spec);
  j["shard"] = {{"index", p.shard.index}, {"count", p.shard.count}};
  j["runs"] = array_of(p.runs);
}

SweepDocument sweep_document_from_json(const Json& j, const std::string& file) {
  const auto refuse = [&](const std::string& why) {
    return InputError(fmt::format("{}: not a sweep document ({})", file, why));
  };
  if (!j.is_object() || !j.contains("format") || j.at("format") != kSweepDocumentFormat)
    throw refuse(fmt::format("\"format\" is not \"{}\"", kSweepDocumentFormat));
  if (j.contains("version") && j.at("version") != kSweepFormatVersion)
    throw refuse(fmt::format("version {}; this tool reads {}", j.at("version").dump(), kSweepFormatVersion));
  if (!j.contains("spec")) throw refuse("no \"spec\"");
  SweepDocument d;
  d.spec = read_sweep_spec(j.at("spec"), file);
  d.recorded_spec = j.at("spec");
  try {
    read_results(j, d);
  } catch (const nlohmann::json::exception& e) {
    throw refuse(e.what());
  } catch (const InputError& e) {
    throw refuse(e.what());
  }
  return d;
}

const SweepPoint* SweepDocument::min_cost_point(SamplerKind sampler, SweepCost cost) const {
  for (const SamplerMinCost& m : min_cost)
    if (m.sampler == sampler) return m.by(cost) ? &points.at(*m.by(cost)) : nullptr;
  return nullptr;
}

const SweepPoint* SweepDocument::find_point(SamplerKind sampler, double tau, double rate, double T) const {
  for (const SweepPoint& p : points)
    if (p.sampler == sampler && p.tau == tau && p.rate == rate && p.T == T) return &p;
  return nullptr;
}

std::vector<const SweepPoint*> SweepDocument::frontier_points(SamplerKind sampler, SweepCost cost) const {
  std::vector<const SweepPoint*> out;
  for (const SamplerFrontier& f : frontier)
    if (f.sampler == sampler)
      for (std::size_t id : f.by(cost)) out.push_back(&points.at(id));
  return out;
}

std::vector<const SweepCell*> SweepDocument::cells_of(const SweepPoint& p) const {
  std::vector<const SweepCell*> out;
  for (const SweepCell& c : cells)
    if (c.sampler == p.sampler && c.tau == p.tau && c.rate == p.rate && c.T == p.T) out.push_back(&c);
  return out;
}

}  // namespace ctmc::sim
