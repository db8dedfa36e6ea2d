#include "report_sweeps.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/reports/templates.hpp"

namespace ctmc::reports {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A sweep document from --sweeps DIR, rebuilt from its runs, when it is the
// sweep of `spec` (what a cluster run of the printed commands, merged,
// writes); InputError naming the file for anything else.
sim::SweepDocument reuse_sweep(const fs::path& file, const sim::SweepSpec& spec, const Json& spec_json) {
  // As every input is read: a regular file only, its size checked first.
  static constexpr solvers::InputKind kSweepDocumentKind{"sweep document", std::uint64_t(4) << 30,
                                                         "a report's sweep document is a few MB"};
  try {
    const std::string text = solvers::read_input_file(file.string(), kSweepDocumentKind);
    Json parsed;
    try {
      parsed = Json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: not a sweep document ({})", file.string(), e.what()));
    }
    sim::SweepDocument found = sim::sweep_document_from_json(parsed, file.string());
    if (found.recorded_spec != spec_json)
      throw InputError(fmt::format("{}: the sweep of another design (its spec differs from the one this report runs: "
                                   "nets, neurons, grid, data, conventions, kernel or seed)",
                                   file.string()));
    return sim::sweep_document(spec, std::move(found.runs));
  } catch (const InputError& e) {
    throw InputError("sweeps_dir", e.what());
  }
}

}  // namespace

std::string ReportSweeps::shown(const std::string& file) const { return (fs::path(w.final_dir()) / file).string(); }

void ReportSweeps::log(const std::string& text) const {
  if (isatty(STDERR_FILENO) == 1) fmt::print(stderr, "{}: {}\n", report, text);
}

commands::CommandLine sweep_command_line(const sim::SweepSpec& shown, const std::string& out) {
  commands::SweepCommandOptions o;
  o.spec = shown;
  o.out = out;
  return commands::sweep_command_line(o, commands::SweepConventions::Every);
}

sim::SweepDocument run_report_sweep(ReportSweeps& rs, const std::string& name, sim::SweepSpec spec,
                      const std::vector<std::string>& net_files, const std::vector<std::string>& neuron_files,
                      double& seconds, std::size_t& runs) {
  spec.nets.clear();
  spec.neurons.clear();
  for (const auto& f : net_files) spec.nets.push_back((fs::path(rs.w.dir()) / f).string());
  for (const auto& f : neuron_files) spec.neurons.push_back((fs::path(rs.w.dir()) / f).string());
  sim::SweepSpec shown = spec;
  shown.nets.clear();
  shown.neurons.clear();
  for (const auto& f : net_files) shown.nets.push_back(rs.shown(f));
  for (const auto& f : neuron_files) shown.neurons.push_back(rs.shown(f));
  const Json spec_json = sim::sweep_spec_json(shown);
  const std::string file = "sweep-" + name + ".json";
  if (rs.ctx.plan) {
    rs.cluster.push_back(fmt::format("scripts/slurm/submit-sweep.sh --shards {} --out {}/{} -- {}", kPlanShards,
                                     rs.sweeps_dir(), file, sweep_command_line(shown).options()));
    return {};
  }
  const auto t0 = Clock::now();
  sim::SweepDocument doc;
  const fs::path given = fs::path(rs.ctx.sweeps_dir) / file;
  if (!rs.ctx.sweeps_dir.empty() && fs::exists(given)) {
    doc = reuse_sweep(given, shown, spec_json);
    rs.log(fmt::format("{}: taken from {}", name, given.string()));
  } else {
    auto last = t0;
    std::vector<sim::RunRecord> records = sim::run_sweep(spec, {1, 1}, rs.ctx.threads, [&](std::size_t done, std::size_t total) {
      const sim::SweepRun r = sim::sweep_run_at(spec, done - 1);
      const double left = seconds_since(t0) / double(done) * double(total - done);
      rs.log(fmt::format("{}: run {}/{} (sampler {}, tau {:g}, r {:g}, trial {}) in {:.2f} s, about {:.0f} s left",
                         name, done, total, sim::sampler_name(spec.samplers[r.sampler]), spec.taus[r.tau],
                         spec.rates[r.rate], r.trial, seconds_since(last), left));
      last = Clock::now();
    });
    doc = sim::sweep_document(shown, std::move(records));
  }
  seconds = seconds_since(t0);
  runs = doc.runs.size();
  rs.w.write_text(file, Json(doc).dump(1) + "\n");
  rs.w.file_path(file, "sweep document (ctmc-snn sweep)");
  rs.commands.emplace_back("sweep " + name, sweep_command_line(shown, rs.shown(file)).text());
  return doc;
}

std::string cell_text(const sim::SweepPoint& p) { return fmt::format("τ {:g}, r {:g}, T {:g}", p.tau, p.rate, p.T); }

void write_sweep_plan(ReportSweeps& rs, const std::string& design_label) {
  ReportWriter& w = rs.w;
  std::string script = fmt::format(fmt::runtime(templates::kSweepCommands), fmt::arg("command", rs.ctx.command_line),
                                   fmt::arg("shards", kPlanShards), fmt::arg("sweeps_dir", rs.sweeps_dir()));
  for (const auto& line : rs.cluster) script += line + "\n";
  w.write_text("sweep_commands.sh", script);
  w.paragraph(fmt::format(
      "Plan only (`--plan`): the design is {}. The source nets and fitted neurons are in this folder; "
      "[sweep_commands.sh](sweep_commands.sh) submits the {} sweeps as Slurm job arrays writing to {}. Rerun "
      "the same command with `--sweeps {}` instead of `--plan` to write the report from them.",
      design_label, rs.cluster.size(), md_code(rs.sweeps_dir() + "/"), rs.sweeps_dir()));
  std::string cmds = "```sh\n";
  for (const auto& [what, cmd] : rs.commands) cmds += "# " + what + "\n" + cmd + "\n";
  w.paragraph(cmds + "```");
}

}  // namespace ctmc::reports
