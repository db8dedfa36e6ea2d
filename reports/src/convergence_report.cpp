// Report "convergence": the paper's Appendix C figure (single-neuron
// finite-time convergence, fig:single-neuron-convergence). The empirical rate
// N(T)/T of exact Gillespie paths (sim/neurons/ssa.hpp) is plotted against T for a
// three-state sigmoid neuron and a two-state ReLU neuron at several inputs H,
// with the band mean +- sd over trials, beside the exact envelope
// E[N(T)]/T +- sqrt(Var N(T))/T (Van Loan block exponential,
// solvers/counting.hpp) and the stationary rate F(H) (paper eq. 2 / GTH).
//
// Every trial starts at rest in state B, so the mean approaches F(H) with a
// transient bias O(1/T) and the spread shrinks like sqrt(v / T), v the
// asymptotic variance rate. Checks: at every (neuron, H, T) with enough
// expected spikes, the trial mean of N(T) agrees with the exact E[N(T)], and
// at the largest T the trial variance agrees with the exact Var N(T), each at
// |z| < 5 (about 230 comparisons: family-wise false-alarm rate about 1.3e-4).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ctmc/activations/activation.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/sim/neurons/ssa.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/det_math.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/solvers/stationary.hpp"

#ifndef CTMC_SOURCE_DIR
#define CTMC_SOURCE_DIR "."
#endif

namespace ctmc::reports {
namespace {
namespace fs = std::filesystem;

constexpr std::size_t kTrials = 1000;
constexpr int kGridPerDecade = 6;       // T = 10^(-1 + k/6), k = 0..24: 0.1 .. 1000
constexpr int kGridPoints = 4 * kGridPerDecade + 1;
constexpr double kZ = 5.0;              // two-sided 5.7e-7 per comparison
constexpr double kMinExpectedSpikes = 50;  // below this (over all trials) the normal approximation is poor
const std::vector<double> kTableTimes = {1, 10, 100, 1000};
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

struct Neuron {
  std::string key, label, activation, family, fit_file, fallback_file;
  std::vector<std::string> inputs;  // H values, exact text
  double lo = 0, hi = 0;            // target domain (for the MSE shown)
  std::optional<double> paper_mse;  // the paper's fit MSE for this target (Fig. 2 caption)
  // Filled by load():
  solvers::Model model;
  std::string model_path, provenance;
};

std::vector<Neuron> neurons() {
  return {
      {"sigmoid", "three-state sigmoid neuron", "sigmoid", "three-state", "model_sigmoid_three-state.json",
       "sigmoid_three_state.json", {"-1", "0", "2", "5"}, -6, 6, 1.1e-3, {}, {}, {}},
      {"relu", "two-state ReLU neuron", "relu", "two-state", "model_relu_two-state.json", "relu_two_state.json",
       {"0.5", "1", "2", "4"}, -1, 5, 2.4e-3, {}, {}, {}},
  };
}

// A fitted neuron from the fits report when one exists (`report all` runs it
// first), else the hand-chosen model committed under reports/models/.
void load(Neuron& n, const ReportContext& ctx) {
  fs::path fitted = fs::path(ctx.out_root) / "fits" / n.fit_file;
  if (fs::exists(fitted)) {
    n.model_path = fitted.string();
    // Relative to this report's folder, so that the generated folders can be
    // moved or published together.
    n.provenance = fmt::format("fitted by `ctmc-snn report fits` (../fits/{})", n.fit_file);
  } else {
    n.model_path = (fs::path(CTMC_SOURCE_DIR) / "reports" / "models" / n.fallback_file).string();
    n.provenance = fmt::format("hand-chosen parameters, reports/models/{} (no fit output found under {})",
                               n.fallback_file, md_code(ctx.out_root + "/fits/"));
  }
  n.model = solvers::read_model_file(n.model_path);
}

std::size_t rest_state(const solvers::Model& m) {
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m.states[i] == "B") return i;
  return 0;
}

// Mean squared error of the stationary flux against the target on a
// 401-point uniform grid of the domain (as in the fits report).
double flux_mse(const Neuron& n) {
  const auto act = activations::parse_activation(n.activation);
  double sum = 0;
  const int m = 401;
  for (int i = 0; i < m; ++i) {
    // Exact grid point lo + (hi - lo) i / 400, so the model is evaluated at a rational H.
    solvers::Rational h = solvers::Rational(static_cast<long>(n.lo)) +
                          solvers::Rational(static_cast<long>((n.hi - n.lo) * i), 400);
    double f = solvers::solve_stationary<double>(n.model, h, solvers::Method::Auto, n.model_path).flux;
    double e = f - act.eval(solvers::to_double(h));
    sum += e * e;
  }
  return sum / m;
}

struct Point {
  double T, emp_mean, emp_sd, exact_mean, exact_sd, z;
  bool tested;
};

struct Curve {
  std::string h_text;
  double flux = 0, variance_rate = 0;
  std::vector<Point> points;
  double z_var_last = 0;
};

Curve simulate(const Neuron& n, std::size_t h_index, std::size_t neuron_index, const ReportContext& ctx,
               ReportWriter& w) {
  Curve c;
  c.h_text = n.inputs[h_index];
  const auto H = solvers::parse_input_value(c.h_text, "convergence H");
  const auto asym = solvers::asymptotic_counting<double>(n.model, H, n.model_path);
  c.flux = asym.rate;
  c.variance_rate = asym.variance_rate;

  sim::SsaOptions opt;
  for (int k = 0; k < kGridPoints; ++k) opt.times.push_back(detmath::pow(10.0, -1.0 + double(k) / kGridPerDecade));
  opt.trials = kTrials;
  // One independent stream family per (neuron, H), all derived from --seed.
  opt.seed = ctmc::stream_seed(ctx.seed, neuron_index, h_index);
  opt.threads = ctx.threads;
  opt.start = sim::StartMode::State;
  opt.start_state = rest_state(n.model);
  opt.occupancy = false;
  const auto run = sim::simulate_neuron(n.model, H, opt, n.model_path);

  for (std::size_t k = 0; k < opt.times.size(); ++k) {
    const double T = opt.times[k];
    const auto st = sim::count_stats(run.counts[k]);
    const auto ex = solvers::counting_moments<double>(n.model, H, run.initial, T, n.model_path);
    Point p{T, st.mean / T, std::sqrt(st.variance) / T, ex.mean / T, std::sqrt(std::max(0.0, ex.variance)) / T,
            sim::z_score(st.mean, ex.mean, std::sqrt(std::max(0.0, ex.variance) / kTrials)), false};
    // The exact variance gives the standard error of the mean (no estimation
    // noise in the denominator); tested only with enough expected spikes.
    p.tested = ex.mean * kTrials >= kMinExpectedSpikes;
    if (p.tested)
      w.check(fmt::format("{} H={} T={}: trial mean of N(T) vs exact E[N(T)]", n.key, c.h_text, fmt_g(T, 4)),
              std::abs(p.z) < kZ, fmt::format("z = {:.2f}", p.z));
    c.points.push_back(p);
    if (k + 1 == opt.times.size()) {
      c.z_var_last = sim::z_score(st.variance, ex.variance, st.se_variance);
      w.check(fmt::format("{} H={} T={}: trial variance of N(T) vs exact Var N(T)", n.key, c.h_text, fmt_g(T, 4)),
              std::abs(c.z_var_last) < kZ, fmt::format("z = {:.2f}", c.z_var_last));
    }
  }
  return c;
}

void plot_neuron(ReportWriter& w, const Neuron& n, const std::vector<Curve>& curves) {
  Plot p;
  p.name = "convergence_" + n.key;
  p.title = fmt::format(
      "{}: empirical rate N(T)/T vs T ({} trials from state B)\nband: trials mean +- sd; solid: trial mean; "
      "dashed: exact E[N(T)]/T; dotted: exact +- sd; dash-dot: stationary rate F(H)",
      n.label, kTrials);
  p.xlabel = "T";
  p.ylabel = "N(T)/T";
  p.logx = true;
  p.key = "top right";
  p.width = 980;
  double fmax = 0;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const auto& c = curves[i];
    const std::string col = kColors[i % 6];
    fmax = std::max(fmax, c.flux);
    Series band, mean, exact, up, down, stat;
    for (const auto& q : c.points) {
      band.x.push_back(q.T), band.y.push_back(q.emp_mean);
      band.lo.push_back(q.emp_mean - q.emp_sd), band.hi.push_back(q.emp_mean + q.emp_sd);
      mean.x.push_back(q.T), mean.y.push_back(q.emp_mean);
      exact.x.push_back(q.T), exact.y.push_back(q.exact_mean);
      up.x.push_back(q.T), up.y.push_back(q.exact_mean + q.exact_sd);
      down.x.push_back(q.T), down.y.push_back(q.exact_mean - q.exact_sd);
    }
    stat.x = {c.points.front().T, c.points.back().T};
    stat.y = {c.flux, c.flux};
    // One key entry per input; the line styles are explained in the title.
    band.title = fmt::format("H = {} (F = {})", c.h_text, fmt_g(c.flux, 4));
    band.style = "filledcurves";
    band.extra = fmt::format("lc rgb '{}' fs transparent solid 0.18 noborder", col);
    mean.extra = fmt::format("lc rgb '{}' lw 2", col);
    exact.extra = fmt::format("lc rgb '{}' lw 1 dt 2", col);
    up.extra = down.extra = fmt::format("lc rgb '{}' lw 1 dt 3", col);
    stat.extra = fmt::format("lc rgb '{}' lw 1 dt 4", col);
    for (auto* s : {&band, &mean, &exact, &up, &down, &stat}) p.series.push_back(*s);
  }
  p.extra_commands.push_back(fmt::format("set yrange [{}:{}]", -0.25 * fmax, 2.5 * fmax));
  w.plot(p);
}

int run(const ReportContext& ctx) {
  ReportWriter w(ctx, "convergence", "Single-neuron finite-time convergence (paper Appendix C)");
  auto ns = neurons();
  for (auto& n : ns) load(n, ctx);

  w.paragraph(
      "Reproduces the paper's Appendix C figure (fig:single-neuron-convergence): the empirical firing rate "
      "N(T)/T of a single CTMC neuron at a fixed input H approaches the stationary rate F(H) (paper eq. 2) as the "
      "window T grows. Paths are simulated exactly by Gillespie's direct method (`sim/neurons/ssa.hpp`, no time step); "
      "every trial starts at rest in state B, so the trial mean carries a transient bias that decays like 1/T and "
      "the spread across trials shrinks like sqrt(v/T), v the asymptotic variance rate. Beside the trials: the exact "
      "E[N(T)]/T +- sqrt(Var N(T))/T from the Van Loan block exponential (`solvers/counting.hpp`) and F(H) from GTH.");
  w.paragraph(fmt::format(
      "{} trials per input, T on a log grid of {} points from 0.1 to 1000 (all checkpoints on the same paths), "
      "seed {} (the paths of neuron i at input j use streams derived from (seed, i, j), so the figures do not depend "
      "on --threads). The paper's figure publishes no numerical values, so the only paper column is the MSE of the "
      "paper's own fits (Fig. 2 caption), shown for orientation: our neurons are not the paper's.",
      kTrials, kGridPoints, ctx.seed));

  w.heading("Neurons");
  Table nt{{"neuron", "model", "source", "target domain", "MSE vs target (401 pts)", kPaperColumn}, {}};
  for (const auto& n : ns)
    nt.rows.push_back({n.label, n.family, n.provenance, fmt::format("[{}, {}]", n.lo, n.hi), fmt_sci(flux_mse(n), 2),
                       paper_cell(n.paper_mse, 2)});
  w.table(nt, "neurons.csv");
  for (const auto& n : ns) {
    w.write_json("model_" + n.key + ".json", solvers::model_to_json(n.model));
  }
  w.paragraph("The models used are copied into this folder (`model_sigmoid.json`, `model_relu.json`).");

  Table all{{"neuron", "H", "T", "trials", "empirical_rate_mean", "empirical_rate_sd", "exact_rate_mean",
             "exact_rate_sd", "stationary_rate", "z_mean", "tested"},
            {}};
  nlohmann::ordered_json summary = nlohmann::ordered_json::array();
  for (std::size_t ni = 0; ni < ns.size(); ++ni) {
    const auto& n = ns[ni];
    std::vector<Curve> curves;
    for (std::size_t hi = 0; hi < n.inputs.size(); ++hi) curves.push_back(simulate(n, hi, ni, ctx, w));

    w.heading(fmt::format("{} ({})", n.label, n.family));
    plot_neuron(w, n, curves);
    Table t{{"H", "F(H)", "v = lim Var N/T", "T", "N(T)/T trials (mean +- sd)", "exact E[N(T)]/T +- sd",
             "(E[N(T)]/T - F)/F", "z (mean)"},
            {}};
    for (const auto& c : curves) {
      for (const auto& q : c.points) {
        all.rows.push_back({n.key, c.h_text, fmt_exact(q.T), fmt_int(kTrials), fmt_exact(q.emp_mean),
                            fmt_exact(q.emp_sd), fmt_exact(q.exact_mean), fmt_exact(q.exact_sd), fmt_exact(c.flux),
                            fmt_exact(q.z), q.tested ? "yes" : "no"});
        bool shown = false;
        for (double tt : kTableTimes) shown |= std::abs(q.T - tt) < 1e-9 * tt;
        if (!shown) continue;
        t.rows.push_back({c.h_text, fmt_g(c.flux, 5), fmt_g(c.variance_rate, 4), fmt_g(q.T, 4),
                          fmt::format("{} +- {}", fmt_g(q.emp_mean, 4), fmt_g(q.emp_sd, 3)),
                          fmt::format("{} +- {}", fmt_g(q.exact_mean, 4), fmt_g(q.exact_sd, 3)),
                          fmt_sci(c.flux > 0 ? (q.exact_mean - c.flux) / c.flux : NAN, 2),
                          q.tested ? fmt_fix(q.z, 2) : std::string("(too few spikes)")});
      }
      nlohmann::ordered_json j;
      j["neuron"] = n.key;
      j["H"] = c.h_text;
      j["stationary_rate"] = c.flux;
      j["variance_rate"] = c.variance_rate;
      j["rate_at_T_max"] = {{"T", c.points.back().T},
                            {"empirical_mean", c.points.back().emp_mean},
                            {"empirical_sd", c.points.back().emp_sd},
                            {"exact_mean", c.points.back().exact_mean},
                            {"exact_sd", c.points.back().exact_sd}};
      j["z_variance_at_T_max"] = c.z_var_last;
      summary.push_back(j);
    }
    w.table(t);
  }
  w.paragraph(
      "Reading the figure: the shaded band is the trial mean +- one trial sd, the dotted lines the exact "
      "mean +- sd; they coincide up to sampling noise, and both narrow like 1/sqrt(T) around the dashed stationary "
      "rate. The relative bias of the exact mean, (E[N(T)]/T - F)/F, comes from starting at rest and falls like 1/T. "
      "Finite-T decoding error in networks (DESIGN.md section 7) is this spread, seen through the layers.");
  w.write_csv("convergence.csv", all);
  w.write_json("summary.json",
               nlohmann::ordered_json{{"trials", kTrials}, {"seed", ctx.seed}, {"z_threshold", kZ},
                                      {"all_checks_passed", w.all_passed()}, {"curves", summary}});
  w.finish();
  return w.exit_status();
}

}  // namespace

ReportDef convergence_report_def() {
  return {"convergence", "Appendix C: empirical rate N(T)/T vs T approaching the stationary rate (exact SSA)", run};
}

}  // namespace ctmc::reports
