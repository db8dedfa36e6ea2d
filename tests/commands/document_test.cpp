// The command documents' writer (commands/document.hpp): JsonWriter builds
// the same JSON as nlohmann's own operator[] and push_back, and a command's
// Result written through it keeps its meaning.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "ctmc/commands/document.hpp"
#include "ctmc/commands/flux.hpp"
#include "ctmc/solvers/model.hpp"

using namespace ctmc;
using ojson = nlohmann::ordered_json;

TEST_CASE("JsonWriter: nested objects and arrays in the order written, as nlohmann builds them") {
  commands::JsonWriter w;
  {
    const commands::Object doc(w, "");
    commands::put(w, "b", 1);
    commands::put(w, "a", std::string("x"));
    {
      const commands::Array list(w, "list");
      commands::put(w, "", 2.5);
      const commands::Object item(w, "");
      commands::put(w, "flag", true);
    }
    commands::put(w, "none", std::optional<double>());
    commands::put(w, "count", std::size_t{7});
    commands::put(w, "b", 3);  // a key written twice: its first place, its last value
  }
  ojson expected;
  expected["b"] = 3;
  expected["a"] = "x";
  expected["list"] = ojson::array();
  expected["list"].push_back(2.5);
  expected["list"].push_back({{"flag", true}});
  expected["none"] = nullptr;
  expected["count"] = std::size_t{7};
  CHECK(w.take().dump(2) == expected.dump(2));
}

TEST_CASE("JsonWriter: NaN and the infinities are null in the text, as nlohmann writes a double") {
  commands::JsonWriter w;
  {
    const commands::Array doc(w, "");
    commands::put(w, "", std::nan(""));
    commands::put(w, "", -INFINITY);
    commands::put(w, "", 0.1);
  }
  CHECK(w.take().dump() == "[null,null,0.1]");
}

TEST_CASE("put: a JSON value (a model in its file schema) is written as it stands") {
  const auto model = solvers::read_model_file(std::string(CTMC_FIXTURES_DIR) + "/three_state_family.json");
  const ojson j = solvers::model_to_json(model);
  commands::JsonWriter w;
  commands::put(w, "", j);
  CHECK(w.take().dump(1) == j.dump(1));
}

TEST_CASE("flux: in exact arithmetic the GTH flux equals the family's closed form (paper eq. 2)") {
  const std::string path = std::string(CTMC_FIXTURES_DIR) + "/three_state_family.json";
  commands::FluxOptions o;
  o.h_list = "0,1/3,2";
  o.arithmetic = commands::Arithmetic::Exact;
  const auto r = commands::run_flux(solvers::read_model_file(path), path, o);
  REQUIRE(r.rows.size() == 3);
  const ojson doc = commands::to_json(r);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    CHECK(r.rows[i].closed_form_value == r.rows[i].flux);
    CHECK(r.rows[i].difference == "0");
    CHECK(doc[i]["flux"] == r.rows[i].flux);
    CHECK(doc[i]["pi"].size() == 3);
  }
}
