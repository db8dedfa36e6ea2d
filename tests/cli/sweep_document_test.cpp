// The typed sweep results (sim/studies/sweep_document.hpp) against the files
// `ctmc-snn sweep` writes: a document and a part, read into the structs and
// written back, are the same bytes; and the structs hold what the file says,
// read by key here independently of from_json.
#include <nlohmann/json.hpp>
#include <random>

#include "cli_helpers.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/sim/studies/sweep_document.hpp"

using namespace ctmc_cli_test;
using ojson = nlohmann::ordered_json;

namespace {

std::string shell_arg(const std::string& p) { return "\"" + p + "\""; }
std::string shell_arg(const fs::path& p) { return shell_arg(p.string()); }

// 40 training and 20 test images of 1x2 pixels (tiny_mlp.json's input), labels 0/1.
fs::path document_data() {
  static const fs::path dir = [] {
    std::mt19937 g(11);
    const auto bytes = [&](int n, int modulus) {
      std::string s;
      for (int i = 0; i < n; ++i) s += static_cast<char>(g() % static_cast<unsigned>(modulus));
      return s;
    };
    return write_idx_dir("sweep_document_idx", idx_images(bytes(80, 256), 1, 2), idx_labels(bytes(40, 2)),
                         idx_images(bytes(40, 256), 1, 2), idx_labels(bytes(20, 2)));
  }();
  return dir;
}

// Two samplers, taus, rates, checkpoints and trials: every list of the
// document has more than one entry.
std::string sweep_args(const std::string& extra) {
  return "sweep --net " + shell_arg(fixture("tiny_mlp.json")) + " --data " + shell_arg(document_data()) + " --neurons " +
         shell_arg(fixture("three_state.json")) +
         " --tau 0.02,0.05 --rate 2,6 --T 0.2,0.5 --dt 0.01 --trials 2 --sampler exact,end-state --seed 5 --threads 1" +
         extra;
}

std::string written(const ojson& j) { return j.dump(1) + "\n"; }

}  // namespace

TEST_CASE("sweep document: read into the structs and written back, the bytes `ctmc-snn sweep` wrote") {
  const fs::path file = temp_dir() / "sweep_document_full.json";
  const auto r = run_cli(sweep_args(" --out " + shell_arg(file)));
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string text = slurp(file);
  const ojson j = ojson::parse(text);
  const ctmc::sim::SweepDocument doc = ctmc::sim::sweep_document_from_json(j, file.string());
  CHECK(written(ojson(doc)) == text);

  // What the structs hold, read from the file by key.
  REQUIRE(doc.runs.size() == j.at("runs").size());
  REQUIRE(doc.cells.size() == j.at("cells").size());
  REQUIRE(doc.points.size() == j.at("points").size());
  CHECK(doc.runs.size() == 16);
  CHECK(doc.spec.taus == std::vector<double>{0.02, 0.05});
  CHECK(doc.spec.samplers == std::vector{ctmc::sim::SamplerKind::Exact, ctmc::sim::SamplerKind::EndState});
  for (std::size_t k = 0; k < doc.points.size(); ++k) {
    const ojson& p = j.at("points").at(k);
    CHECK(ctmc::sim::sampler_name(doc.points[k].sampler) == p.at("sampler").get<std::string>());
    CHECK(doc.points[k].gap_mean == p.at("gap_mean").get<double>());
    CHECK(doc.points[k].synops_per_sample_sd == p.at("synops_per_sample_sd").get<double>());
    CHECK(doc.points[k].nets == p.at("nets").get<std::size_t>());
  }
  for (const auto& item : j.at("min_cost").items()) {
    const ctmc::sim::SamplerKind s = ctmc::sim::parse_sampler(item.key());
    const ojson& id = item.value().at("synops");
    const ctmc::sim::SweepPoint* p = doc.min_cost_point(s, ctmc::sim::SweepCost::SynOps);
    if (id.is_null()) {
      CHECK(p == nullptr);
    } else {
      REQUIRE(p != nullptr);
      CHECK(p == &doc.points.at(id.get<std::size_t>()));
    }
  }
  // Each point's cells: one per net (one net here), with the point's grid values.
  for (const ctmc::sim::SweepPoint& p : doc.points) {
    const auto cells = doc.cells_of(p);
    REQUIRE(cells.size() == 1);
    CHECK(cells[0]->gap == p.gap_mean);
  }

  // The document rebuilt from its runs (what report --sweeps does) is the same document.
  std::vector<ctmc::sim::RunRecord> runs = doc.runs;
  CHECK(written(ojson(ctmc::sim::sweep_document(doc.spec, doc.recorded_spec, std::move(runs)))) == text);
}

TEST_CASE("sweep part: its runs read into the structs and written back, the bytes `sweep --shard` wrote") {
  const fs::path file = temp_dir() / "sweep_document_part.json";
  const auto r = run_cli(sweep_args(" --shard 2/3 --out " + shell_arg(file)));
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string text = slurp(file);
  const ojson j = ojson::parse(text);
  ctmc::sim::SweepPart part;
  part.spec = ctmc::sim::read_sweep_spec(j.at("spec"), file.string());
  part.shard = {j.at("shard").at("index").get<std::size_t>(), j.at("shard").at("count").get<std::size_t>()};
  part.runs = j.at("runs").get<std::vector<ctmc::sim::RunRecord>>();
  CHECK(part.runs.size() == 5);  // runs 1, 4, 7, 10, 13 of 16
  CHECK(written(ojson(part)) == text);
}

TEST_CASE("sweep document: another format or a missing key is refused naming the file") {
  const auto refused = [](const ojson& j, const std::string& fragment) {
    CHECK_THROWS_WITH_AS(ctmc::sim::sweep_document_from_json(j, "d.json"), doctest::Contains(fragment.c_str()),
                         ctmc::InputError);
  };
  refused(ojson{{"format", "ctmc-snn sweep part"}}, "d.json: not a sweep document (\"format\" is not");
  refused(ojson{{"format", "ctmc-snn sweep"}, {"version", 2}}, "d.json: not a sweep document (version 2");
  refused(ojson{{"format", "ctmc-snn sweep"}}, "d.json: not a sweep document (no \"spec\")");
}
