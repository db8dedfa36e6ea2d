// The Results of the commands whose text the CLI prints from the struct:
// their documents keep the --json shape (key order and types) and the
// struct carries what the text needs.
#include <doctest/doctest.h>

#include <string>

#include "ctmc/commands/data.hpp"
#include "ctmc/commands/sweep.hpp"
#include "ctmc/commands/train.hpp"

using namespace ctmc;
using ojson = nlohmann::ordered_json;

TEST_CASE("data info: per_class keyed by label (a missing class is absent, not a zero), in the JSON key order") {
  commands::DataInfoResult r{"d", {3, 28, 28, 1, {{0, 2}, {9, 1}}}, {1, 28, 28, 1, {{4, 1}}}};
  CHECK(commands::to_json(r).dump() ==
        R"({"dir":"d","train":{"images":3,"rows":28,"cols":28,"channels":1,"per_class":{"0":2,"9":1}},)"
        R"("test":{"images":1,"rows":28,"cols":28,"channels":1,"per_class":{"4":1}}})");
  CHECK(commands::per_class_text(r.train) == R"({"0":2,"9":1})");
  CHECK(commands::per_class_text(commands::DataPartInfo{}) == "{}");
}

TEST_CASE("evaluate: a clip level as a number, no clipping as \"inf\"") {
  commands::EvaluateCommandResult r;
  r.rows = {{1.5f, 0.25, {}}, {0.0f, 0.5, {}}};
  CHECK(commands::to_json(r).dump() == R"([{"clip":1.5,"test_accuracy":0.25},{"clip":"inf","test_accuracy":0.5}])");
}

TEST_CASE("sweep summary: per sampler in the document's order, the cheapest point or none") {
  sim::SweepDocument doc;
  doc.spec.nets = {"a.json", "b.json"};
  doc.spec.criterion = 2.5;
  sim::SweepPoint point;
  point.tau = 0.1;
  point.rate = 5;
  point.T = 1;
  point.gap_mean = 1.25;
  point.gap_sd = 0.5;
  point.synops_per_sample_mean = 10;
  point.transitions_per_sample_mean = 20;
  point.spikes_per_neuron_mean = 0.125;
  doc.points = {point};
  const auto uniformization = sim::SamplerKind::Uniformization, exact = sim::SamplerKind::Exact;
  doc.frontier = {{uniformization, {0}, {}}, {exact, {}, {0}}};
  doc.min_cost = {{uniformization, 0, std::nullopt}, {exact, std::nullopt, std::nullopt}};
  doc.cells.resize(3);
  doc.runs.resize(4);
  const commands::SweepSummary s = commands::sweep_summary(doc);
  CHECK(s.cells == 3);
  CHECK(s.runs == 4);
  CHECK(s.nets == 2);
  CHECK(s.points == 1);
  CHECK(s.criterion_pp == 2.5);
  REQUIRE(s.samplers.size() == 2);
  CHECK(s.samplers[0].sampler == "uniformization");
  CHECK(s.samplers[0].frontier_synops == 1);
  CHECK(s.samplers[0].frontier_transitions == 0);
  REQUIRE(s.samplers[0].least_synops.has_value());
  CHECK(s.samplers[0].least_synops->gap_mean == 1.25);
  CHECK(s.samplers[0].least_synops->spikes_per_neuron_mean == 0.125);
  CHECK_FALSE(s.samplers[0].least_transitions.has_value());
  CHECK(s.samplers[1].sampler == "exact");
  CHECK_FALSE(s.samplers[1].least_synops.has_value());
}
