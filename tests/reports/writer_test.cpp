// ReportWriter: folder life cycle (temporary name, rename on finish, cleanup on
// throw), header fields, CSV round trip through an independent RFC 4180 parser,
// JSON round trip, and gnuplot plots that redraw from inside the report folder.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/core/errors.hpp"

namespace fs = std::filesystem;
using namespace ctmc;
using namespace ctmc::reports;

namespace {

// A fresh, empty out_root per test, removed afterwards.
struct TempRoot {
  fs::path path;
  TempRoot() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("ctmc-writer-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempRoot() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ReportContext ctx() const {
    ReportContext c;
    c.out_root = path.string();
    c.command_line = "ctmc-snn report demo --seed 42";
    c.seed = 42;
    c.precision = 512;
    c.threads = 2;
    return c;
  }
  std::set<std::string> entries() const {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(path)) s.insert(e.path().filename().string());
    return s;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Independent RFC 4180 reader (quoted fields, doubled quotes, embedded newlines).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, in_row = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
      continue;
    }
    in_row = true;
    if (c == '"') quoted = true;
    else if (c == ',') row.push_back(cell), cell.clear();
    else if (c == '\n') {
      row.push_back(cell), cell.clear();
      rows.push_back(row), row.clear();
      in_row = false;
    } else cell += c;
  }
  if (in_row) row.push_back(cell), rows.push_back(row);
  return rows;
}

// Whether configure found gnuplot (tests/CMakeLists.txt): where it did, the
// plot must be drawn, and a gnuplot gone missing since fails the test rather
// than passing through the "not drawn" branch.
constexpr bool kGnuplotConfigured = CTMC_HAVE_GNUPLOT;
bool gnuplot_available() { return std::system("gnuplot --version >/dev/null 2>&1") == 0; }

Plot demo_plot() {
  Plot p;
  p.name = "rate";
  p.title = "Empirical rate vs T (with \"quotes\")\nsecond line";
  p.xlabel = "T";
  p.ylabel = "N(T)/T";
  p.y2label = "sd";
  p.logx = true;
  Series band{"mean +- sd", {1, 10, 100}, {1, 1, 1}, "filledcurves", 1, {0.5, 0.8, 0.95}, {1.5, 1.2, 1.05},
              "fs transparent solid 0.3 noborder"};
  Series mean{"mean", {1, 10, 100}, {1.1, 0.97, 1.0}, "linespoints"};
  Series sd{"sd (right axis)", {1, 10, 100}, {0.5, 0.2, 0.05}, "lines", 2};
  p.series = {band, mean, sd};
  return p;
}

}  // namespace

TEST_CASE("the report folder appears only after finish() and the temporary folder is gone") {
  TempRoot root;
  std::string tmp;
  {
    ReportWriter w(root.ctx(), "demo", "Demo report");
    tmp = w.dir();
    CHECK(fs::is_directory(tmp));
    CHECK(fs::path(tmp).parent_path() == root.path);  // same parent: rename never crosses file systems
    CHECK_FALSE(fs::exists(root.path / "demo"));
    w.heading("Numbers");
    w.paragraph("Some text.");
    w.table(Table{{"H", "ours", kPaperColumn}, {{"0.5", "0.25", paper_cell(std::optional<std::string>{})}}}, "t.csv");
    CHECK_FALSE(fs::exists(root.path / "demo"));
    w.finish();
    CHECK(w.final_dir() == (root.path / "demo").string());
  }
  CHECK_FALSE(fs::exists(tmp));
  CHECK(root.entries() == std::set<std::string>{"demo"});
  CHECK(fs::exists(root.path / "demo" / "report.md"));
  CHECK(fs::exists(root.path / "demo" / "meta.json"));
  CHECK(fs::exists(root.path / "demo" / "t.csv"));
}

TEST_CASE("temporary folders of killed runs are removed by the next writer, those of live runs kept") {
  // A killed run (Ctrl-C, timeout) leaves .<name>.tmp-<pid>-XXXXXX behind.
  // Pids above the kernel's pid_max (at most 2^22) are never processes.
  TempRoot root;
  const std::string dead = ".demo.tmp-2147483000-abcdef", dead_old = ".demo.old-2147483001-abcdef";
  const std::string live = ".demo.tmp-" + std::to_string(::getpid()) + "-ghijkl";
  const std::string other = ".other.tmp-2147483000-abcdef", user = ".demo.tmp-notes";
  for (const auto& d : {dead, dead_old, live, other, user}) {
    fs::create_directories(root.path / d);
    std::ofstream(root.path / d / "x.csv") << "1\n";
  }
  {
    ReportWriter w(root.ctx(), "demo", "Demo report");
    w.finish();
  }
  CHECK_FALSE(fs::exists(root.path / dead));
  CHECK_FALSE(fs::exists(root.path / dead_old));
  CHECK(fs::exists(root.path / live / "x.csv"));   // a running report's folder
  CHECK(fs::exists(root.path / other / "x.csv"));  // another report's: its own writer decides
  CHECK(fs::exists(root.path / user / "x.csv"));   // not a writer's name
  CHECK(root.entries() == std::set<std::string>{"demo", live, other, user});
}

TEST_CASE("a killed run's temporary folder is removed even when its pid is now another live process's") {
  // In a fresh container a run is often pid 1 again, or the kernel reuses the
  // pid: the folder of the killed run stayed forever. pid 1 is live and
  // started at boot; the folder was last written in 2001, before it.
  TempRoot root;
  const std::string reused = ".demo.tmp-1-abcdef";
  fs::create_directories(root.path / reused);
  std::ofstream(root.path / reused / "x.csv") << "1\n";
  const struct timeval old_times[2] = {{1000000000, 0}, {1000000000, 0}};
  REQUIRE(::utimes((root.path / reused).c_str(), old_times) == 0);
  if (!std::ifstream("/proc/1/stat")) {
    MESSAGE("skipped: no /proc/1/stat to read a process's start time from");
    return;
  }
  {
    ReportWriter w(root.ctx(), "demo", "Demo report");
    w.finish();
  }
  CHECK_FALSE(fs::exists(root.path / reused));
  CHECK(root.entries() == std::set<std::string>{"demo"});
}

TEST_CASE("report.md carries the header fields") {
  TempRoot root;
  ReportWriter w(root.ctx(), "demo", "Demo report title");
  w.finish();
  std::string md = slurp(root.path / "demo" / "report.md");
  CHECK(md.rfind("# Demo report title\n", 0) == 0);
  CHECK(md.find("ctmc-snn report demo --seed 42") != std::string::npos);
  CHECK(md.find("| seed | 42 |") != std::string::npos);
  CHECK(md.find("| precision | 512 bits |") != std::string::npos);
  CHECK(std::regex_search(md, std::regex(R"(\| date \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \|)")));
  std::smatch m;
  REQUIRE(std::regex_search(md, m, std::regex(R"(\| git revision \| ([^ |]+) \|)")));
  std::string rev = m[1];
  CHECK(std::regex_match(rev, std::regex(R"(([0-9a-f]{4,40}(-dirty)?)|unknown)")));
  // Cross-check against git itself where the source tree is a repository.
  std::string cmd = std::string("git -C '") + CTMC_SOURCE_DIR + "' rev-parse --short HEAD 2>/dev/null";
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[64] = {};
    bool got = std::fgets(buf, sizeof buf, p) != nullptr;
    if (::pclose(p) == 0 && got) {
      std::string head(buf);
      while (!head.empty() && head.back() == '\n') head.pop_back();
      CHECK(rev.rfind(head, 0) == 0);
    }
  }
  auto meta = nlohmann::json::parse(slurp(root.path / "demo" / "meta.json"));
  CHECK(meta["seed"] == 42);
  CHECK(meta["precision_bits"] == 512);
  CHECK(meta["git_revision"] == rev);
}

TEST_CASE("a report that throws leaves no folder, and an older report survives it") {
  TempRoot root;
  auto failing = [&] {
    ReportWriter w(root.ctx(), "demo", "Fails halfway");
    w.table(Table{{"a"}, {{"1"}}}, "half.csv");
    w.write_json("half.json", nlohmann::ordered_json{{"x", 1}});
    throw std::runtime_error("computation failed");
  };
  CHECK_THROWS_AS(failing(), std::runtime_error);
  CHECK(root.entries().empty());

  {
    ReportWriter w(root.ctx(), "demo", "First version");
    w.paragraph("version one");
    w.finish();
  }
  CHECK_THROWS_AS(failing(), std::runtime_error);
  CHECK(root.entries() == std::set<std::string>{"demo"});
  CHECK(slurp(root.path / "demo" / "report.md").find("version one") != std::string::npos);
  CHECK_FALSE(fs::exists(root.path / "demo" / "half.csv"));
}

TEST_CASE("finish() replaces an older folder of the same name completely") {
  TempRoot root;
  {
    ReportWriter w(root.ctx(), "demo", "Old");
    w.write_text("old-only.txt", "stale");
    w.finish();
  }
  {
    ReportWriter w(root.ctx(), "demo", "New");
    w.paragraph("fresh");
    w.finish();
  }
  CHECK(root.entries() == std::set<std::string>{"demo"});
  CHECK_FALSE(fs::exists(root.path / "demo" / "old-only.txt"));
  CHECK(slurp(root.path / "demo" / "report.md").rfind("# New\n", 0) == 0);
}

TEST_CASE("a file (not a report folder) at the report's path is refused, not replaced") {
  TempRoot root;
  std::ofstream(root.path / "demo") << "the user's notes";
  CHECK_THROWS_AS(ReportWriter(root.ctx(), "demo", "Demo"), ctmc::InputError);
  CHECK(slurp(root.path / "demo") == "the user's notes");
  CHECK(root.entries() == std::set<std::string>{"demo"});  // no temporary folder left
}

TEST_CASE("CSV round-trips cells with commas, quotes, newlines and spaces") {
  TempRoot root;
  Table t{{"name", "value, with comma", "quote\"d"},
          {{"a,b", "1.5", "he said \"hi\""}, {"line\nbreak", " padded ", ""}, {"plain", "-2e-3", kNoPaperValue}}};
  {
    ReportWriter w(root.ctx(), "demo", "CSV");
    w.write_csv("data.csv", t);
    w.finish();
  }
  auto rows = parse_csv(slurp(root.path / "demo" / "data.csv"));
  REQUIRE(rows.size() == t.rows.size() + 1);
  CHECK(rows[0] == t.columns);
  for (size_t i = 0; i < t.rows.size(); ++i) CHECK(rows[i + 1] == t.rows[i]);
}

TEST_CASE("Markdown tables escape pipes and right-align numeric columns") {
  Table t{{"what", "value", kPaperColumn}, {{"a|b", "1.5", "2.0"}, {"c", "-3e-4", kNoPaperValue}}};
  std::string md = markdown_table(t);
  CHECK(md.find("a\\|b") != std::string::npos);
  CHECK(md.find("|---|---:|---:|") != std::string::npos);
  CHECK_THROWS_AS(markdown_table(Table{{"a", "b"}, {{"1"}}}), std::invalid_argument);
}

TEST_CASE("JSON data round-trips") {
  TempRoot root;
  nlohmann::ordered_json j = {{"flux", 0.123456789012345678}, {"paper", nullptr}, {"list", {1, 2, 3}}};
  {
    ReportWriter w(root.ctx(), "demo", "JSON");
    w.write_json("summary.json", j);
    w.finish();
  }
  auto back = nlohmann::ordered_json::parse(slurp(root.path / "demo" / "summary.json"));
  CHECK(back == j);
  CHECK(back["flux"].get<double>() == 0.123456789012345678);  // bit-exact through text
}

TEST_CASE("a plot gives a valid SVG and its script redraws it from inside the report folder") {
  TempRoot root;
  const bool have_gnuplot = gnuplot_available();
  REQUIRE_MESSAGE(have_gnuplot == kGnuplotConfigured, "gnuplot found at configure time: ", kGnuplotConfigured,
                  ", on PATH now: ", have_gnuplot);
  {
    ReportWriter w(root.ctx(), "demo", "Plot");
    w.plot(demo_plot());
    w.finish();
  }
  fs::path dir = root.path / "demo";
  CHECK(fs::exists(dir / "rate.dat"));
  CHECK(fs::exists(dir / "rate.gp"));
  std::string gp = slurp(dir / "rate.gp");
  // The script names its files by relative names only.
  CHECK(gp.find(root.path.string()) == std::string::npos);
  CHECK(gp.find("'rate.dat'") != std::string::npos);
  CHECK(gp.find("set output 'rate.svg'") != std::string::npos);
  std::string md = slurp(dir / "report.md");
  if (!have_gnuplot) {
    CHECK(md.find("not drawn") != std::string::npos);
    return;
  }
  CHECK(md.find("](rate.svg)") != std::string::npos);
  std::string svg = slurp(dir / "rate.svg");
  CHECK((svg.rfind("<?xml", 0) == 0 || svg.rfind("<svg", 0) == 0));
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "rate.gnuplot.log"));

  // Restyle workflow: remove the SVG, re-run the saved script in the folder.
  fs::remove(dir / "rate.svg");
  std::string cmd = "cd '" + dir.string() + "' && gnuplot rate.gp >/dev/null 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  std::string again = slurp(dir / "rate.svg");
  CHECK((again.rfind("<?xml", 0) == 0 || again.rfind("<svg", 0) == 0));
}

TEST_CASE("bad names and shapes are rejected") {
  TempRoot root;
  CHECK_THROWS_AS(ReportWriter(root.ctx(), "../escape", "x"), std::invalid_argument);
  ReportWriter w(root.ctx(), "demo", "x");
  CHECK_THROWS_AS(w.write_csv("../x.csv", Table{{"a"}, {}}), std::invalid_argument);
  CHECK_THROWS_AS(w.write_text("report.md", "overwrite"), std::invalid_argument);
  Plot p = demo_plot();
  p.series[1].y.pop_back();
  CHECK_THROWS_AS(w.plot(p), std::invalid_argument);
}

TEST_CASE("number formatting and the paper column") {
  CHECK(fmt_sci(12345.678, 3) == "1.235e+04");
  CHECK(fmt_fix(2.0 / 3.0, 4) == "0.6667");
  CHECK(fmt_g(0.000123456, 3) == "0.000123");
  CHECK(fmt_pct(0.12345, 1) == "12.3%");
  CHECK(fmt_int(-42) == "-42");
  CHECK(fmt_sci(std::nan("")) == "nan");
  for (double v : {0.1, 1.0 / 3.0, 6.02214076e23, -2.5e-300}) CHECK(std::strtod(fmt_exact(v).c_str(), nullptr) == v);
  CHECK(paper_cell(std::optional<double>{}) == kNoPaperValue);
  CHECK(paper_cell(std::optional<double>{0.9912}) == "0.9912");
  CHECK(paper_cell(std::optional<std::string>{"98.9%"}) == "98.9%");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"x\"") == "\"say \"\"x\"\"\"");
}

TEST_CASE("checks set the exit status") {
  TempRoot root;
  ReportWriter w(root.ctx(), "demo", "checks");
  w.check("identity holds", true, "max error 0");
  CHECK(w.exit_status() == 0);
  w.check("bound holds", false, "1.2 > 1.0");
  CHECK(w.exit_status() == 1);
  w.finish();
  std::string md = slurp(root.path / "demo" / "report.md");
  CHECK(md.find("**FAIL** bound holds: 1.2 > 1.0") != std::string::npos);
  CHECK(md.find("Checks (1 of 2 held)") != std::string::npos);
}

TEST_CASE("registered reports have unique, valid names") {
  std::set<std::string> names;
  for (const auto& def : all_reports()) {
    CHECK_FALSE(def.name.empty());
    CHECK(def.name != "all");  // `report all` is the runner itself
    CHECK(def.name.find('/') == std::string::npos);
    CHECK(static_cast<bool>(def.run));
    CHECK(names.insert(def.name).second);
  }
}

TEST_CASE("long check lists show failures and count the passes") {
  TempRoot root;
  ReportWriter w(root.ctx(), "demo", "many checks");
  for (int i = 0; i < 40; ++i) w.check("point " + std::to_string(i), i != 17, "z");
  w.finish();
  std::string md = slurp(root.path / "demo" / "report.md");
  CHECK(md.find("**FAIL** point 17: z") != std::string::npos);
  CHECK(md.find("**PASS** point 3") == std::string::npos);
  CHECK(md.find("39 passing checks not listed") != std::string::npos);
  auto meta = nlohmann::json::parse(slurp(root.path / "demo" / "meta.json"));
  CHECK(meta["checks"].size() == 40);
  CHECK(meta["checks_passed"] == false);
}

TEST_CASE("an unusable output location is bad input (InputError naming --out), not an internal error") {
  TempRoot root;
  const fs::path file = root.path / "plain_file";
  std::ofstream(file) << "x\n";
  ReportContext c = root.ctx();
  c.out_root = file.string();
  CHECK_THROWS_AS(check_output_root(c.out_root), ctmc::InputError);
  try {
    ReportWriter w(c, "demo", "Demo");
    FAIL("the writer accepted a regular file as its output folder");
  } catch (const ctmc::InputError& e) {
    CHECK(std::string(e.what()).find("out_root: ") == 0);
  }
  c.out_root = (file / "sub").string();  // below a regular file: cannot be created
  CHECK_THROWS_AS(ReportWriter(c, "demo", "Demo"), ctmc::InputError);
  // A missing folder is created; nothing is left beside the file.
  CHECK_NOTHROW(check_output_root((root.path / "new" / "deeper").string()));
  CHECK(fs::is_directory(root.path / "new" / "deeper"));
}

TEST_CASE("set_precision records the precision actually used in the header and meta.json") {
  TempRoot root;
  ReportContext c = root.ctx();
  c.precision = 100000;  // requested; a report may clamp it
  {
    ReportWriter w(c, "demo", "Demo");
    CHECK(w.provenance().precision == 100000u);
    w.set_precision(256);
    CHECK(w.provenance().precision == 256u);
    w.finish();
  }
  const std::string md = slurp(root.path / "demo" / "report.md");
  CHECK(md.find("| 256 bits") != std::string::npos);
  CHECK(md.find("100000 bits") == std::string::npos);
  const auto meta = nlohmann::json::parse(slurp(root.path / "demo" / "meta.json"));
  CHECK(meta["precision_bits"].get<unsigned>() == 256u);
}

TEST_CASE("the convergence report names a fitted model relative to its own folder, never by the --out path") {
  // With fits/<model> under out_root the report uses the fitted neuron; the
  // provenance must stay valid when the report folders are moved together.
  TempRoot root;
  fs::create_directories(root.path / "fits");
  for (const char* name : {"model_sigmoid_three-state.json", "model_relu_two-state.json"}) {
    const std::string fallback = std::string(name) == "model_relu_two-state.json" ? "relu_two_state.json"
                                                                                   : "sigmoid_three_state.json";
    fs::copy_file(fs::path(CTMC_SOURCE_DIR) / "reports" / "models" / fallback, root.path / "fits" / name);
  }
  const ReportDef* conv = nullptr;
  for (const auto& def : all_reports())
    if (def.name == "convergence") conv = &def;
  REQUIRE(conv != nullptr);
  CHECK(conv->run(root.ctx()) == 0);
  std::ifstream in(root.path / "convergence" / "report.md");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("(../fits/model_sigmoid_three-state.json)") != std::string::npos);
  CHECK(text.find("(../fits/model_relu_two-state.json)") != std::string::npos);
  CHECK(text.find(root.path.string() + "/fits") == std::string::npos);
}

namespace {
// The one-line InputError message of f ("" when it throws none).
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const ctmc::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a folder of the user's at the report's path is refused with exit-2 InputError and kept whole") {
  TempRoot root;
  fs::create_directories(root.path / "demo" / "drafts");
  std::ofstream(root.path / "demo" / "notes.md") << "my notes";
  std::ofstream(root.path / "demo" / "drafts" / "a.txt") << "draft";
  const auto msg = input_error_of([&] { ReportWriter w(root.ctx(), "demo", "Demo"); });
  CHECK_MESSAGE(msg.find("out_root: '" + (root.path / "demo").string() + "' is not a report folder written by ctmc-snn (it has no meta.json") == 0, msg);
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(slurp(root.path / "demo" / "notes.md") == "my notes");
  CHECK(slurp(root.path / "demo" / "drafts" / "a.txt") == "draft");
  CHECK(root.entries() == std::set<std::string>{"demo"});  // no temporary folder left

  SUBCASE("a meta.json that is not ours does not make it a report folder") {
    std::ofstream(root.path / "demo" / "meta.json") << R"({"report": "demo", "author": "me"})";
    CHECK(input_error_of([&] { ReportWriter w(root.ctx(), "demo", "Demo"); }).find("its meta.json is not one ctmc-snn wrote") !=
          std::string::npos);
  }
  SUBCASE("a folder that appears while the report runs is refused by finish()") {
    fs::remove_all(root.path / "demo");
    ReportWriter w(root.ctx(), "demo", "Demo");
    fs::create_directories(root.path / "demo");
    std::ofstream(root.path / "demo" / "notes.md") << "my notes";
    CHECK_THROWS_AS(w.finish(), ctmc::InputError);
    CHECK(slurp(root.path / "demo" / "notes.md") == "my notes");
  }
  CHECK(fs::exists(root.path / "demo" / "notes.md"));
}

TEST_CASE("a report folder with the user's files added is refused, naming the file") {
  TempRoot root;
  {
    ReportWriter w(root.ctx(), "demo", "Old");
    w.write_text("data.txt", "ours");
    w.finish();
  }
  auto meta = nlohmann::json::parse(slurp(root.path / "demo" / "meta.json"));
  CHECK(meta["generator"] == "ctmc-snn");
  std::ofstream(root.path / "demo" / "my-notes.md") << "keep me";
  const auto msg = input_error_of([&] { ReportWriter w(root.ctx(), "demo", "New"); });
  CHECK_MESSAGE(msg.find("it holds 'my-notes.md', which the report did not write") != std::string::npos, msg);
  CHECK(slurp(root.path / "demo" / "my-notes.md") == "keep me");
  // Without it, the folder is ours again and is replaced.
  fs::remove(root.path / "demo" / "my-notes.md");
  {
    ReportWriter w(root.ctx(), "demo", "New");
    w.finish();
  }
  CHECK(slurp(root.path / "demo" / "report.md").rfind("# New\n", 0) == 0);
}

TEST_CASE("a report folder written before meta.json had \"generator\" is still replaced") {
  TempRoot root;
  {
    ReportWriter w(root.ctx(), "demo", "Old");
    w.write_csv("t.csv", Table{{"a"}, {{"1"}}});
    w.finish();
  }
  auto meta = nlohmann::json::parse(slurp(root.path / "demo" / "meta.json"));
  meta.erase("generator");
  std::ofstream(root.path / "demo" / "meta.json") << meta.dump(2);
  {
    ReportWriter w(root.ctx(), "demo", "New");
    w.finish();
  }
  CHECK(slurp(root.path / "demo" / "report.md").rfind("# New\n", 0) == 0);
  CHECK_FALSE(fs::exists(root.path / "demo" / "t.csv"));
  // Another report's folder is not this one's.
  meta["report"] = "other";
  std::ofstream(root.path / "demo" / "meta.json") << meta.dump(2);
  CHECK(input_error_of([&] { ReportWriter w(root.ctx(), "demo", "New"); }).find("its meta.json is not that of report 'demo'") !=
        std::string::npos);
}

TEST_CASE("a report that cannot be written (disk full) is an InputError naming the file and the reason") {
  TempRoot root;
  {
    ReportWriter w(root.ctx(), "demo", "Old");
    w.paragraph("version one");
    w.finish();
  }
  // A child whose files may not grow past 1 KiB (EFBIG, SIGXFSZ ignored).
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit r{};
    ::getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = 1024;
    ::setrlimit(RLIMIT_FSIZE, &r);
    std::string msg = "(no exception)";
    try {
      ReportWriter w(root.ctx(), "demo", "New");
      w.write_text("big.txt", std::string(4096, 'x'));
      w.finish();
    } catch (const ctmc::InputError& e) {
      msg = std::string("InputError: ") + e.what();
    } catch (const std::exception& e) {
      msg = std::string("other: ") + e.what();
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(msg == "InputError: " + (root.path / "demo" / "big.txt").string() + ": cannot write (File too large)");
  CHECK(slurp(root.path / "demo" / "report.md").find("version one") != std::string::npos);
  CHECK(root.entries() == std::set<std::string>{"demo"});
}

// --- user text in generated Markdown, gnuplot and SVG --------------------------

namespace {

// The cells of one GFM table row as cmark-gfm's row scanner splits it: a
// backslash and the ASCII punctuation character after it are one escaped
// pair; any other '|' ends a cell.
std::size_t gfm_row_cells(const std::string& row) {
  const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::size_t pipes = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && punct.find(row[i + 1]) != std::string::npos) ++i;
    else if (row[i] == '|') ++pipes;
  }
  return pipes - 1;  // leading and trailing pipes
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

// CommonMark: a backslash before ASCII punctuation is that character.
std::string commonmark_unescape(const std::string& md) {
  const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::string out;
  for (std::size_t i = 0; i < md.size(); ++i) {
    if (md[i] == '\\' && i + 1 < md.size() && punct.find(md[i + 1]) != std::string::npos) ++i;
    out += md[i];
  }
  return out;
}

const char* const kHostileText[] = {"a|b", "a\\|b", "a\\\\|b", "x\ny|z\r", "`code | pipe`", "trailing\\",
                                    "](x) <img src=x onerror=alert(1)> *b* _c_ [d]: e $f$ &amp; #g ~h~",
                                    "``` fence", " both ends ", "\\`"};

}  // namespace

TEST_CASE("Markdown tables keep their column count whatever the cells hold") {
  Table t{{"name", "value"}, {}};
  for (const char* h : kHostileText) t.rows.push_back({h, std::string("v") + h});
  const auto lines = lines_of(markdown_table(t));
  REQUIRE(lines.size() == 2 + t.rows.size());  // a line break in a cell started no row
  for (const auto& line : lines) {
    INFO(line);
    CHECK(gfm_row_cells(line) == 2);
  }
}

TEST_CASE("md_text shows any text literally; md_code is a code span of it") {
  for (const char* h : kHostileText) {
    INFO(h);
    std::string flat = h;
    for (auto& c : flat)
      if (c == '\n' || c == '\r') c = ' ';
    const std::string md = md_text(h);
    CHECK(md.find_first_of("\r\n") == std::string::npos);
    CHECK(commonmark_unescape(md) == flat);
    // Nothing that opens a construct stands unescaped.
    for (std::size_t i = 0; i < md.size(); ++i) {
      if (md[i] == '\\') {
        ++i;
        continue;
      }
      CHECK(std::string("`*_[]<>&|$").find(md[i]) == std::string::npos);
    }
    // The code span: an opening run of n backticks closed by the next run of
    // exactly n, one space stripped from each end when both are spaces.
    const std::string code = md_code(h);
    const std::size_t n = code.find_first_not_of('`');
    REQUIRE(n != std::string::npos);
    REQUIRE(code.size() >= 2 * n);
    const std::string fence(n, '`');
    CHECK(code.substr(code.size() - n) == fence);
    std::string body = code.substr(n, code.size() - 2 * n);
    CHECK(body.find(fence) == std::string::npos);  // no run of n inside closes it early
    if (body.size() >= 2 && body.front() == ' ' && body.back() == ' ' && body.find_first_not_of(' ') != std::string::npos)
      body = body.substr(1, body.size() - 2);
    CHECK(body == flat);
  }
}

TEST_CASE("the command line in the report header stays one cell of one row") {
  TempRoot root;
  ReportContext ctx = root.ctx();
  ctx.command_line = "ctmc-snn report demo --out 'a`b|c\\|d\ne'";
  {
    ReportWriter w(ctx, "demo", "Header");
    w.finish();
  }
  const std::string md = slurp(root.path / "demo" / "report.md");
  bool found = false;
  for (const auto& line : lines_of(md)) {
    if (line.rfind("| command |", 0) != 0) continue;
    found = true;
    INFO(line);
    CHECK(gfm_row_cells(line) == 2);
    CHECK(line.find("``ctmc-snn report demo --out 'a`b\\|c\\|d e'``") != std::string::npos);
  }
  CHECK(found);
}

TEST_CASE("plot titles cannot run commands through gnuplot, and reach the SVG as escaped text") {
  // Without gnuplot nothing is drawn, so there is nothing to inject into;
  // where configure found it, it must still be there.
  REQUIRE(gnuplot_available() == kGnuplotConfigured);
  if (!kGnuplotConfigured) return;
  TempRoot root;
  const fs::path marks = root.path / "marks";
  fs::create_directories(marks);
  const std::string m = marks.string();
  // Backquotes run a shell command even inside gnuplot's double-quoted
  // strings; a quote that ends the string lets system() run.
  Plot p = demo_plot();
  p.title = "T `touch " + m + "/backquote` \" . system(\"touch " + m + "/dq\") . \" ' . system('touch " + m +
            "/sq') . ' \\ & < > end";
  p.xlabel = "x `touch " + m + "/xlabel`";
  p.series[1].title = "s \\\" . system(\"touch " + m + "/escaped\") . \"";
  {
    ReportWriter w(root.ctx(), "demo", "Plot");
    w.plot(p);
    w.finish();
  }
  const fs::path dir = root.path / "demo";
  // And once more from the saved script, as a reader restyling it would.
  const std::string cmd = "cd '" + dir.string() + "' && gnuplot rate.gp >/dev/null 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(fs::is_empty(marks));
  const std::string svg = slurp(dir / "rate.svg");
  // The title is text, the markup characters in it escaped.
  CHECK(svg.find("touch " + m + "/backquote") != std::string::npos);
  CHECK(svg.find("\\ &amp; &lt; ") != std::string::npos);
  if (std::system("xmllint --version >/dev/null 2>&1") == 0) {
    const std::string lint = "xmllint --noout '" + (dir / "rate.svg").string() + "' >/dev/null 2>&1";
    CHECK(std::system(lint.c_str()) == 0);
  }
  // The image's alt text in report.md is the title, Markdown-escaped.
  const std::string md = slurp(dir / "report.md");
  CHECK(md.find("![" + md_text(p.title) + "](rate.svg)") != std::string::npos);
}
