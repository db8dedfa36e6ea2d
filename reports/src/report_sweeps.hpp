// The sweeps of a report (`report conversion`, `report deep`): each one run
// in-process, taken from --sweeps DIR (documents a cluster run of the printed
// commands wrote), or under --plan only recorded as a Slurm job array. Every
// sweep document is written into the report folder with the `ctmc-snn
// sweep` command that writes the same bytes when run from the folder the
// report was run from.
// Internal header of reports (not installed).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctmc/commands/command_line.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/sim/studies/sweep_document.hpp"

namespace ctmc::reports {

// --plan: the shards per sweep in the printed Slurm commands
// (scripts/slurm/submit-sweep.sh).
inline constexpr int kPlanShards = 16;

struct ReportSweeps {
  const ReportContext& ctx;
  ReportWriter& w;
  std::string plan_dir;  // where the printed commands write their documents, without --sweeps
  std::string report;     // the report's name, which prefixes its progress lines
  std::vector<std::pair<std::string, std::string>> commands;  // what, command line (train, fit and sweep)
  std::vector<std::string> cluster;                           // --plan: one Slurm submission per sweep

  std::string sweeps_dir() const { return ctx.sweeps_dir.empty() ? plan_dir : ctx.sweeps_dir; }
  // A file of the report by the path it has once the report is in place.
  std::string shown(const std::string& file) const;
  // Progress on a terminal only (a report run from a script or CI is quiet).
  void log(const std::string& text) const;
};

// The `ctmc-snn sweep` command line of `spec` as the report shows it (files
// by their final paths), writing `out` (none: no --out).
commands::CommandLine sweep_command_line(const sim::SweepSpec& shown, const std::string& out = "");

// The sweep `name` (document sweep-<name>.json) of `spec` over the nets and
// neurons named by their files in the report folder (spec's nets and neurons
// are filled from them). Returns the document, or an empty one (no runs,
// no points) under --plan, where only the Slurm command is recorded.
// seconds and runs: its wall time and run count.
sim::SweepDocument run_report_sweep(ReportSweeps& rs, const std::string& name, sim::SweepSpec spec,
                                    const std::vector<std::string>& net_files,
                                    const std::vector<std::string>& neuron_files, double& seconds, std::size_t& runs);

// "τ 0.02, r 3, T 50" of a point.
std::string cell_text(const sim::SweepPoint& point);

// --plan: writes sweep_commands.sh (the recorded submissions) and the
// paragraph and commands saying how to finish the report from them.
void write_sweep_plan(ReportSweeps& rs, const std::string& design_label);

}  // namespace ctmc::reports
