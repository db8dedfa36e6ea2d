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
  const ojson doc = ojson::parse(R"({
    "spec": {"nets": ["a.json", "b.json"], "criterion_pp": 2.5},
    "points": [{"tau": 0.1, "rate": 5, "T": 1, "gap_mean": 1.25, "gap_sd": 0.5, "synops_per_sample_mean": 10,
                "transitions_per_sample_mean": 20, "spikes_per_neuron_mean": 0.125}],
    "frontier": {"uniformization": {"synops": [0], "transitions": []}, "exact": {"synops": [], "transitions": [0]}},
    "min_cost": {"uniformization": {"synops": 0, "transitions": null}, "exact": {"synops": null, "transitions": null}},
    "cells": [{}, {}, {}],
    "runs": [{}, {}, {}, {}]})");
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
