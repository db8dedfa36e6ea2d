// Report writer: see report_writer.hpp for the folder layout and the guarantees.
#include "ctmc/commands/report_writer.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "ctmc/core/errors.hpp"
#include "ctmc/io/atomic_write.hpp"
#include "ctmc/commands/build_revision.hpp"  // generated: CTMC_BUILD_REVISION

namespace ctmc::commands {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxListedChecks = 30;

// Names the writer produces itself; a report may not overwrite them.
bool reserved_name(const std::string& f) { return f == "report.md" || f == "meta.json"; }

bool simple_name(const std::string& f) {
  return !f.empty() && f != "." && f != ".." && f.find('/') == std::string::npos &&
         f.find('\0') == std::string::npos;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The meta.json key that marks a folder as written by this tool (the writer's
// own folders are the only ones finish() replaces).
constexpr const char* kGeneratorKey = "generator";
constexpr const char* kGenerator = "ctmc-snn";

// A name from the file system or a file, quoted for a one-line message: at most
// 60 characters, control characters shown as '?'.
std::string quoted(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return "'" + out + (s.size() > 60 ? "...'" : "'");
}

// Why the existing folder `dir` is not a report folder this tool wrote (""
// when it is one, which finish() may replace). It is one when
//   - its meta.json (a regular file) is a JSON object whose "report" is
//     `name` and which has "generator": "ctmc-snn", or, written by a version
//     before that key, all of the writer's other keys (title, command_line,
//     git_revision, date_utc, checks_passed, checks, files); and
//   - it holds nothing but regular files the writer lists there (report.md,
//     meta.json and meta.json's "files"): notes or folders of the user's put
//     inside an old report are never deleted with it.
std::string not_a_report_folder(const std::string& dir, const std::string& name) {
  const fs::path meta_path = fs::path(dir) / "meta.json";
  std::error_code ec;
  const auto st = fs::symlink_status(meta_path, ec);
  if (!fs::is_regular_file(st)) return "it has no meta.json written by ctmc-snn";
  if (fs::file_size(meta_path, ec) > (std::uintmax_t(64) << 20) || ec) return "its meta.json is not one ctmc-snn wrote";
  nlohmann::json meta;
  {
    std::ifstream in(meta_path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    meta = nlohmann::json::parse(ss.str(), nullptr, false);
  }
  const auto has_string = [&](const char* key) { return meta.contains(key) && meta[key].is_string(); };
  if (!meta.is_object() || !has_string("report") || meta["report"] != name)
    return "its meta.json is not that of report " + quoted(name);
  const bool marked = has_string(kGeneratorKey) && meta[kGeneratorKey] == kGenerator;
  bool older = true;
  for (const char* key : {"title", "command_line", "git_revision", "date_utc", "checks_passed", "checks", "files"})
    older = older && meta.contains(key);
  if (!marked && !older) return "its meta.json is not one ctmc-snn wrote";
  if (!meta.contains("files") || !meta["files"].is_array()) return "its meta.json lists no files";
  std::set<std::string> listed = {"report.md", "meta.json"};
  for (const auto& f : meta["files"])
    if (f.is_string()) listed.insert(f.get<std::string>());
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec) || !listed.count(entry))
      return "it holds " + quoted(entry) + ", which the report did not write";
  }
  if (ec) return "it cannot be read (" + ec.message() + ")";
  return "";
}

// A folder at final_dir other than one of this report's is the user's: never
// swapped away and deleted (exit 2 instead).
void refuse_foreign_folder(const std::string& final_dir, const std::string& name) {
  std::error_code ec;
  const auto st = fs::symlink_status(final_dir, ec);
  if (ec || !fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw InputError("out_root", fmt::format("'{}' exists and is not a report folder; move it or choose another "
                                             "output folder",
                                             final_dir));
  const std::string why = not_a_report_folder(final_dir, name);
  if (!why.empty())
    throw InputError("out_root", fmt::format("'{}' is not a report folder written by ctmc-snn ({}), so it is not "
                                             "replaced; move it or choose another output folder",
                                             final_dir, why));
}

// Files inside the temporary folder; errors name the file where the report
// will be (io/atomic_write.hpp's I/O error path: exit 2, strerror).
void write_file(const std::string& path, const std::string& content, const std::string& shown_as) {
  io::write_file(path, content, shown_as);
}

std::string make_temp_dir(const std::string& parent, const std::string& stem) {
  std::string templ = (fs::path(parent) / (stem + "XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))  // the output location (out_root) is unusable: bad input, not a bug
    throw ctmc::InputError("out_root", fmt::format("cannot create a temporary folder in '{}': {}", parent,
                                                   std::strerror(errno)));
  return std::string(buf.data());
}

// The stem of this process's temporary folders for report `name`:
// ".<name>.tmp-<pid>-" (and ".<name>.old-<pid>-" while swapping), so that
// the folders of a run that was killed can be told from those of a running one.
std::string temp_stem(const std::string& name, const char* kind) {
  return fmt::format(".{}.{}-{}-", name, kind, static_cast<long>(::getpid()));
}

// When process `pid` started, in seconds since the epoch: /proc/<pid>/stat's
// starttime (field 22, clock ticks after boot) plus /proc/stat's btime;
// nothing where /proc does not say.
std::optional<double> process_start_time(long pid) {
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return std::nullopt;
  const auto comm_end = line.rfind(')');  // the command name may hold spaces and parentheses
  if (comm_end == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(comm_end + 1));
  std::string field;
  for (int i = 3; i <= 22 && (fields >> field); ++i)
    if (i == 22) {
      std::ifstream boot("/proc/stat");
      for (std::string key; boot >> key;)
        if (key == "btime") {
          double btime = 0;
          const long ticks = ::sysconf(_SC_CLK_TCK);
          if (!(boot >> btime) || ticks <= 0) return std::nullopt;
          return btime + std::strtod(field.c_str(), nullptr) / static_cast<double>(ticks);
        }
      return std::nullopt;
    }
  return std::nullopt;
}

// Whether the temporary folder `dir` of pid `pid` belongs to a live run. A
// pid comes again (after the kernel's pid_max, and in every fresh container,
// where a run is often pid 1 or another small pid): a folder last modified
// before the process now holding that pid started is not that process's.
bool held_by_live_run(const fs::path& dir, long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  const auto started = process_start_time(pid);
  struct stat st {};
  if (!started || ::stat(dir.c_str(), &st) != 0) return true;  // alive (or not ours to judge)
  const double modified = static_cast<double>(st.st_mtim.tv_sec) + 1e-9 * static_cast<double>(st.st_mtim.tv_nsec);
  constexpr double kBootTimeSlack = 2;  // btime is whole seconds
  return modified >= *started - kBootTimeSlack;
}

// Removes the temporary folders of report `name` left in `parent` by runs
// that were killed (Ctrl-C, timeout) before they could clean up: those whose
// pid is no longer a process, or is a process started after the folder was
// last written (held_by_live_run). A folder of a live run (including one of
// another run writing the same report right now) is left alone.
void remove_stale_temp_dirs(const std::string& parent, const std::string& name) {
  const std::string prefixes[] = {fmt::format(".{}.tmp-", name), fmt::format(".{}.old-", name)};
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    for (const auto& prefix : prefixes) {
      if (entry.rfind(prefix, 0) != 0) continue;
      const char* digits = entry.c_str() + prefix.size();
      char* after = nullptr;
      errno = 0;
      const long pid = std::strtol(digits, &after, 10);
      if (errno != 0 || after == digits || *after != '-' || pid <= 0) continue;
      if (held_by_live_run(it->path(), pid)) continue;
      std::error_code rm;
      fs::remove_all(it->path(), rm);  // best effort
    }
  }
}

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  std::string t = s;
  if (t.back() == '%') t.pop_back();
  if (t == "nan" || t == "inf" || t == "-inf") return true;
  char* end = nullptr;
  errno = 0;
  std::strtod(t.c_str(), &end);
  return end && *end == '\0' && end != t.c_str();
}

// A table cell is Markdown source; this keeps it one cell and one row
// whatever it holds. GFM splits a row at every '|' that is not backslash-
// escaped, and its row scanner reads backslashes in pairs (a doubled
// backslash is an escaped backslash), so a '|' after an even run of
// backslashes (none, or two) gets one more; after an odd run it is already
// escaped. Line breaks would end the row: they become spaces.
std::string md_cell(const std::string& s) {
  std::string out;
  std::size_t backslashes = 0;  // the run just before the current character
  for (char c : s) {
    if (c == '|' && backslashes % 2 == 0) out += '\\';
    if (c == '\n' || c == '\r') c = ' ';
    out += c;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return out;
}

void check_table(const Table& t) {
  if (t.columns.empty()) throw std::invalid_argument("report table: no columns");
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (t.rows[i].size() != t.columns.size())
      throw std::invalid_argument(fmt::format("report table: row {} has {} cells, expected {}", i,
                                              t.rows[i].size(), t.columns.size()));
}

// `s` as a gnuplot string constant that is inert: single-quoted, the only
// kind in which gnuplot substitutes no backquoted shell command (`cmd` runs
// even inside double quotes) and processes no backslash escapes; a quote is
// doubled (''), and control characters, which would end the command line,
// become spaces.
std::string gp_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'') out += "''";
    else if (u < 0x20 || u == 0x7f) out += ' ';
    else out += c;
  }
  return out + "'";
}

// Text for a '#' comment line (gnuplot script or data): line breaks and other
// control characters would end the comment; a trailing backslash would
// continue it over the next line of the script.
std::string one_line(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (!s.empty() && s.back() == '\\') s += ' ';
  return s;
}

std::string dat_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string("NaN"); }

bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string d;
  while (std::getline(ss, d, ':')) {
    if (d.empty()) continue;
    if (::access((fs::path(d) / "gnuplot").c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Puts `from` at `to`, replacing an existing folder `to`. On Linux the swap is
// atomic (renameat2 RENAME_EXCHANGE), so readers never see a missing report;
// elsewhere the old folder is first moved aside.
void replace_dir(const std::string& from, const std::string& to, const std::string& parent,
                 const std::string& name) {
  std::error_code ec;
  const auto rename_or_fail = [&](const std::string& a, const std::string& b) {
    fs::rename(a, b, ec);
    if (ec) io::fail(to, "cannot rename " + a + " into place", ec.value());
  };
  if (!fs::exists(fs::symlink_status(to, ec))) {
    rename_or_fail(from, to);
    return;
  }
#ifdef RENAME_EXCHANGE
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(from, ec);  // now holds the old report (best effort: the new one is in place)
    return;
  }
#endif
  std::string old = make_temp_dir(parent, temp_stem(name, "old"));
  rename_or_fail(to, old);  // onto an empty folder: allowed by POSIX rename
  fs::rename(from, to, ec);
  if (ec) {
    const int why = ec.value();
    fs::rename(old, to, ec);
    io::fail(to, "cannot rename " + from + " into place", why);
  }
  fs::remove_all(old, ec);
}

}  // namespace

// --- provenance -------------------------------------------------------------

std::string git_revision() { return CTMC_BUILD_REVISION; }

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// --- formatting ---------------------------------------------------------------

namespace {
std::optional<std::string> non_finite(double v) {
  if (std::isnan(v)) return std::string("nan");
  if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
  return std::nullopt;
}
}  // namespace

std::string fmt_sci(double v, int digits) {
  if (auto s = non_finite(v)) return *s;
  return fmt::format("{:.{}e}", v, digits);
}
std::string fmt_fix(double v, int digits) {
  if (auto s = non_finite(v)) return *s;
  return fmt::format("{:.{}f}", v, digits);
}
std::string fmt_g(double v, int digits) {
  if (auto s = non_finite(v)) return *s;
  return fmt::format("{:.{}g}", v, digits);
}
std::string fmt_pct(double v, int digits) {
  if (auto s = non_finite(v)) return *s;
  return fmt::format("{:.{}f}%", 100.0 * v, digits);
}
std::string fmt_int(long long v) { return fmt::format("{}", v); }
std::string fmt_exact(double v) {
  if (auto s = non_finite(v)) return *s;
  return fmt::format("{}", v);  // shortest text that reads back to v
}

std::string paper_cell(const std::optional<std::string>& published) {
  return published && !published->empty() ? *published : std::string(kNoPaperValue);
}
std::string paper_cell(const std::optional<double>& published, int significant) {
  return published ? fmt_g(*published, significant) : std::string(kNoPaperValue);
}

std::string md_text(const std::string& s) {
  // Every ASCII punctuation character that can open or close a CommonMark /
  // GFM construct (emphasis, code, links, images, HTML, entities, escapes,
  // table pipes, math); the rest (/ , : ; = ? @ % ' " . -) never can
  // mid-line and stay readable in paths.
  static const std::string kSpecial = "\\`*_{}[]()<>#+!|~&$^";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';  // a line break would end the paragraph or row
    else if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string md_code(const std::string& s) {
  // A code span shows its content verbatim; its fence is one backtick longer
  // than the longest run inside, and a content that starts or ends with a
  // backtick, or with spaces at both ends, is padded by a space each side
  // (the parser strips exactly one from each end).
  std::string body;
  std::size_t run = 0, longest = 0;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    body += c;
  }
  const std::string fence(longest + 1, '`');
  const bool pad = body.empty() || body.front() == '`' || body.back() == '`' ||
                   (body.front() == ' ' && body.back() == ' ');
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string markdown_table(const Table& t) {
  check_table(t);
  std::string out = "|";
  for (const auto& c : t.columns) out += " " + md_cell(c) + " |";
  out += "\n|";
  for (size_t j = 0; j < t.columns.size(); ++j) {
    // Right-align columns whose cells are all numbers (or "—").
    bool numeric = !t.rows.empty(), any = false;
    for (const auto& r : t.rows) {
      if (r[j] == kNoPaperValue || r[j].empty()) continue;
      any = true;
      if (!looks_numeric(r[j])) numeric = false;
    }
    out += numeric && any ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (const auto& c : r) out += " " + md_cell(c) + " |";
    out += "\n";
  }
  return out;
}

std::string csv_field(const std::string& s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
               (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_text(const Table& t) {
  check_table(t);
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t j = 0; j < cells.size(); ++j) out += (j ? "," : "") + csv_field(cells[j]);
    out += "\n";
  };
  line(t.columns);
  for (const auto& r : t.rows) line(r);
  return out;
}

void check_output_root(const std::string& out_root) {
  const std::string dir = out_root.empty() ? std::string(".") : out_root;
  if (dir.find('\0') != std::string::npos) throw ctmc::InputError("out_root", "the folder name contains a NUL byte");
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw ctmc::InputError("out_root", fmt::format("'{}' exists and is not a folder", dir));
  } else {
    fs::create_directories(dir, ec);
    if (ec) throw ctmc::InputError("out_root", fmt::format("cannot create the folder '{}': {}", dir, ec.message()));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw ctmc::InputError("out_root",
                           fmt::format("cannot write into the folder '{}': {}", dir, std::strerror(errno)));
}

// --- the writer -----------------------------------------------------------------

ReportWriter::ReportWriter(const ReportFolderContext& ctx, std::string name, std::string title)
    : name_(std::move(name)), title_(std::move(title)) {
  if (!simple_name(name_) || name_.front() == '.')
    throw std::invalid_argument("report writer: bad report name '" + name_ + "'");
  parent_ = ctx.out_root.empty() ? std::string(".") : ctx.out_root;
  check_output_root(parent_);
  final_dir_ = (fs::path(parent_) / name_).string();
  // finish() replaces an old report folder; anything else at that path is the
  // user's and must not be swapped away and deleted. Checked here, before the
  // report's work, and again in finish().
  refuse_foreign_folder(final_dir_, name_);
  remove_stale_temp_dirs(parent_, name_);
  tmp_dir_ = make_temp_dir(parent_, temp_stem(name_, "tmp"));
  prov_.command_line = ctx.command_line;
  prov_.seed = ctx.seed;
  prov_.precision = ctx.precision;
  prov_.threads = ctx.threads;
  prov_.git_revision = git_revision();
  prov_.date_utc = utc_now();
}

ReportWriter::~ReportWriter() {
  if (!finished_) {
    std::error_code ec;
    fs::remove_all(tmp_dir_, ec);  // never throw from a destructor
  }
}

// Where `file` will be once the report is in place, for error messages.
std::string ReportWriter::shown(const std::string& file) const { return (fs::path(final_dir_) / file).string(); }

std::string ReportWriter::path_of(const std::string& file, bool internal) const {
  if (finished_) throw std::logic_error("report writer: '" + file + "' written after finish()");
  if (!simple_name(file) || (!internal && reserved_name(file)))
    throw std::invalid_argument("report writer: bad file name '" + file + "' in report " + name_);
  return (fs::path(tmp_dir_) / file).string();
}

std::string ReportWriter::file_path(const std::string& file, const std::string& what) {
  std::string path = path_of(file);
  note_file(file, what);
  return path;
}

void ReportWriter::note_file(const std::string& file, const std::string& what) {
  for (auto& f : files_)
    if (f.first == file) {
      f.second = what;
      return;
    }
  files_.emplace_back(file, what);
}

void ReportWriter::heading(const std::string& text, int level) {
  level = std::clamp(level, 2, 6);  // "#" is the report title
  body_ += "\n" + std::string(level, '#') + " " + text + "\n\n";
}

void ReportWriter::paragraph(const std::string& markdown) { body_ += markdown + "\n\n"; }

void ReportWriter::table(const Table& t, const std::string& csv_name) {
  body_ += markdown_table(t);
  if (!csv_name.empty()) {
    write_csv(csv_name, t);
    body_ += "\n(data: [" + csv_name + "](" + csv_name + "))\n";
  }
  body_ += "\n";
}

void ReportWriter::check(const std::string& what, bool passed, const std::string& detail) {
  checks_.push_back({what, detail, passed});
  if (!passed) ++failed_checks_;
}

void ReportWriter::write_csv(const std::string& file, const Table& t) {
  write_file(path_of(file), csv_text(t), shown(file));
  note_file(file, "CSV data");
}

void ReportWriter::write_json(const std::string& file, const nlohmann::ordered_json& j) {
  write_file(path_of(file), j.dump(2) + "\n", shown(file));
  note_file(file, "JSON data");
}

void ReportWriter::write_text(const std::string& file, const std::string& content) {
  write_file(path_of(file), content, shown(file));
  note_file(file, "text");
}

void ReportWriter::plot(const Plot& p) {
  if (!simple_name(p.name)) throw std::invalid_argument("report plot: bad name '" + p.name + "'");
  if (p.series.empty()) throw std::invalid_argument("report plot " + p.name + ": no series");
  const std::string dat = p.name + ".dat", gp = p.name + ".gp", svg = p.name + ".svg";

  // Data: one gnuplot block per series (two blank lines apart, `index i`).
  std::string d = fmt::format("# {} -- data for {} (one block per series; columns: x y [lo hi])\n", one_line(p.title), gp);
  bool right_axis = false;
  for (size_t i = 0; i < p.series.size(); ++i) {
    const Series& s = p.series[i];
    bool band = !s.lo.empty() || !s.hi.empty();
    if (s.x.empty()) throw std::invalid_argument(fmt::format("report plot {}: series {} is empty", p.name, i));
    if (s.y.size() != s.x.size() || (band && (s.lo.size() != s.x.size() || s.hi.size() != s.x.size())))
      throw std::invalid_argument(fmt::format("report plot {}: series {} has columns of different lengths", p.name, i));
    right_axis |= s.axis == 2;
    if (i) d += "\n\n";
    d += fmt::format("# index {}: {}\n", i, one_line(s.title));
    for (size_t k = 0; k < s.x.size(); ++k) {
      d += dat_number(s.x[k]) + " " + dat_number(s.y[k]);
      if (band) d += " " + dat_number(s.lo[k]) + " " + dat_number(s.hi[k]);
      d += "\n";
    }
  }

  // Script: refers to the data and the SVG by relative names only.
  std::string g;
  g += fmt::format("# {}\n# Written by ctmc-snn (report {}). Redraw from inside this folder:\n#   gnuplot {}\n", one_line(p.title),
                   name_, gp);
  g += fmt::format("set terminal svg size {},{} dynamic noenhanced font 'sans,12' background rgb 'white'\n",
                   p.width, p.height);
  g += "set encoding utf8\n";
  g += fmt::format("set output {}\n", gp_string(svg));
  g += fmt::format("set title {}\n", gp_string(p.title));
  g += fmt::format("set xlabel {}\nset ylabel {}\n", gp_string(p.xlabel), gp_string(p.ylabel));
  g += "set grid\n";
  if (!p.key.empty()) g += "set key " + p.key + "\n";
  if (p.logx) g += "set logscale x\n";
  if (p.logy) g += "set logscale y\n";
  if (right_axis) {
    g += fmt::format("set y2label {}\nset y2tics\nset ytics nomirror\n", gp_string(p.y2label));
    if (p.logy) g += "set logscale y2\n";
  }
  for (const auto& c : p.extra_commands) g += c + "\n";
  g += "plot ";
  for (size_t i = 0; i < p.series.size(); ++i) {
    const Series& s = p.series[i];
    bool band = !s.lo.empty();
    std::string using_cols = "1:2";
    if (band && s.style.rfind("filledcurves", 0) == 0) using_cols = "1:3:4";
    else if (band && s.style.find("errorbars") != std::string::npos) using_cols = "1:2:3:4";
    if (i) g += ", \\\n     ";
    g += fmt::format("{} index {} using {} with {} title {}", i ? std::string("''") : gp_string(dat), i,
                     using_cols, s.style, gp_string(s.title));
    if (s.axis == 2) g += " axes x1y2";
    if (!s.extra.empty()) g += " " + s.extra;
  }
  g += "\n";

  write_file(path_of(dat), d, shown(dat));
  write_file(path_of(gp), g, shown(gp));
  note_file(dat, "plot data (" + p.name + ")");
  note_file(gp, "gnuplot script (" + p.name + ")");

  if (!gnuplot_on_path()) {
    body_ += fmt::format("*Plot {} not drawn: gnuplot not found (Debian package gnuplot-nox). Run `gnuplot {}` in "
                         "this folder.*\n\n",
                         p.name, gp);
    std::fprintf(stderr, "report %s: gnuplot not found; %s not drawn\n", name_.c_str(), svg.c_str());
    return;
  }
  const std::string log = p.name + ".gnuplot.log";
  path_of(log, true);
  std::string cmd = "cd " + shell_quote(tmp_dir_) + " && gnuplot " + shell_quote(gp) + " >" + shell_quote(log) + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string log_path = (fs::path(tmp_dir_) / log).string();
  std::string log_text;
  {
    std::ifstream lf(log_path);
    std::stringstream ss;
    ss << lf.rdbuf();
    log_text = ss.str();
  }
  std::error_code ec;
  fs::remove(log_path, ec);
  if (rc != 0 || !fs::exists(fs::path(tmp_dir_) / svg))
    throw std::runtime_error(fmt::format("report {}: gnuplot failed on {}: {}", name_, gp, trim(log_text)));
  note_file(svg, "plot (" + p.name + ")");
  body_ += fmt::format("![{}]({})\n\n", md_text(p.title), svg);
  body_ += fmt::format("Data [{}]({}), script [{}]({}) (restyle and redraw with `gnuplot {}` in this folder).\n\n",
                       dat, dat, gp, gp, gp);
}

void ReportWriter::set_precision(unsigned bits) { prov_.precision = bits; }

void ReportWriter::finish() {
  if (finished_) throw std::logic_error("report writer: finish() called twice");
  std::string md = "# " + title_ + "\n\n";
  Table header{{"field", "value"},
               {{"report", "`" + name_ + "`"},
                {"command", prov_.command_line.empty() ? std::string("`(library call)`") : md_code(prov_.command_line)},
                {"seed", fmt::format("{}", prov_.seed)},
                {"precision", fmt::format("{} bits", prov_.precision)},
                {"threads", prov_.threads == 0 ? std::string("all cores") : fmt::format("{}", prov_.threads)},
                {"git revision", prov_.git_revision},
                {"date", prov_.date_utc}}};  // the value ends in "UTC"
  md += markdown_table(header) + "\n";
  md += fmt::format("Wherever the paper publishes a value, tables show it in a column `{}` ({} when it gives none).\n\n",
                    kPaperColumn, kNoPaperValue);
  md += body_;
  if (!checks_.empty()) {
    md += fmt::format("\n## Checks ({} of {} held)\n\n", checks_.size() - failed_checks_, checks_.size());
    // Long lists: failures in full, passes only counted (all are in meta.json).
    const bool list_passes = checks_.size() <= kMaxListedChecks;
    for (const auto& c : checks_)
      if (!c.passed || list_passes)
        md += fmt::format("- {} {}{}\n", c.passed ? "**PASS**" : "**FAIL**", c.what,
                          c.detail.empty() ? std::string() : ": " + c.detail);
    if (!list_passes)
      md += fmt::format("- {} passing checks not listed here; every check is in [meta.json](meta.json)\n",
                        checks_.size() - failed_checks_);
    md += "\n";
  }
  if (!files_.empty()) {
    md += "\n## Files\n\n";
    for (const auto& [f, what] : files_) md += fmt::format("- [{}]({}): {}\n", f, f, what);
  }

  nlohmann::ordered_json meta;
  meta[kGeneratorKey] = kGenerator;
  meta["report"] = name_;
  meta["title"] = title_;
  meta["command_line"] = prov_.command_line;
  meta["seed"] = prov_.seed;
  meta["precision_bits"] = prov_.precision;
  meta["threads"] = prov_.threads;
  meta["git_revision"] = prov_.git_revision;
  meta["date_utc"] = prov_.date_utc;
  meta["checks_passed"] = all_passed();
  meta["checks"] = nlohmann::ordered_json::array();
  for (const auto& c : checks_) meta["checks"].push_back({{"check", c.what}, {"passed", c.passed}, {"detail", c.detail}});
  meta["files"] = nlohmann::ordered_json::array();
  for (const auto& f : files_) meta["files"].push_back(f.first);

  write_file(path_of("report.md", true), md, shown("report.md"));
  write_file(path_of("meta.json", true), meta.dump(2) + "\n", shown("meta.json"));
  refuse_foreign_folder(final_dir_, name_);  // the folder may have appeared while the report ran
  // Folders from mkdtemp are private (0700); a report is for everyone to read.
  ::chmod(tmp_dir_.c_str(), 0755);
  replace_dir(tmp_dir_, final_dir_, parent_, name_);
  finished_ = true;
}

}  // namespace ctmc::commands
