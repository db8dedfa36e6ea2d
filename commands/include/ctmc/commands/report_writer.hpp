// The report writer every report uses (DESIGN.md section 9), and the
// commands that write a report folder of their own (check, convert): it is
// here, below reports/, so that the front ends reach those commands through
// commands/ alone.
//
// A report is one folder <ctx.out_root>/<name>/ holding
//   report.md   header (title, command line, seed, precision, threads, git
//               revision, date UTC), then the body: headings, paragraphs,
//               Markdown tables, image links, a list of checks and of files;
//   meta.json   "generator": "ctmc-snn", the same header fields, machine-readable;
//   *.csv/*.json data files written by the report;
//   <plot>.svg  drawn by gnuplot from <plot>.gp and <plot>.dat, both kept beside
//               the SVG; the script names the data file by its relative name,
//               so `cd <report folder> && gnuplot <plot>.gp` redraws it after
//               restyling.
//
// Only a folder this tool wrote is ever replaced: its meta.json has
// "generator": "ctmc-snn" (or, from a version before that key, all the other
// meta.json keys below) and "report": <name>, and the folder holds only the
// files meta.json lists. Anything else at <out_root>/<name> -- a file, a
// folder of the user's, a report folder with the user's notes added -- is
// refused with ctmc::InputError before the report runs (and again before the
// swap), never deleted.
//
// Nothing half-written: everything goes into a temporary folder
// <out_root>/.<name>.tmp-<pid>-XXXXXX in the same parent (so the final rename
// never crosses a file system). finish() writes report.md and renames the
// folder into place, replacing an older folder of the same name. A writer
// destroyed without finish() (the report threw) removes its temporary folder
// and leaves any older report untouched. A run that is killed cannot clean up;
// the next writer of the same report removes such folders whose pid is no
// longer a process (never those of a live run).
//
// Paper column convention: wherever the paper publishes a value next to one of
// ours, the table has a column named kPaperColumn ("paper") holding the
// published value as printed in the paper (paper_cell), or kNoPaperValue ("—")
// when the paper gives none for that row. JSON files use null for "none".
//
// Errors: a bad file name (empty, with a '/', "..", or a name the writer uses
// itself) or mismatched table/series shapes -> std::invalid_argument (a bug in
// the report); an unusable output location (ctx.out_root, the CLI's --out: not
// a folder, cannot be created or written into, or <name> there is not a report
// folder) -> ctmc::InputError naming --out (exit status 2); a file that cannot
// be written (disk full) -> ctmc::InputError "<final path>: cannot write
// (<reason>)" (io/atomic_write.hpp, exit status 2); gnuplot failures ->
// std::runtime_error.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ctmc::commands {

// Where a report folder goes and the provenance its header records: what a
// writer needs of a report's context (reports' ReportContext extends it).
struct ReportFolderContext {
  std::string out_root = "reports/generated";  // the folder holding report folders
  std::string command_line;                    // as typed, for the header
  unsigned long long seed = 1;
  int threads = 0;          // 0: all cores
  unsigned precision = 256; // bits, where a report uses MPFR/MPFI
};

inline constexpr const char* kPaperColumn = "paper";
inline constexpr const char* kNoPaperValue = "—";

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each row has columns.size() cells
};

// One curve of a plot. Data columns in <plot>.dat: x y [lo hi].
// style is a gnuplot "with" style ("lines", "points", "linespoints",
// "filledcurves", "yerrorbars", ...). When lo/hi are given, "filledcurves"
// draws the band between lo and hi (y ignored) and "yerrorbars" draws y with
// the bar from lo to hi. extra is appended verbatim to the plot clause
// (e.g. "lc rgb '#1f77b4' fs transparent solid 0.25 noborder").
struct Series {
  std::string title;
  std::vector<double> x, y;
  std::string style = "lines";
  int axis = 1;  // 2 = right y axis
  std::vector<double> lo, hi;
  std::string extra;
};

struct Plot {
  std::string name;  // file stem: <name>.dat, <name>.gp, <name>.svg
  std::string title, xlabel, ylabel, y2label;
  bool logx = false, logy = false;
  std::vector<Series> series;
  std::string key = "top left";              // gnuplot "set key" argument
  std::vector<std::string> extra_commands;   // verbatim gnuplot lines before `plot`
  int width = 800, height = 520;             // SVG size in pixels
};

// Provenance recorded in every report header.
struct Provenance {
  std::string command_line, git_revision, date_utc;
  unsigned long long seed = 0;
  unsigned precision = 0;
  int threads = 0;
};

class ReportWriter {
 public:
  ReportWriter(const ReportFolderContext& ctx, std::string name, std::string title);
  ~ReportWriter();  // without finish(): removes the temporary folder
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;

  // Body of report.md, in call order. level 2 = "##".
  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& markdown);
  // Markdown table into report.md; also <csv_name> when one is given.
  void table(const Table& t, const std::string& csv_name = "");
  // Records a check as a bullet in report.md and in meta.json; all_passed()
  // lets a report return its exit status (0 all held, 1 otherwise).
  void check(const std::string& what, bool passed, const std::string& detail = "");
  bool all_passed() const { return failed_checks_ == 0; }
  int exit_status() const { return all_passed() ? 0 : 1; }

  // Data files inside the report folder (name relative to it, no '/').
  void write_csv(const std::string& file, const Table& t);
  void write_json(const std::string& file, const nlohmann::ordered_json& j);
  void write_text(const std::string& file, const std::string& content);
  // The path in the temporary folder of a file the report writes itself
  // (e.g. a network through sim::save_network), listed in meta.json with
  // `what` like the files written above.
  std::string file_path(const std::string& file, const std::string& what);
  // <name>.dat + <name>.gp + <name>.svg and an image link in report.md. Without
  // gnuplot on PATH the .dat and .gp are still written and report.md says the
  // SVG was not drawn.
  void plot(const Plot& p);

  std::string dir() const { return tmp_dir_; }         // the temporary folder
  std::string final_dir() const { return final_dir_; }  // where finish() puts it
  const Provenance& provenance() const { return prov_; }
  // The MPFR precision the report actually uses, when it differs from the
  // requested ctx.precision (e.g. clamped); the header records this value.
  void set_precision(unsigned bits);

  // Writes report.md and meta.json, renames the folder into place. Call once.
  void finish();

 private:
  std::string path_of(const std::string& file, bool internal = false) const;
  std::string shown(const std::string& file) const;
  void note_file(const std::string& file, const std::string& what);

  std::string name_, title_, parent_, tmp_dir_, final_dir_;
  Provenance prov_;
  std::string body_;
  std::vector<std::pair<std::string, std::string>> files_;  // name, description
  struct CheckRecord {
    std::string what, detail;
    bool passed;
  };
  std::vector<CheckRecord> checks_;
  int failed_checks_ = 0;
  bool finished_ = false;
};

// Checks that out_root (ctx.out_root, the CLI's --out; empty = ".") is a
// folder we can write into, creating it when missing; otherwise throws
// ctmc::InputError naming --out. The writer calls it; the CLI calls it once
// before running any report.
void check_output_root(const std::string& out_root);

// --- provenance ---------------------------------------------------------
// The revision the program was built from: `git rev-parse --short HEAD` of
// the source tree at build time, plus "-dirty" when tracked files had
// changes; "unknown" without git (cmake/git_revision.cmake).
std::string git_revision();
std::string utc_now();  // "YYYY-MM-DD HH:MM:SS UTC"

// --- number formatting (all give "nan", "inf", "-inf" for non-finite) ----
std::string fmt_sci(double v, int digits = 3);   // 1.235e-04 (digits after the point)
std::string fmt_fix(double v, int digits = 3);   // 0.000
std::string fmt_g(double v, int digits = 6);     // shortest of %g with `digits` significant
std::string fmt_pct(double v, int digits = 2);   // 12.34% from 0.1234
std::string fmt_int(long long v);                // 1234567
// Round-trip exact text of a double (%.17g), for data files.
std::string fmt_exact(double v);

// --- paper column ---------------------------------------------------------
// The published value as the paper prints it, or "—".
std::string paper_cell(const std::optional<std::string>& published);
std::string paper_cell(const std::optional<double>& published, int significant = 4);

// --- Markdown / CSV helpers ----------------------------------------------
// Cells are Markdown; each is kept one cell of one row ('|' escaped, line
// breaks as spaces), so user text goes in through md_text or md_code.
std::string markdown_table(const Table& t);
// Any text (a path, a name, a command line) as Markdown that shows it
// literally, mid-line: specials backslash-escaped, line breaks as spaces.
std::string md_text(const std::string& s);
// The same as a code span (monospace, verbatim).
std::string md_code(const std::string& s);
std::string csv_text(const Table& t);  // RFC 4180: quotes fields with , " CR LF
std::string csv_field(const std::string& s);

}  // namespace ctmc::commands
