// End-to-end checks of `fit`'s input validation: every bad input exits 2 with
// one line naming the option or file (and line), before any fitting, and
// leaves no file behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

bool single_line(const std::string& s) {
  const auto pos = s.find('\n');
  return pos == std::string::npos || pos + 1 == s.size();
}

void expect_exit2(const std::string& args, const std::string& needle) {
  const auto r = run_cli(args);
  INFO("ctmc-snn " << args << "\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK(single_line(r.output));
}

const std::string kFit = "fit --activation sigmoid --family two-state --starts 1 --basin-rounds 0";
const std::string kGrid = kFit + " --domain -2,2 --points 5";

}  // namespace

TEST_CASE("fit: a domain or samples outside double range exit 2, not SIGFPE") {
  expect_exit2(kFit + " --domain 1e400,1e401", "--domain");
  expect_exit2(kFit + " --domain -1e400,0", "--domain");
  expect_exit2(kFit + " --domain -1e-400,1e-400 --points 3", "--domain");
  expect_exit2(kFit + " --domain 1,1.0000000000000000000001 --points 3", "--domain");
  const auto big = write_file("fit_big_samples.txt", "0\n1\n1e400\n");
  expect_exit2(kFit + " --samples \"" + big + "\"", "line 3");
  const auto tiny = write_file("fit_tiny_samples.txt", "1e-400\n-1e-400\n");
  expect_exit2(kFit + " --samples \"" + tiny + "\"", "fit_tiny_samples.txt");
}

TEST_CASE("fit: weights outside double range exit 2 naming the file") {
  const auto s = write_file("fit_w_samples.txt", "0\n0.5\n1\n");
  const auto wbig = write_file("fit_wbig.txt", "1\n1e400\n1\n");
  expect_exit2(kFit + " --samples \"" + s + "\" --weights \"" + wbig + "\"", "fit_wbig.txt: line 2");
  const auto wtiny = write_file("fit_wtiny.txt", "1e-400\n1e-400\n1e-400\n");
  expect_exit2(kFit + " --samples \"" + s + "\" --weights \"" + wtiny + "\"", "fit_wtiny.txt");
  const auto wneg = write_file("fit_wneg.txt", "1\n\n-1\n1\n");
  expect_exit2(kFit + " --samples \"" + s + "\" --weights \"" + wneg + "\"", "line 3");
}

TEST_CASE("fit: numeric options out of range exit 2 naming the option") {
  expect_exit2(kGrid + " --max-iterations 0", "--max-iterations");
  expect_exit2(kGrid + " --max-iterations -1", "--max-iterations");
  expect_exit2(kGrid + " --max-iterations 1000000000", "--max-iterations");
  expect_exit2(kGrid + " --rate-bound inf", "--rate-bound");
  expect_exit2(kGrid + " --rate-bound nan", "--rate-bound");
  expect_exit2(kGrid + " --rate-bound 0", "--rate-bound");
  expect_exit2(kGrid + " --min-rate nan", "--min-rate");
  expect_exit2(kGrid + " --min-rate inf", "--min-rate");
  expect_exit2(kGrid + " --min-rate -1", "--min-rate");
  expect_exit2(kGrid + " --min-rate 2000", "--min-rate");
  expect_exit2(kFit + " --domain -2,2 --starts 1000000000", "--starts");
  expect_exit2(kFit + " --domain -2,2 --points 100000000", "--points");
  expect_exit2(kFit + " --domain -2,2 --points 18446744073709551615", "--points");
  expect_exit2(kFit + " --domain -2,2 --points -1", "--points");
  expect_exit2(kFit + " --domain -2,2 --points 1", "--points");
  expect_exit2(kGrid + " --threads -3", "--threads");
  expect_exit2(kGrid + " --seed -1", "--seed");
  expect_exit2(kGrid + " --states -1", "--states");
  expect_exit2(kGrid + " --alpha 1e400", "--alpha");
  expect_exit2(kGrid + " --alpha 1e-400", "--alpha");
  expect_exit2("fit --activation sigmoid --family two-state --domain -2,2 --basin-rounds 2000000000", "--basin-rounds");
}

TEST_CASE("fit: a bad --output is rejected before fitting and leaves nothing behind") {
  namespace fs = std::filesystem;
  const auto dir = temp_dir() / "fit_out_dir";
  fs::create_directories(dir);
  expect_exit2(kGrid + " --output \"" + dir.string() + "\"", "--output");
  CHECK(!fs::exists(dir.string() + ".tmp"));
  expect_exit2(kGrid + " --output \"" + (temp_dir() / "no_such_folder" / "m.json").string() + "\"", "--output");
  const auto file = write_file("fit_plain_file", "x");
  expect_exit2(kGrid + " --output \"" + file + "/m.json\"", "--output");
}

TEST_CASE("fit: --output keeps an unrelated '<path>.tmp' file and leaves no temporary") {
  namespace fs = std::filesystem;
  const auto dir = temp_dir() / "fit_out_ok";
  fs::create_directories(dir);
  const auto out = (dir / "m.json").string();
  std::ofstream(out + ".tmp") << "user data";
  const auto r = run_cli(kGrid + " --output \"" + out + "\"");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(fs::exists(out));
  std::ifstream in(out + ".tmp");
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "user data");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++files;
  CHECK(files == 2);  // m.json and the user's m.json.tmp
}

TEST_CASE("fit --warm-start: the file's MSE as given is in the meta, and the fit ends no higher") {
  // B->G a(H) = 1/2 + H/4, G->B b = 3, G->R c(H) = -1 + 2H (spike), R->B d = 5/4.
  const auto start = write_file(
      "fit_warm_three_state.json",
      R"({"states": ["B", "G", "R"], "transitions": [
          {"from": "B", "to": "G", "offset": "1/2", "slope": "1/4", "spike": false},
          {"from": "G", "to": "B", "offset": 3, "slope": 0, "spike": false},
          {"from": "G", "to": "R", "offset": -1, "slope": 2, "spike": true},
          {"from": "R", "to": "B", "offset": "5/4", "slope": 0, "spike": false}]})");
  const auto r = run_cli("fit --activation sigmoid --domain -6,6 --family three-state --starts 2 --basin-rounds 0 "
                         "--no-widen --json --warm-start \"" + start + "\"");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto meta = nlohmann::json::parse(r.output).at("meta");
  // The start's MSE by the paper's closed form (eq. 1's chain: F = a c d /
  // (d (a + b + c) + a c)), in long double, on the 401-point grid.
  long double sum = 0;
  for (int m = 0; m <= 400; ++m) {
    const long double h = -6 + 12.0L * m / 400;
    const long double a = std::max(0.0L, 0.5L + h / 4), b = 3, c = std::max(0.0L, -1 + 2 * h), d = 1.25L;
    const long double e = a * c * d / (d * (a + b + c) + a * c) - 1 / (1 + std::exp(-h));
    sum += e * e;
  }
  const double expected = static_cast<double>(sum / 401);
  const double given = meta.at("warm_start").at("mse").get<double>();
  CHECK(std::abs(given - expected) <= 1e-12 * expected);
  CHECK(meta.at("warm_start").at("clamped_into_bounds").empty());
  CHECK(meta.at("mse").get<double>() <= given);
  // Of another family's shape, or missing: exit 2 naming the file.
  expect_exit2("fit --activation sigmoid --domain -6,6 --family two-state --starts 1 --warm-start \"" + start + "\"",
               "the two-state family has 2");
  expect_exit2("fit --activation sigmoid --domain -6,6 --family full-three-state --starts 1 --warm-start \"" + start +
                   "\"",
               "fit_warm_three_state.json");
  expect_exit2(kGrid + " --warm-start \"" + (temp_dir() / "no_such_model.json").string() + "\"",
               "no_such_model.json");
}

TEST_CASE("fit --warm-start: a general chain of fewer states is embedded, and its splits are starts") {
  const auto start = write_file(
      "fit_warm_general2.json",
      R"({"states": ["S0", "S1"], "transitions": [
          {"from": "S0", "to": "S1", "offset": "1/2", "slope": "1/4", "spike": false},
          {"from": "S1", "to": "S0", "offset": 3, "slope": "-1/2", "spike": true}]})");
  const auto r = run_cli("fit --activation sigmoid --domain -6,6 --family general --states 3 --starts 2 "
                         "--basin-rounds 0 --no-widen --json --warm-start \"" + start + "\"");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto meta = nlohmann::json::parse(r.output).at("meta");
  CHECK(meta.at("warm_start").at("states") == 2);
  CHECK(meta.at("warm_start").at("split_starts") == 1);
  CHECK(meta.at("mse").get<double>() <= meta.at("warm_start").at("mse").get<double>());
  // More states than the fit's: exit 2.
  const auto bigger = write_file(
      "fit_warm_general3.json",
      R"({"states": ["S0", "S1", "S2"], "transitions": [
          {"from": "S0", "to": "S1", "offset": 1, "slope": 0, "spike": false},
          {"from": "S1", "to": "S2", "offset": 1, "slope": 0, "spike": false},
          {"from": "S2", "to": "S0", "offset": 1, "slope": 0, "spike": true}]})");
  expect_exit2("fit --activation sigmoid --domain -6,6 --family general --states 2 --starts 1 --warm-start \"" +
                   bigger + "\"",
               "the general-2 family has 2");
}

TEST_CASE("fit --score: any chain's weighted MSE and max error against the target, without a fit") {
  // A -> B at a(H) = max(0, 1 + H/2), B -> A at 2 (spike): F = 2 a / (a + 2)
  // (0 where a = 0: A is then absorbing). State names of no family.
  const auto model = write_file("fit_score_chain.json", R"({"states": ["A", "B"], "transitions": [
          {"from": "A", "to": "B", "offset": 1, "slope": "1/2", "spike": false},
          {"from": "B", "to": "A", "offset": 2, "slope": 0, "spike": true}]})");
  const auto samples = write_file("fit_score_samples.txt", "-3\n-1\n0\n1.5\n4\n");
  const auto weights = write_file("fit_score_weights.txt", "1\n2\n3\n4\n5\n");
  const auto r = run_cli("fit --activation sigmoid --samples \"" + samples + "\" --weights \"" + weights +
                         "\" --score \"" + model + "\" --json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  long double sum = 0, wsum = 0, worst = 0, worst_at = 0;
  const long double hs[] = {-3, -1, 0, 1.5L, 4}, ws[] = {1, 2, 3, 4, 5};
  for (int m = 0; m < 5; ++m) {
    const long double a = std::max(0.0L, 1 + hs[m] / 2), f = 2 * a / (a + 2);
    const long double e = f - 1 / (1 + std::exp(-hs[m]));
    sum += ws[m] * e * e;
    wsum += ws[m];
    if (std::abs(e) > worst) worst = std::abs(e), worst_at = hs[m];
  }
  const double mse = static_cast<double>(sum / wsum);
  CHECK(std::abs(j.at("mse").get<double>() - mse) <= 1e-15 * mse);
  CHECK(std::abs(j.at("max_abs_error").get<double>() - static_cast<double>(worst)) <= 1e-15 * static_cast<double>(worst));
  CHECK(j.at("max_abs_error_at").get<double>() == static_cast<double>(worst_at));
  CHECK(j.at("states") == 2);
  // Nothing is fitted, so there is nothing to write; a missing or malformed
  // model exits 2 naming it.
  expect_exit2(kGrid + " --score \"" + model + "\" --output \"" + (temp_dir() / "x.json").string() + "\"",
               "--score excludes --output");
  expect_exit2(kGrid + " --score \"" + (temp_dir() / "no_such_score.json").string() + "\"", "no_such_score.json");
  // Two closed classes at H = 0 (a grid point): named as the scored file, not as a "fitted model".
  const auto split = write_file("fit_score_split.json", R"({"states": ["A", "B"], "transitions": [
          {"from": "A", "to": "B", "offset": 0, "slope": 1, "spike": false},
          {"from": "B", "to": "A", "offset": 0, "slope": -1, "spike": true}]})");
  expect_exit2(kGrid + " --score \"" + split + "\"", "fit_score_split.json: at H = 0 the chain has 2 closed classes");
  // A table target is refused beyond its rows, as for a fit.
  const auto table = write_file("fit_score_table.csv", "0,0\n1,0.5\n2,1\n");
  expect_exit2("fit --activation table:" + table + " --domain -1,2 --points 5 --score \"" + model + "\"",
               "add rows covering the domain");
}

TEST_CASE("activation tables and parameters are parsed strictly") {
  const std::string tail = " --domain -5,5 --N 4";
  struct BadTable {
    const char* file;
    const char* text;
    const char* reason;
  };
  const BadTable bad[] = {
      {"tab_junk.csv", "-5,0\n0,0xyz\n5,5 junk\n", "row 2"},
      {"tab_junk3.csv", "-5,0\n0,0\n5,5 junk\n", "row 3"},
      {"tab_nan.csv", "nan,3\n0,0\n5,5\n", "row 1"},
      {"tab_semi.csv", "-5;3\n0,0\n5,5\n", "row 1"},
      {"tab_three.csv", "-5,0\n0,0,1\n5,5\n", "row 2"},
      // A BOM-prefixed first data row is data (here it makes the table decrease).
      {"tab_bom.csv", "\xEF\xBB\xBF-5,3\n0,0\n5,5\n", "nondecreasing"},
  };
  for (const auto& b : bad) expect_exit2("bernstein --activation table:" + write_file(b.file, b.text) + tail, b.reason);
  const auto bom_ok = write_file("tab_bom_ok.csv", "\xEF\xBB\xBFx,phi\r\n-5,0\r\n0,0\r\n5,5\r\n");
  CHECK(run_cli("bernstein --activation table:" + bom_ok + tail).status == 0);
  // A domain beyond the table's rows is refused: checking or fitting there
  // would use the constant extension without a word.
  expect_exit2("bernstein --activation table:" + bom_ok + " --domain -6,5 --N 4", "has rows for x in [-5, 5] only");
  expect_exit2("fit --activation table:" + bom_ok + " --domain -5,6 --family two-state --starts 2",
               "has rows for x in [-5, 5] only");
  expect_exit2("bernstein --activation \"cliprelu_ 2\"" + tail, "cliprelu_");
  expect_exit2("bernstein --activation cliprelu_0x2" + tail, "cliprelu_0x2");
  expect_exit2("bernstein --activation cliprelu_1e-320" + tail, "cliprelu_1e-320");
  expect_exit2("bernstein --activation cliprelu_inf" + tail, "cliprelu_inf");
  CHECK(run_cli("bernstein --activation cliprelu_2.5" + tail).status == 0);
}

TEST_CASE("fit --score --certify: certified sup error and optimum; bad use exits 2 naming --certify") {
  // The two-state family's chain (B -> R spike at max(0, 1 + H/2), R -> B at 2):
  // F = 2 a / (a + 2).
  const auto model = write_file("fit_certify_chain.json", R"({"states": ["B", "R"], "transitions": [
          {"from": "B", "to": "R", "offset": 1, "slope": "1/2", "spike": true},
          {"from": "R", "to": "B", "offset": 2, "slope": 0, "spike": false}]})");
  const std::string target = "fit --activation sigmoid --domain -3,3 --points 61";
  const auto r = run_cli(target + " --score \"" + model + "\" --certify --json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  const auto& sup = j.at("certificates").at("sup_abs_error");
  const double lower = sup.at("lower").get<double>(), upper = sup.at("upper").get<double>();
  CHECK(sup.at("converged").get<bool>());
  CHECK(upper <= lower * 1.01 + 1e-12);
  CHECK(j.at("max_abs_error").get<double>() <= upper);
  // The closed form on a dense grid (long double) stays below the certified sup.
  long double dense = 0;
  for (int k = 0; k <= 100000; ++k) {
    const long double h = -3 + 6.0L * k / 100000, a = std::max(0.0L, 1 + h / 2);
    dense = std::max(dense, std::abs(2 * a / (a + 2) - 1 / (1 + std::exp(-h))));
  }
  CHECK(static_cast<double>(dense) <= upper);
  CHECK(static_cast<double>(dense) >= lower * (1 - 1e-6));
  // Recognised as the two-state family: its optimum is bounded below, by
  // no more than the chain's own MSE (a feasible point of the family).
  const auto& opt = j.at("certificates").at("optimality");
  CHECK(opt.at("family") == "two-state");
  CHECK(opt.at("lower_bound").get<double>() <= j.at("mse").get<double>());
  // Bad use: a chain of another family than --family, or too many states.
  expect_exit2(target + " --score \"" + model + "\" --certify --family three-state",
               "--certify: --score " + model + " is not a three-state chain");
  std::string ring = R"({"states": ["S0", "S1", "S2", "S3", "S4", "S5", "S6", "S7"], "transitions": [)";
  for (int k = 0; k < 8; ++k)
    ring += (k ? ", " : "") + std::string(R"({"from": "S)") + std::to_string(k) + R"(", "to": "S)" +
            std::to_string((k + 1) % 8) + R"(", "offset": 1, "spike": )" + (k == 0 ? "true" : "false") + "}";
  const auto big = write_file("fit_certify_ring.json", ring + "]}");
  expect_exit2(target + " --score \"" + big + "\" --certify", "at most 7 states");
}

TEST_CASE("fit --score --certify on a three-state chain: the certificate's bound, gap, boxes and time, every box accounted for") {
  // Paper eq. 1: B -> G at max(0, 1/2 + H/2), G -> B at 1, G -> R (spike) at
  // max(0, 2 - H/4), R -> B at 3.
  const auto model = write_file("fit_certify_three.json", R"({"states": ["B", "G", "R"], "transitions": [
          {"from": "B", "to": "G", "offset": "1/2", "slope": "1/2", "spike": false},
          {"from": "G", "to": "B", "offset": 1, "slope": 0, "spike": false},
          {"from": "G", "to": "R", "offset": 2, "slope": "-1/4", "spike": true},
          {"from": "R", "to": "B", "offset": 3, "slope": 0, "spike": false}]})");
  const std::string args =
      "fit --activation sigmoid --domain -3,3 --points 21 --score \"" + model + "\" --certify --family three-state";
  const auto text = run_cli(args);
  INFO(text.output);
  REQUIRE(text.status == 0);
  CHECK(text.output.find("optimum     three-state family within the bounds:") != std::string::npos);
  CHECK(text.output.find(" boxes") != std::string::npos);
  CHECK(text.output.find("pruned") != std::string::npos);
  const auto r = run_cli(args + " --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  const auto& opt = j.at("certificates").at("optimality");
  CHECK(opt.at("family") == "three-state");
  CHECK(opt.at("rel_gap").get<double>() == 1e-2);
  // A lower bound of the family's optimum: no more than this chain's MSE.
  CHECK(opt.at("lower_bound").get<double>() <= j.at("mse").get<double>());
  CHECK(opt.at("seconds").get<double>() >= 0);
  // This chain is far from the family's best: the search finds a better
  // point, reported as such, and the bound stays below it too.
  REQUIRE(opt.at("best_known_improved").get<bool>());
  CHECK(opt.at("improved_mse").get<double>() < j.at("mse").get<double>());
  CHECK(opt.at("lower_bound").get<double>() <= opt.at("improved_mse").get<double>());
  CHECK(text.output.find("the search found MSE") != std::string::npos);
  // The family's optimum lies between the bound and the point found.
  CHECK(text.output.find("  optimum   in [") != std::string::npos);
  const auto& acc = opt.at("boxes_accounted");
  const auto count = [&](const char* k) { return acc.at(k).get<std::int64_t>(); };
  CHECK(count("roots") + 2 * count("split") ==
        count("pruned") + count("split") + count("unsplittable") + count("open"));
  // Every box is bounded once and once per shrinking, except the mirror
  // images (pruned unbounded).
  CHECK(opt.at("boxes").get<std::int64_t>() ==
        count("roots") + 2 * count("split") + count("shrunk_to_faces") - count("pruned_as_mirror_images"));
}
