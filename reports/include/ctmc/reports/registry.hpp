// The report definitions: `ctmc-snn report <name>` looks a report up here and
// `report all` runs every one in order. Each report writes one folder
// reports/generated/<name>/ through ReportWriter (writer.hpp).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ctmc/commands/report_writer.hpp"

namespace ctmc::reports {

// The output folder and the header's provenance (out_root, command_line,
// seed, threads, precision: ReportFolderContext), and what the reports
// themselves take.
struct ReportContext : commands::ReportFolderContext {
  // The conversion report: the folder holding mnist/ and fashion-mnist/
  // (scripts/fetch-data.sh writes them to data/), and whether to run the
  // paper's full design instead of the reduced default.
  std::string data_root = "data";
  bool full = false;
  // The conversion report on a cluster: --plan trains and fits, then writes
  // the sweeps as Slurm job arrays instead of running them; --sweeps DIR
  // takes every sweep whose document is in DIR (and matches) from there.
  bool plan = false;
  std::string sweeps_dir;
  // The deep report: a CIFAR-10 binary folder (data_batch_1.bin ...
  // test_batch.bin); empty: its CIFAR-10 section says it was not given.
  std::string cifar_dir;
};

struct ReportDef {
  std::string name;
  std::string description;
  // Returns the exit status: 0 when every check held, 1 when one failed.
  std::function<int(const ReportContext&)> run;
};

const std::vector<ReportDef>& all_reports();

}  // namespace ctmc::reports
