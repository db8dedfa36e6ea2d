// The claims checker: see ctmc/commands/check.hpp for the file format and the
// meaning of every verdict.
#include "ctmc/commands/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/commands/command_text.hpp"
#include "ctmc/commands/document.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/sim/neurons/ssa.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/sim/neurons/trace.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/quantiles.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::commands {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using solvers::Mpfr;
using solvers::Rational;

constexpr std::size_t kMinReferenceTrials = 20000;
constexpr double kMaxExpectedTransitions = 1e10;  // of our reference simulation
constexpr std::size_t kMaxTrials = 1000000000;

enum class TolKind { Exact, Digits, Relative, Absolute };
struct Tolerance {
  TolKind kind = TolKind::Exact;
  double value = 0;
  std::string text() const {
    switch (kind) {
      case TolKind::Exact: return "exact";
      case TolKind::Digits: return "digits";
      case TolKind::Relative: return fmt::format("relative {:g}", value);
      case TolKind::Absolute: return fmt::format("absolute {:g}", value);
    }
    return "";
  }
};

struct Value {
  std::string quantity, text;
  Rational exact;
};

struct Claim {
  std::string id, kind, who;  // who: "claim 'id'" for messages
  solvers::Model model;
  std::string model_source;
  Rational H{0}, T{0};
  std::string h_text, t_text;
  std::vector<Value> values;
  std::optional<Tolerance> tolerance;
  std::string activation, domain, alpha = "1", start, family;  // family: a fit claim without a chain
  std::size_t points = 401, trials = 0;
  double false_alarm = 1e-3, rate_alpha = 1;
  // network
  std::string net;
  sim::DataSource data;
  // Read while the file is validated: a missing or malformed network or data
  // file is bad input (exit 2), not a claim we cannot answer.
  sim::AnyNetwork net_loaded;  // dense (Mlp) or a layer graph
  sim::DatasetSplit split;
  std::vector<sim::NeuronModel> neurons;
  sim::NetworkSimOptions net_options;
  double neuron_steps = 0;  // of our reference run (validate_network)
  std::string conventions;  // sampler, trace weight, output scale, ... in words
};

// JSON pointer escaping (RFC 6901) of one key.
std::string pointer_key(const std::string& k) {
  std::string out;
  for (char c : k) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// What a path of a claims file must name.
enum class PathKind { File, Folder };

class Parser {
 public:
  Parser(std::string file, std::map<std::string, std::string> texts, const CheckOptions& options)
      : file_(std::move(file)),
        texts_(std::move(texts)),
        allow_outside_(options.allow_outside_paths),
        replaced_folder_(options.replaced_folder) {
    const fs::path claims_dir = fs::path(file_).parent_path();
    base_ = !options.base_dir.empty() ? fs::path(options.base_dir) : claims_dir.empty() ? fs::path(".") : claims_dir;
    std::error_code ec;
    base_canonical_ = fs::weakly_canonical(base_, ec);
    if (ec) throw InputError(file_, fmt::format("cannot resolve its folder ({})", ec.message()));
  }

  [[noreturn]] void bad(const std::string& who, const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}: {}", file_, who, field, what));
  }

  // The exact value of a number or exact string at pointer/field.
  Value number(const ojson& v, const std::string& who, const std::string& field, const std::string& pointer) const {
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else if (v.is_number()) {
      const auto it = texts_.find(pointer);
      text = it != texts_.end() ? it->second : v.dump();
    } else {
      bad(who, field, fmt::format("expected a number or an exact string, got {}", solvers::json_type_name(v)));
    }
    const auto q = solvers::parse_exact(text);
    if (!q) bad(who, field, fmt::format("'{}' is not an exact number (a decimal or p/q)", text));
    return {field, text, *q};
  }

  // A claimed value that check compares as a double (network, fit and
  // simulation claims): beyond the largest double it would round to an
  // infinity, which every tolerance then accepts, and below the smallest
  // normal double it would lose its digits or become 0.
  void require_double(const std::string& who, const Value& v) const {
    if (v.exact == 0) return;
    const double d = std::abs(solvers::to_double(v.exact));
    if (!(d <= std::numeric_limits<double>::max()))
      bad(who, v.quantity, fmt::format("{} is beyond the range of a double (magnitude at most {:.6g}): not checkable",
                                       quote_excerpt(v.text), std::numeric_limits<double>::max()));
    if (d < std::numeric_limits<double>::min())
      bad(who, v.quantity, fmt::format("{} is below the smallest normal double ({:.6g}): not checkable",
                                       quote_excerpt(v.text), std::numeric_limits<double>::min()));
  }

  std::string string(const ojson& c, const std::string& who, const std::string& field, bool required) const {
    if (!c.contains(field)) {
      if (required) bad(who, field, "missing");
      return "";
    }
    if (!c[field].is_string()) bad(who, field, fmt::format("expected a string, got {}", solvers::json_type_name(c[field])));
    return c[field].get<std::string>();
  }

  std::size_t count(const ojson& c, const std::string& who, const std::string& field, std::size_t fallback,
                    std::size_t max) const {
    if (!c.contains(field)) return fallback;
    const auto& v = c[field];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
      bad(who, field, fmt::format("expected a whole number in 0..{}, got {}", max, solvers::json_excerpt(v)));
    return static_cast<std::size_t>(v.get<std::uint64_t>());
  }

  Tolerance tolerance(const ojson& v, const std::string& who) const {
    Tolerance t;
    if (v.is_string()) {
      const auto s = v.get<std::string>();
      if (s == "exact") return t;
      if (s == "digits") {
        t.kind = TolKind::Digits;
        return t;
      }
      bad(who, "tolerance", fmt::format("'{}' is not one of \"exact\", \"digits\", {{\"relative\": r}}, {{\"absolute\": a}}", s));
    }
    if (!v.is_object() || v.size() != 1 || !(v.contains("relative") || v.contains("absolute")))
      bad(who, "tolerance", "expected \"exact\", \"digits\", {\"relative\": r} or {\"absolute\": a}");
    const bool rel = v.contains("relative");
    const auto& x = rel ? v["relative"] : v["absolute"];
    if (!x.is_number() || !(x.get<double>() >= 0) || !std::isfinite(x.get<double>()))
      bad(who, rel ? "tolerance.relative" : "tolerance.absolute", "expected a finite number >= 0");
    t.kind = rel ? TolKind::Relative : TolKind::Absolute;
    t.value = x.get<double>();
    return t;
  }

  // A path written in field `field`: resolved against the base folder,
  // which it must not leave (symbolic links followed) unless outside paths
  // are allowed, and, where it exists, of the kind wanted. Checked before
  // anything opens it: a FIFO named as a model would block the open.
  std::string path(const std::string& who, const std::string& field, const std::string& text, PathKind kind) const {
    if (text.empty()) bad(who, field, "empty path");
    if (text.find('\0') != std::string::npos) bad(who, field, fmt::format("the path {} holds a NUL byte", quote_excerpt(text)));
    const fs::path p(text);
    const fs::path resolved = p.is_absolute() ? p : base_ / p;
    std::error_code ec;
    if (!allow_outside_) {
      const fs::path real = fs::weakly_canonical(resolved, ec);
      if (ec) bad(who, field, fmt::format("cannot resolve {} ({})", quote_excerpt(text), ec.message()));
      if (!inside(real, base_canonical_))
        bad(who, field, fmt::format("{} lies outside the folder {} of the claims (--allow-outside-paths allows it)",
                                    quote_excerpt(text), quote_excerpt(base_.string())));
    }
    const auto st = fs::status(resolved, ec);
    if (fs::exists(st)) {
      if (kind == PathKind::File && !fs::is_regular_file(st))
        bad(who, field, fmt::format("{} is not a regular file ({})", quote_excerpt(text), file_type_name(st.type())));
      if (kind == PathKind::Folder && !fs::is_directory(st))
        bad(who, field, fmt::format("{} is not a folder", quote_excerpt(text)));
    }
    if (!replaced_folder_.empty() && io::in_folder(resolved.string(), replaced_folder_))
      bad(who, field, fmt::format("{} is in the folder {} that check replaces (--out); writing the report would "
                                  "remove that input",
                                  quote_excerpt(text), quote_excerpt(replaced_folder_)));
    return resolved.string();
  }

  // "FILE.npy" or "FILE.safetensors:NAME" (sim::read_tensor_input): the file part resolved.
  std::string tensor_path(const std::string& who, const std::string& field, const std::string& spec) const {
    if (spec.empty()) return spec;
    const auto colon = spec.rfind(':');
    const std::string file = colon == std::string::npos ? spec : spec.substr(0, colon);
    if (file.size() > 12 && file.compare(file.size() - 12, 12, ".safetensors") == 0)
      return path(who, field, file, PathKind::File) + spec.substr(colon);
    return path(who, field, spec, PathKind::File);
  }

  solvers::Model model(const ojson& c, const std::string& who, const std::string& pointer, std::string& source) const {
    if (!c.contains("model")) bad(who, "model", "missing");
    const auto& m = c["model"];
    if (m.is_string()) {
      source = path(who, "model", m.get<std::string>(), PathKind::File);
      return solvers::read_model_file(source);
    }
    if (!m.is_object()) bad(who, "model", fmt::format("expected a file name or a model object, got {}", solvers::json_type_name(m)));
    // Numbers as written: every number in the inline model becomes its text,
    // which the model reader reads exactly (offsets and slopes).
    ojson copy = m;
    exact_numbers(copy, pointer + "/model");
    source = fmt::format("{}: {}: model", file_, who);
    return solvers::model_from_json_text(copy.dump(), source);
  }

 private:
  void exact_numbers(ojson& v, const std::string& pointer) const {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) exact_numbers(it.value(), pointer + "/" + pointer_key(it.key()));
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) exact_numbers(v[i], pointer + "/" + std::to_string(i));
    } else if (v.is_number()) {
      const auto it = texts_.find(pointer);
      if (it != texts_.end()) v = it->second;
    }
  }

  // Whether `p` is `dir` or lies below it (both canonical).
  static bool inside(const fs::path& p, const fs::path& dir) {
    auto q = p.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++q) {
      if (d->empty() && std::next(d) == dir.end()) break;  // a trailing separator
      if (q == p.end() || *q != *d) return false;
    }
    return true;
  }

  static const char* file_type_name(fs::file_type t) {
    switch (t) {
      case fs::file_type::directory: return "a folder";
      case fs::file_type::fifo: return "a named pipe";
      case fs::file_type::socket: return "a socket";
      case fs::file_type::block: return "a block device";
      case fs::file_type::character: return "a character device";
      default: return "not a plain file";
    }
  }

  std::string file_;
  std::map<std::string, std::string> texts_;
  bool allow_outside_ = false;
  std::string replaced_folder_;
  fs::path base_, base_canonical_;
};

// The reference run's trials: enough for a standard error of the trial mean.
constexpr int kMinNetworkTrials = 10;

// The configuration of a network claim as simulate_network will run it (our
// reference run: max(trials, kMinNetworkTrials) trials), checked here so that
// an invalid one is malformed input naming the field, not a claim answered
// Not checkable: times and rates positive and finite, T a multiple of dt
// within the step cap, the neurons and layer_alpha matching the spiking
// layers, the subset and limit within the test set, the work budgets.
void validate_network(const Parser& p, Claim& cl, const std::map<std::string, std::string>& texts) {
  const std::string& who = cl.who;
  const auto& o = cl.net_options;
  const auto shown = [&](const char* field, double x) {
    const auto it = texts.find(field);
    return it != texts.end() ? quote_excerpt(it->second) : fmt::format("{:g}", x);
  };
  const auto positive = [&](const char* field, double x) {
    if (!(x > 0) || !std::isfinite(x)) p.bad(who, field, fmt::format("{} must be positive and finite", shown(field, x)));
  };
  positive("T", o.snn.T);
  positive("dt", o.snn.dt);
  positive("tau", o.snn.tau);
  positive("rate", o.rate);
  double steps = 0;
  try {
    steps = static_cast<double>(sim::window_steps(o.snn.T, o.snn.dt, "T"));
  } catch (const InputError& e) {
    p.bad(who, "T", e.detail().empty() ? e.what() : e.detail());
  }
  const std::size_t S = cl.net_loaded.visit([&](const auto& n) { return sim::spiking_layer_count(n, o.snn.readout); });
  if (cl.neurons.size() != 1 && cl.neurons.size() != S)
    p.bad(who, "neurons", fmt::format("{} models given; give one for all spiking layers or {} (one per layer)",
                                      cl.neurons.size(), S));
  if (!o.layer_alpha.empty() && o.layer_alpha.size() != S)
    p.bad(who, "layer_alpha", fmt::format("{} values given for {} spiking layers", o.layer_alpha.size(), S));
  for (double a : o.layer_alpha)
    if (!std::isnan(a) && (!(a > 0) || !std::isfinite(a)))
      p.bad(who, "layer_alpha", fmt::format("{:g} is not a positive finite number", a));
  if (o.output_scale == sim::OutputScale::Activation && o.snn.readout != sim::Readout::Spike)
    p.bad(who, "output_scale", "activation needs the spike readout (the integrating output layer has no scale)");
  if (o.scale == sim::ScaleMode::Q99 && cl.split.train.size() == 0)
    p.bad(who, "scale", "q99 takes the layer scales from the training images, and none are given "
                        "(train_images, train_labels or data); or give \"scale\": \"const\"");
  std::size_t samples = 0;
  try {
    samples = cl.net_loaded.visit([&](const auto& n) {
      return sim::simulation_subset(cl.split.test, o.limit, n.input_size(), n.output_size(), o.subset).size();
    });
  } catch (const InputError& e) {
    p.bad(who, e.input().empty() ? "subset" : e.input(), e.detail().empty() ? e.what() : e.detail());
  }
  const double runs = static_cast<double>(std::max<std::size_t>(cl.trials, kMinNetworkTrials)) * static_cast<double>(samples);
  const double neurons = static_cast<double>(
      cl.net_loaded.visit([&](const auto& n) { return sim::spiking_neuron_count(n, o.snn.readout); }));
  if (runs > sim::kMaxSampleRuns)
    p.bad(who, "trials", fmt::format("our reference run of {} trials x {} test images = {:.3g} sample runs is beyond "
                                     "the budget of {:.0e}; lower trials or limit",
                                     std::max<std::size_t>(cl.trials, kMinNetworkTrials), samples, runs,
                                     sim::kMaxSampleRuns));
  cl.neuron_steps = runs * steps * neurons;
  if (runs * steps * neurons > sim::kMaxNeuronSteps)
    p.bad(who, "T", fmt::format("our reference run needs {:.3g} neuron-steps, beyond the budget of {:.0e}; lower T, "
                                "trials or limit, or raise dt",
                                runs * steps * neurons, sim::kMaxNeuronSteps));
}

void parse_network(const Parser& p, const ojson& c, const std::string& pointer, Claim& cl,
                   std::set<std::string>& known) {
  const std::string& who = cl.who;
  known.insert({"net", "data", "test_images", "test_labels", "train_images", "train_labels", "normalize", "neurons",
                "T", "dt", "tau", "rate", "scale", "sampler", "readout", "trace_weight", "output_scale", "subset",
                "limit", "layer_alpha", "trials", "false_alarm", "A_ANN", "A_MF", "A_SNN", "SynOps"});
  cl.net = p.path(who, "net", p.string(c, who, "net", true), PathKind::File);
  // The weights file the manifest names is a path of the claims too: confined
  // and checked the same way before it is opened.
  const auto net_files = sim::network_input_files(cl.net);
  if (net_files.size() > 1) (void)p.path(who, "net", fs::absolute(net_files[1]).string(), PathKind::File);
  if (c.contains("data")) cl.data.dir = p.path(who, "data", p.string(c, who, "data", true), PathKind::Folder);
  cl.data.test_images = p.tensor_path(who, "test_images", p.string(c, who, "test_images", false));
  cl.data.test_labels = p.tensor_path(who, "test_labels", p.string(c, who, "test_labels", false));
  cl.data.train_images = p.tensor_path(who, "train_images", p.string(c, who, "train_images", false));
  cl.data.train_labels = p.tensor_path(who, "train_labels", p.string(c, who, "train_labels", false));
  cl.data.normalization = p.string(c, who, "normalize", false);
  if (!c.contains("neurons")) p.bad(who, "neurons", "missing");
  std::vector<std::string> neuron_paths;
  if (c["neurons"].is_string()) {
    neuron_paths.push_back(c["neurons"].get<std::string>());
  } else if (c["neurons"].is_array() && !c["neurons"].empty()) {
    for (const auto& n : c["neurons"]) {
      if (!n.is_string()) p.bad(who, "neurons", "expected model file names");
      neuron_paths.push_back(n.get<std::string>());
    }
  } else {
    p.bad(who, "neurons", "expected a model file name or an array of them");
  }
  std::vector<std::string> neuron_files;
  for (const auto& n : neuron_paths) neuron_files.push_back(p.path(who, "neurons", n, PathKind::File));
  std::string subset_text = "all";
  if (c.contains("subset")) {
    subset_text = p.string(c, who, "subset", true);
    if (subset_text.rfind("index:", 0) == 0) subset_text = "index:" + p.path(who, "subset", subset_text.substr(6), PathKind::File);
  }
  // Every path is checked before any file is read.
  cl.net_loaded = sim::load_any_network(cl.net);
  cl.split = sim::load_data(cl.data);
  for (std::size_t k = 0; k < neuron_files.size(); ++k)
    cl.neurons.push_back({solvers::read_model_file(neuron_files[k]), neuron_paths[k]});
  auto& o = cl.net_options;
  std::map<std::string, std::string> texts;  // the numbers as written, for messages
  auto real = [&](const char* field, double& x) {
    if (!c.contains(field)) return;
    const Value v = p.number(c[field], who, field, pointer + "/" + field);
    x = solvers::to_double(v.exact);
    texts[field] = v.text;
  };
  real("T", o.snn.T);
  real("dt", o.snn.dt);
  real("tau", o.snn.tau);
  real("rate", o.rate);
  real("false_alarm", cl.false_alarm);
  if (!(cl.false_alarm > 0 && cl.false_alarm < 1)) p.bad(who, "false_alarm", "must be in (0, 1)");
  o.limit = static_cast<int>(p.count(c, who, "limit", 0, 100000000));
  cl.trials = p.count(c, who, "trials", 1, 100000);
  if (cl.trials < 1) p.bad(who, "trials", "must be >= 1");
  // Conventions of the conversion study, each named as the CLI option.
  const auto text = [&](const char* field, const char* fallback) {
    const std::string t = p.string(c, who, field, false);
    return t.empty() ? std::string(fallback) : t;
  };
  const auto convention = [&](const char* field, auto parse) {
    try {
      return parse();
    } catch (const InputError& e) {
      p.bad(who, field, e.detail().empty() ? e.what() : e.detail());
    }
  };
  o.snn.sampler = convention("sampler", [&] { return sim::parse_sampler(text("sampler", "exact"), "sampler"); });
  o.snn.readout = convention("readout", [&] { return sim::parse_readout(text("readout", "spike"), "readout"); });
  o.scale = convention("scale", [&] { return sim::parse_scale_mode(text("scale", "q99"), "scale"); });
  o.snn.trace_weight =
      convention("trace_weight", [&] { return sim::parse_trace_weight(text("trace_weight", "integral"), "trace_weight"); });
  o.output_scale =
      convention("output_scale", [&] { return sim::parse_output_scale(text("output_scale", "logits"), "output_scale"); });
  o.subset = convention("subset", [&] { return sim::parse_test_subset(subset_text, "subset"); });
  if (c.contains("layer_alpha")) {
    if (!c["layer_alpha"].is_array()) p.bad(who, "layer_alpha", "expected an array of numbers or \"auto\"");
    for (std::size_t k = 0; k < c["layer_alpha"].size(); ++k) {
      const auto& a = c["layer_alpha"][k];
      if (a.is_string() && a.get<std::string>() == "auto") o.layer_alpha.push_back(std::nan(""));
      else o.layer_alpha.push_back(solvers::to_double(p.number(a, who, "layer_alpha", pointer + "/layer_alpha/" + std::to_string(k)).exact));
    }
  }
  // Our side's kernel is named beside these where the trials ran
  // (evaluate_network): it sets which random numbers they drew.
  cl.conventions = fmt::format("sampler {}, readout {}, scale {}, trace weight {}, output scale {}, "
                               "subset {}, T {:g}, dt {:g}, tau {:g}, r {:g}",
                               text("sampler", "exact"), text("readout", "spike"), text("scale", "q99"),
                               text("trace_weight", "integral"), text("output_scale", "logits"), text("subset", "all"),
                               o.snn.T, o.snn.dt, o.snn.tau, o.rate);
  for (const char* f : {"A_ANN", "A_MF", "A_SNN", "SynOps"})
    if (c.contains(f)) cl.values.push_back(p.number(c[f], who, f, pointer + "/" + f));
  if (cl.values.empty()) p.bad(who, "A_SNN", "no value claimed (A_ANN, A_MF, A_SNN, SynOps)");
  validate_network(p, cl, texts);
}

const std::set<std::string> kKinds = {"flux", "stationary", "counting", "fit", "simulation", "network"};

std::vector<Claim> parse_claims(const std::string& path, const CheckOptions& options) {
  if (path.find('\0') != std::string::npos)
    throw InputError("claims", fmt::format("the path {} holds a NUL byte", quote_excerpt(path)));
  const std::string text = solvers::read_input_file(path, solvers::InputKind{"claims file", 64 * solvers::kMiB, "a claims file is a few KB"});
  const auto doc = solvers::parse_json_strict<ojson>(text, path);
  Parser p(path, solvers::json_number_texts(text, path), options);
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected an object {{\"claims\": [...]}}", path));
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "claims" && it.key() != "meta")
      throw InputError(fmt::format("{}: unknown key '{}' (known: claims, meta)", path, it.key()));
  if (!doc.contains("claims") || !doc["claims"].is_array() || doc["claims"].empty())
    throw InputError(fmt::format("{}: claims: expected a nonempty array of claims", path));
  std::vector<Claim> out;
  std::set<std::string> ids;
  const auto& claims = doc["claims"];
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const auto& c = claims[i];
    const std::string pointer = "/claims/" + std::to_string(i);
    std::string who = fmt::format("claims[{}]", i);
    if (!c.is_object()) p.bad(who, "claim", fmt::format("expected an object, got {}", solvers::json_type_name(c)));
    Claim cl;
    cl.id = p.string(c, who, "id", true);
    if (cl.id.empty()) p.bad(who, "id", "empty");
    who = "claim " + quote_excerpt(cl.id);
    if (!ids.insert(cl.id).second) p.bad(who, "id", "used by two claims");
    cl.who = who;
    cl.kind = p.string(c, who, "kind", true);
    if (!kKinds.count(cl.kind))
      p.bad(who, "kind", fmt::format("'{}' is not one of flux, stationary, counting, fit, simulation, network", cl.kind));
    // The fields each kind reads; anything else is a typo, never ignored.
    std::set<std::string> known = {"id", "kind", "note", "tolerance"};
    auto quantity = [&](const std::string& field) {
      known.insert(field);
      if (c.contains(field)) cl.values.push_back(p.number(c[field], who, field, pointer + "/" + field));
    };
    auto input = [&](const std::string& field, Rational& q, std::string& t) {
      known.insert(field);
      if (!c.contains(field)) p.bad(who, field, "missing");
      const auto v = p.number(c[field], who, field, pointer + "/" + field);
      q = v.exact;
      t = v.text;
    };
    if (cl.kind == "network") {
      parse_network(p, c, pointer, cl, known);
    } else if (cl.kind == "fit" && !c.contains("model") && c.contains("family")) {
      // A published MSE without the chain: can the family reach it?
      known.insert("family");
      cl.family = p.string(c, who, "family", true);
      try {
        analysis::parse_family(cl.family, 4);
      } catch (const InputError& e) {
        p.bad(who, "family", e.what());
      }
    } else {
      known.insert("model");
      cl.model = p.model(c, who, pointer, cl.model_source);
    }
    if (cl.kind == "flux") {
      input("H", cl.H, cl.h_text);
      quantity("value");
      if (cl.values.empty()) p.bad(who, "value", "missing");
      cl.values[0].quantity = "flux";
    } else if (cl.kind == "stationary") {
      input("H", cl.H, cl.h_text);
      known.insert("pi");
      if (!c.contains("pi") || !c["pi"].is_object() || c["pi"].empty())
        p.bad(who, "pi", "expected an object {state: value, ...}");
      for (auto it = c["pi"].begin(); it != c["pi"].end(); ++it) {
        if (std::find(cl.model.states.begin(), cl.model.states.end(), it.key()) == cl.model.states.end())
          p.bad(who, "pi." + it.key(), "not a state of the model");
        auto v = p.number(it.value(), who, "pi." + it.key(), pointer + "/pi/" + pointer_key(it.key()));
        v.quantity = "pi[" + it.key() + "]";
        cl.values.push_back(v);
      }
    } else if (cl.kind == "counting") {
      input("H", cl.H, cl.h_text);
      for (const char* f : {"mean", "variance", "fano_T", "rate", "variance_rate", "fano"}) quantity(f);
      const bool finite = std::any_of(cl.values.begin(), cl.values.end(), [](const Value& v) {
        return v.quantity == "mean" || v.quantity == "variance" || v.quantity == "fano_T";
      });
      if (finite) input("T", cl.T, cl.t_text);
      else known.insert("T");
      if (finite && !(cl.T > 0)) p.bad(who, "T", "must be > 0");
      if (cl.values.empty()) p.bad(who, "mean", "no value claimed (mean, variance, fano_T, rate, variance_rate, fano)");
      known.insert("start");
      cl.start = p.string(c, who, "start", false);
      if (!cl.start.empty() && std::find(cl.model.states.begin(), cl.model.states.end(), cl.start) == cl.model.states.end())
        p.bad(who, "start", fmt::format("'{}' is not a state of the model", cl.start));
    } else if (cl.kind == "fit") {
      known.insert({"activation", "domain", "points", "alpha"});
      cl.activation = p.string(c, who, "activation", true);
      // A table is a file of the claims like the model: beside the claims file.
      if (cl.activation.rfind("table:", 0) == 0)
        cl.activation = "table:" + p.path(who, "activation", cl.activation.substr(6), PathKind::File);
      cl.domain = p.string(c, who, "domain", true);
      cl.points = p.count(c, who, "points", 401, 10000000);
      if (c.contains("alpha")) cl.alpha = p.number(c["alpha"], who, "alpha", pointer + "/alpha").text;
      quantity("mse");
      quantity("max_error");
      if (cl.values.empty()) p.bad(who, "mse", "no value claimed (mse, max_error)");
      try {
        activations::parse_activation(cl.activation, "activation");
        analysis::parse_domain(cl.domain);
      } catch (const InputError& e) {
        p.bad(who, "activation/domain", e.what());
      }
    } else if (cl.kind == "simulation") {
      input("H", cl.H, cl.h_text);
      Rational t;
      input("T", t, cl.t_text);
      cl.T = t;
      if (!(t > 0) || !std::isfinite(solvers::to_double(t))) p.bad(who, "T", "must be a finite time > 0");
      cl.trials = p.count(c, who, "trials", 0, kMaxTrials);
      known.insert("trials");
      if (cl.trials < 2) p.bad(who, "trials", "must be >= 2");
      quantity("mean");
      quantity("variance");
      if (cl.values.empty() || cl.values[0].quantity != "mean") p.bad(who, "mean", "missing");
      known.insert({"start", "alpha", "false_alarm"});
      cl.start = p.string(c, who, "start", false);
      if (!cl.start.empty() && std::find(cl.model.states.begin(), cl.model.states.end(), cl.start) == cl.model.states.end())
        p.bad(who, "start", fmt::format("'{}' is not a state of the model", cl.start));
      if (c.contains("alpha")) {
        cl.rate_alpha = solvers::to_double(p.number(c["alpha"], who, "alpha", pointer + "/alpha").exact);
        if (!(cl.rate_alpha > 0) || !std::isfinite(cl.rate_alpha)) p.bad(who, "alpha", "must be finite and > 0");
      }
      if (c.contains("false_alarm")) {
        cl.false_alarm = solvers::to_double(p.number(c["false_alarm"], who, "false_alarm", pointer + "/false_alarm").exact);
        if (!(cl.false_alarm > 0 && cl.false_alarm < 1)) p.bad(who, "false_alarm", "must be in (0, 1)");
      }
    }
    if (c.contains("note") && !c["note"].is_string()) p.bad(who, "note", "expected a string");
    if (c.contains("tolerance")) {
      if (cl.kind == "simulation") p.bad(who, "tolerance", "not used by simulation claims (give false_alarm)");
      cl.tolerance = p.tolerance(c["tolerance"], who);
    }
    for (auto it = c.begin(); it != c.end(); ++it)
      if (!known.count(it.key())) p.bad(who, it.key(), fmt::format("unknown field for a {} claim", cl.kind));
    if (cl.kind == "network" || cl.kind == "fit" || cl.kind == "simulation")
      for (const auto& v : cl.values) p.require_double(who, v);
    out.push_back(std::move(cl));
  }
  return out;
}

// Half a unit in the last written digit of a decimal ("1.10e-3" -> 5e-6);
// nullopt for p/q text.
std::optional<Rational> half_unit(const std::string& text) {
  if (text.find('/') != std::string::npos) return std::nullopt;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  long decimals = 0;
  bool point = false;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i) {
    if (text[i] == '.') point = true;
    else if (point) ++decimals;
  }
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) exponent = std::strtol(text.c_str() + i + 1, nullptr, 10);
  const long k = exponent - decimals;  // the last digit's place is 10^k
  // Beyond 10^+-4000 a "last digit" means nothing (and 10^k by repeated
  // multiplication would cost seconds): compared exactly instead.
  if (k > 4000 || k < -4000) return std::nullopt;
  Rational p(1);
  for (long j = 0; j < std::labs(k); ++j) p *= 10;
  return k >= 0 ? Rational(p / 2) : Rational(Rational(1) / (p * 2));
}

struct Row {
  std::string quantity, claimed, ours, difference, tolerance;
  Verdict verdict = Verdict::NotComparable;
  std::string evidence;
};

// A difference or ratio for the table and the evidence: `digits` digits
// after the point in scientific notation, through a double where one holds
// it, else through MPFR, whose exponent range does (a claim of 1e308 is 5e308
// times an MSE of 0.2: an infinity as a double).
template <class Number>
std::string sci(const Number& x, int digits) {
  const double d = solvers::to_double(x);
  if (std::isfinite(d) && (d != 0 || x == 0)) return fmt::format("{:.{}e}", d, digits);
  if constexpr (std::is_same_v<Number, Rational>) return solvers::to_string(solvers::from_rational<Mpfr>(x), digits + 1);
  else return solvers::to_string(x, digits + 1);
}

// A relative or absolute tolerance as the decimal it was written as (1e-3
// is 1/1000, not the double nearest it), for the exact comparisons.
Rational tol_exact(const Tolerance& tol) { return solvers::parse_exact(fmt::format("{:.17g}", tol.value)).value(); }

// Exact comparison (rationals).
Row compare_exact(const Value& v, const Rational& ours, const Tolerance& tol) {
  Row r{v.quantity, v.text, solvers::exact_text(ours), solvers::exact_text(v.exact - ours), tol.text(), Verdict::NotComparable, ""};
  const Rational diff = abs(v.exact - ours);
  bool ok = false;
  switch (tol.kind) {
    case TolKind::Exact: ok = diff == 0; break;
    case TolKind::Relative: ok = diff <= abs(ours) * tol_exact(tol); break;
    case TolKind::Absolute: ok = diff <= tol_exact(tol); break;
    case TolKind::Digits: {
      const auto h = half_unit(v.text);
      ok = h ? diff <= *h : diff == 0;
      break;
    }
  }
  r.verdict = ok ? Verdict::Reproduced : Verdict::NotReproduced;
  r.evidence = ours == 0 ? fmt::format("ours (exact rational) = 0; |claimed - ours| = {}", sci(diff, 3))
                         : fmt::format("ours (exact rational) = {:.17g}; |claimed - ours| / |ours| = {}",
                                       solvers::to_double(ours), sci(Rational(diff / abs(ours)), 3));
  // A long exact fraction is unreadable in a table: its double beside the evidence says enough.
  if (r.ours.size() > 60) r.ours = fmt::format("{:.17g} (rounded)", solvers::to_double(ours));
  if (r.difference.size() > 60) r.difference = sci(Rational(v.exact - ours), 6) + " (rounded)";
  return r;
}

// MPFR comparison at the current precision; "exact" within 2^-(bits - 16) relative.
Row compare_mpfr(const Value& v, const Mpfr& ours, const Tolerance& tol, unsigned bits) {
  if (!isfinite(ours))
    return {v.quantity, v.text, solvers::to_string(ours, 20), "", "", Verdict::NotComparable,
            fmt::format("ours (MPFR {} bits) is not a finite number: nothing to compare the claim with", bits)};
  const Mpfr claimed = solvers::from_rational<Mpfr>(v.exact);
  const Mpfr diff = abs(Mpfr(claimed - ours));
  Row r{v.quantity, v.text, solvers::to_string(ours, 20), solvers::to_string(Mpfr(claimed - ours), 6), tol.text(), Verdict::NotComparable, ""};
  bool ok = false;
  switch (tol.kind) {
    case TolKind::Exact: ok = diff <= abs(ours) * pow(Mpfr(2), -static_cast<int>(bits) + 16); break;
    case TolKind::Relative: ok = diff <= abs(ours) * Mpfr(tol.value); break;
    case TolKind::Absolute: ok = diff <= Mpfr(tol.value); break;
    case TolKind::Digits: {
      const auto h = half_unit(v.text);
      ok = h ? diff <= solvers::from_rational<Mpfr>(*h) : diff <= abs(ours) * pow(Mpfr(2), -static_cast<int>(bits) + 16);
      break;
    }
  }
  r.verdict = ok ? Verdict::Reproduced : Verdict::NotReproduced;
  r.evidence = ours == 0 ? fmt::format("ours (MPFR {} bits) = 0; |claimed - ours| = {}", bits, sci(diff, 3))
                         : fmt::format("ours (MPFR {} bits) = {}; |claimed - ours| / |ours| = {}", bits,
                                       solvers::to_string(ours, 20), sci(Mpfr(diff / abs(ours)), 3));
  return r;
}

// A row for a value of ours that is not a finite number: nothing to compare
// the claim with (an infinity minus a huge claim would compare as equal).
Row not_finite_row(const Value& v, double ours, const std::string& how) {
  return {v.quantity, v.text, fmt::format("{}", ours), "", "", Verdict::NotComparable,
          fmt::format("ours ({}) is {}, not a finite number: nothing to compare the claim with", how, ours)};
}

// Double comparison (fit errors, re-evaluated in MPFR and rounded to double;
// accuracies). Our double is exact as a rational, so the difference and the
// tolerance are compared exactly: no rounding can turn a difference into 0 or
// a half unit of a tiny claim into 0.
Row compare_double(const Value& v, double ours, const Tolerance& tol, const std::string& how) {
  if (!std::isfinite(ours)) return not_finite_row(v, ours, how);
  const Rational ours_exact(ours), diff = abs(v.exact - ours_exact);
  Row r{v.quantity, v.text, fmt::format("{:.17g}", ours), sci(Rational(v.exact - ours_exact), 6),
        tol.text(), Verdict::NotComparable, ""};
  bool ok = false;
  switch (tol.kind) {
    // "exact" for a double: the claim rounds to our double (the parser
    // refused claims outside the normal range of doubles).
    case TolKind::Exact: ok = solvers::to_double(v.exact) == ours; break;
    case TolKind::Relative: ok = diff <= abs(ours_exact) * tol_exact(tol); break;
    case TolKind::Absolute: ok = diff <= tol_exact(tol); break;
    case TolKind::Digits: {
      const auto h = half_unit(v.text);
      ok = h ? diff <= *h : solvers::to_double(v.exact) == ours;
      break;
    }
  }
  r.verdict = ok ? Verdict::Reproduced : Verdict::NotReproduced;
  r.evidence = ours == 0 ? fmt::format("ours ({}) = 0; absolute difference {}", how, sci(diff, 3))
                         : fmt::format("ours ({}) = {:.6e}; relative difference {}", how, ours,
                                       sci(Rational(diff / abs(ours_exact)), 3));
  return r;
}

// Mean and sample sd of v.
std::pair<double, double> mean_sd(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return {m, v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0};
}

// A network claim: A_ANN and A_MF are deterministic (compared to the claim's
// digits by default); A_SNN and SynOps (means over the claim's trials) are
// t-tested against our own run with the same configuration: se^2 =
// sd^2 (1/n_claim + 1/n_ours), sd the spread of our per-trial values,
// two-sided at false_alarm / (number of tested values) each.
std::vector<Row> evaluate_network(const Claim& c, const CheckOptions& opts) {
  std::vector<Row> rows;
  const sim::DatasetSplit& data = c.split;
  sim::NetworkSimOptions o = c.net_options;
  o.trials = std::max<int>(kMinNetworkTrials, static_cast<int>(c.trials));
  o.seed = opts.seed;
  o.threads = opts.threads;
  const auto r = c.net_loaded.visit(
      [&](const auto& net) { return sim::simulate_network(net, data.train, data.test, c.neurons, o); });
  const double n_claim = static_cast<double>(c.trials), n_ours = static_cast<double>(o.trials);
  int tested = 0;
  for (const auto& v : c.values) tested += v.quantity == "A_SNN" || v.quantity == "SynOps";
  // Our sd comes from n_ours trials: (claimed - ours) / se is Student-t with
  // n_ours - 1 degrees of freedom (normal per-trial values), not normal;
  // with 10 trials a normal quantile would raise the false-alarm rate
  // about tenfold at 1e-3.
  const double zcrit =
      tested ? solvers::students_t_upper_quantile(n_ours - 1, c.false_alarm / (2.0 * tested)) : 0;
  for (const auto& v : c.values) {
    if (v.quantity == "A_ANN" || v.quantity == "A_MF") {
      const double ours = 100.0 * (v.quantity == "A_ANN" ? r.acc_ann : r.acc_mf);
      auto row = compare_double(v, ours, c.tolerance.value_or(Tolerance{TolKind::Digits, 0}),
                                fmt::format("{}, deterministic, in percent", v.quantity == "A_ANN" ? "the ANN" : "the mean-field network"));
      row.quantity += fmt::format(" (%, {} test images)", r.samples);
      rows.push_back(row);
      continue;
    }
    std::vector<double> per_trial;
    if (v.quantity == "A_SNN") {
      for (double a : r.acc_snn) per_trial.push_back(100.0 * a);
    } else {
      const std::size_t per = static_cast<std::size_t>(r.samples);
      for (int t = 0; t < o.trials; ++t) {
        double sum = 0;
        for (std::size_t k = 0; k < per; ++k) sum += r.synops[static_cast<std::size_t>(t) * per + k];
        per_trial.push_back(sum / static_cast<double>(per));
      }
    }
    const auto [m, sd] = mean_sd(per_trial);
    if (!std::isfinite(m) || !std::isfinite(sd)) {
      rows.push_back(not_finite_row(v, m, "the mean over our trials, or their spread"));
      continue;
    }
    const double claimed = solvers::to_double(v.exact);
    const double se = sd * std::sqrt(1.0 / n_claim + 1.0 / n_ours);
    Row row{fmt::format("{} ({}, mean over {} trial(s))", v.quantity, v.quantity == "A_SNN" ? "%" : "per sample",
                        c.trials),
            v.text, fmt::format("{:.10g}", m), fmt::format("{:.6e}", claimed - m),
            fmt::format("|t| < {:.3f} (false alarm {:g}, {} df)", zcrit, c.false_alarm, o.trials - 1), Verdict::NotComparable, ""};
    if (!(se > 0)) {
      row.verdict = claimed == m ? Verdict::Reproduced : Verdict::NotReproduced;
      row.evidence = fmt::format("our {} trials all gave {:.10g} (no spread); the claim {} it", o.trials, m,
                                 claimed == m ? "equals" : "differs from");
    } else {
      const double z = (claimed - m) / se;
      row.verdict = std::abs(z) < zcrit ? Verdict::Reproduced : Verdict::NotReproduced;
      row.evidence = fmt::format("ours: mean {:.6g}, sd {:.3g} over {} trials (seed {}; {} kernel, {}); se {:.3g}; "
                                 "t = {:.3f}",
                                 m, sd, o.trials, opts.seed, sim::kernel_name(r.kernel), c.conventions, se, z);
    }
    rows.push_back(row);
  }
  return rows;
}

// A simulation claim: the claimed mean and variance of N(T) z-tested
// against the exact values (Van Loan), with standard errors from the exact
// variance and from our own runs' fourth moment.
std::vector<Row> evaluate_simulation(const Claim& c, const CheckOptions& opts) {
  std::vector<Row> rows;
  const double T = solvers::to_double(c.T);
  sim::SsaOptions so;
  so.T = T;
  so.trials = std::max(c.trials, kMinReferenceTrials);
  so.seed = opts.seed;
  so.threads = opts.threads;
  so.rate_scale = c.rate_alpha;
  if (!c.start.empty()) {
    so.start = sim::StartMode::State;
    so.start_state = c.model.state_index(c.start);
  }
  {
    const sim::SsaChain chain(c.model, c.H, c.rate_alpha);
    double max_rate = 0;
    for (std::size_t i = 0; i < chain.size(); ++i) max_rate = std::max(max_rate, chain.exit_rate(i));
    if (!(max_rate * T * static_cast<double>(so.trials) <= kMaxExpectedTransitions)) {
      rows.push_back({"mean", c.values[0].text, "", "", "", Verdict::NotComparable,
                      fmt::format("our reference simulation would need up to {:.3g} transitions (budget {:.0e})",
                                  max_rate * T * static_cast<double>(so.trials), kMaxExpectedTransitions)});
      return rows;
    }
  }
  const auto ref = sim::simulate_neuron(c.model, c.H, so, c.model_source);
  const auto st = sim::count_stats(ref.counts[0]);
  const auto ex = solvers::counting_moments<double>(c.model, c.H, ref.initial, c.rate_alpha * T, c.model_source);
  const double n = static_cast<double>(c.trials);
  // Two statistics, each two-sided at false_alarm / 2: the claim's false-alarm rate is at most false_alarm.
  const double zcrit = solvers::normal_upper_quantile(c.false_alarm / 4);
  for (const auto& v : c.values) {
    const double claimed = solvers::to_double(v.exact);
    const bool is_mean = v.quantity == "mean";
    const double exact_value = is_mean ? ex.mean : ex.variance;
    if (!std::isfinite(exact_value)) {
      rows.push_back(not_finite_row(v, exact_value, is_mean ? "E N(T), Van Loan" : "Var N(T), Van Loan"));
      continue;
    }
    const double se = is_mean ? std::sqrt(std::max(0.0, ex.variance) / n)
                               : st.se_variance * std::sqrt(static_cast<double>(st.n) / n);
    Row r{v.quantity + fmt::format(" of N(T) at H = {}, T = {}, {} trials", c.h_text, c.t_text, c.trials), v.text,
          fmt::format("{:.17g}", exact_value), fmt::format("{:.6e}", claimed - exact_value),
          fmt::format("|z| < {:.3f} (false alarm {:g})", zcrit, c.false_alarm), Verdict::NotComparable, ""};
    if (!(se > 0)) {
      const bool same = claimed == exact_value;
      r.verdict = same ? Verdict::Reproduced : Verdict::NotReproduced;
      r.evidence = fmt::format("exact value {:.6g} has no spread; the claim {} it", exact_value, same ? "equals" : "differs from");
    } else {
      const double z = (claimed - exact_value) / se;
      r.verdict = std::abs(z) < zcrit ? Verdict::Reproduced : Verdict::NotReproduced;
      r.evidence = fmt::format("exact {} {:.10g} (Van Loan); se {:.4g} ({}); z = {:.3f}", is_mean ? "E N(T)" : "Var N(T)",
                               exact_value, se,
                               is_mean ? "from the exact Var N(T)"
                                       : fmt::format("from the fourth moment of our {} runs, seed {}", st.n, opts.seed),
                               z);
    }
    rows.push_back(r);
  }
  return rows;
}

std::vector<Row> evaluate(const Claim& c, const CheckOptions& opts) {
  std::vector<Row> rows;
  const Tolerance exact{};
  if (c.kind == "network") return evaluate_network(c, opts);
  if (c.kind == "flux" || c.kind == "stationary") {
    const auto st = solvers::solve_stationary<Rational>(c.model, c.H, solvers::Method::Auto, c.model_source);
    for (const auto& v : c.values) {
      Rational ours = st.flux;
      if (c.kind == "stationary") {
        const std::string state = v.quantity.substr(3, v.quantity.size() - 4);
        ours = st.pi[c.model.state_index(state)];
      }
      auto r = compare_exact(v, ours, c.tolerance.value_or(exact));
      r.quantity += " at H = " + c.h_text;
      rows.push_back(r);
    }
    return rows;
  }
  if (c.kind == "counting") {
    const ctmc::PrecisionScope precision(opts.precision);
    const auto as = solvers::asymptotic_counting<Rational>(c.model, c.H, c.model_source);
    std::optional<solvers::CountingMoments<Mpfr>> mom;
    for (const auto& v : c.values) {
      const bool finite = v.quantity == "mean" || v.quantity == "variance" || v.quantity == "fano_T";
      if (!finite) {
        if (v.quantity == "fano" && as.rate == 0) {
          rows.push_back({v.quantity, v.text, "undefined", "", "", Verdict::NotComparable, "no spikes at this H: the Fano factor is undefined"});
          continue;
        }
        const Rational ours = v.quantity == "rate" ? as.rate : v.quantity == "variance_rate" ? as.variance_rate : as.fano();
        rows.push_back(compare_exact(v, ours, c.tolerance.value_or(exact)));
      } else {
        if (!mom) {
          std::vector<Mpfr> pi0(c.model.size(), Mpfr(0));
          if (!c.start.empty()) pi0[c.model.state_index(c.start)] = Mpfr(1);
          else
            for (std::size_t i = 0; i < pi0.size(); ++i) pi0[i] = solvers::from_rational<Mpfr>(as.theta[i]);
          mom = solvers::counting_moments<Mpfr>(c.model, c.H, pi0, solvers::from_rational<Mpfr>(c.T), c.model_source);
        }
        if (v.quantity == "fano_T" && mom->mean == 0) {
          rows.push_back({v.quantity, v.text, "undefined", "", "", Verdict::NotComparable, "no spikes by T: Var/E is undefined"});
          continue;
        }
        const Mpfr ours = v.quantity == "mean" ? mom->mean : v.quantity == "variance" ? mom->variance : Mpfr(mom->variance / mom->mean);
        Tolerance tol = c.tolerance.value_or(Tolerance{TolKind::Digits, 0});
        rows.push_back(compare_mpfr(v, ours, tol, ctmc::precision_bits()));
      }
      rows.back().quantity += fmt::format(" at H = {}{}", c.h_text, c.t_text.empty() ? "" : ", T = " + c.t_text);
    }
    return rows;
  }
  if (c.kind == "fit") {
    analysis::FitProblem p;
    p.activation = activations::parse_activation(c.activation, "activation");
    const auto [lo, hi] = analysis::parse_domain(c.domain);
    p.data = analysis::make_grid(lo, hi, c.points);
    p.alpha = solvers::parse_exact(c.alpha).value();
    p.family = analysis::parse_family(c.family.empty() ? "three-state" : c.family, 4);
    if (!c.family.empty()) {
      // Only an upper bound can be confirmed: our fit reaching the claimed
      // MSE shows it is attainable; our fit staying above it refutes
      // nothing (a better optimum may exist), so that is Not checkable.
      analysis::FitOptions fo;
      fo.seed = opts.seed;
      fo.threads = opts.threads;
      fo.mpfr_bits = opts.precision;
      const auto r = analysis::fit(p, fo);
      for (const auto& v : c.values) {
        const double ours = v.quantity == "mse" ? r.mse : r.max_abs_error;
        const auto h = half_unit(v.text);
        const double bound = solvers::to_double(v.exact) + (h ? solvers::to_double(*h) : 0.0);
        Row row{fmt::format("{} of the best {} fit to {} * {} on {}", v.quantity, c.family, c.alpha,
                            p.activation.name, p.data.description),
                v.text, fmt::format("{:.6e}", ours), fmt::format("{:.6e}", solvers::to_double(v.exact) - ours),
                "attainable (ours <= claimed, to its last digit)", Verdict::NotComparable, ""};
        row.verdict = ours <= bound ? Verdict::Reproduced : Verdict::NotComparable;
        row.evidence = ours <= bound
                           ? fmt::format("our fit (64 starts, seed {}) reaches {:.4e} <= the claimed value: attainable",
                                         opts.seed, ours)
                           : fmt::format("our fit reaches only {:.4e} > the claimed value; without the claim's chain "
                                         "this neither confirms nor refutes it", ours);
        rows.push_back(row);
      }
      return rows;
    }
    const auto e = analysis::evaluate_exactly(c.model, p, opts.precision, c.model_source);
    for (const auto& v : c.values) {
      const double ours = v.quantity == "mse" ? e.mse : e.max_abs_error;
      auto r = compare_double(v, ours, c.tolerance.value_or(Tolerance{TolKind::Digits, 0}),
                              fmt::format("MPFR {} bits on {}", opts.precision, p.data.description));
      r.quantity += fmt::format(" vs {} * {}", c.alpha, p.activation.name);
      rows.push_back(r);
    }
    return rows;
  }
  return evaluate_simulation(c, opts);
}

}  // namespace

std::size_t validate_claims(const std::string& claims_path, const CheckOptions& options) {
  return parse_claims(claims_path, options).size();
}

// A network claim whose reference run would outlast options.max_seconds is
// refused before any claim is computed (on the threads it would have).
void refuse_long_runs(const std::string& claims_path, const std::vector<Claim>& claims, const CheckOptions& options) {
  for (const auto& c : claims) {
    if (c.kind != "network") continue;
    const double seconds = sim::estimated_network_seconds(c.neuron_steps, options.threads);
    if (seconds > options.max_seconds)
      throw InputError(fmt::format(
          "{}: {}: T: our reference run of {:.3g} neuron-steps would take about {:.3g} s (at {:.2g} neuron-steps/s "
          "per core, the engine's measured speed), beyond the limit of {:g} s; lower T, trials or limit, or raise "
          "--max-seconds",
          claims_path, c.who, c.neuron_steps, seconds, sim::kNeuronStepsPerCoreSecond, options.max_seconds));
  }
}

void check_max_seconds(double max_seconds) {
  if (!(max_seconds >= kMinMaxSeconds && max_seconds <= kMaxMaxSeconds))
    throw InputError("--max-seconds",
                     fmt::format("{:g} is not in [{:g}, {:g}]", max_seconds, kMinMaxSeconds, kMaxMaxSeconds));
}

CheckResult run_check(const std::string& claims_path, const CheckOptions& options) {
  check_max_seconds(options.max_seconds);
  const auto claims = parse_claims(claims_path, options);  // every claim validated before any is computed
  refuse_long_runs(claims_path, claims, options);
  CheckResult out;
  out.claims_file = claims_path;
  for (const auto& c : claims) {
    std::vector<Row> rows;
    try {
      rows = evaluate(c, options);
    } catch (const InputError& e) {
      // The claim is well formed but this toolkit cannot answer it (e.g. the
      // chain has two closed classes at H): say why, go on with the others.
      rows.clear();
      for (const auto& v : c.values)
        rows.push_back({v.quantity, v.text, "", "", "", Verdict::NotComparable, fmt::format("not computed: {}", e.what())});
    }
    Verdict verdict = Verdict::NotComparable;
    for (const auto& r : rows) {
      if (r.verdict == Verdict::NotReproduced) verdict = Verdict::NotReproduced;
      else if (r.verdict == Verdict::Reproduced && verdict != Verdict::NotReproduced) verdict = Verdict::Reproduced;
    }
    (verdict == Verdict::Reproduced ? out.passed : verdict == Verdict::NotReproduced ? out.failed : out.not_checkable)++;
    // An id given twice keeps its first place and its last verdict, as a
    // JSON object written twice does.
    const auto same_id = std::find_if(out.verdicts.begin(), out.verdicts.end(),
                                      [&](const auto& v) { return v.first == c.id; });
    if (same_id != out.verdicts.end())
      same_id->second = verdict;
    else
      out.verdicts.emplace_back(c.id, verdict);
    for (const auto& r : rows)
      out.results.push_back({c.id, c.kind, r.quantity, r.claimed, r.ours, r.difference, r.tolerance, r.verdict, r.evidence});
  }
  return out;
}

const char* check_verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Reproduced: return "Pass";
    case Verdict::NotReproduced: return "Fail";
    case Verdict::Inconclusive: return "Inconclusive";
    case Verdict::NotComparable: return "Not checkable";
  }
  return "?";
}

void write(commands::DocumentWriter& w, const CheckResult& r) {
  using commands::put;
  const commands::Object doc(w, "");
  put(w, "claims_file", r.claims_file);
  {
    const commands::Array results(w, "results");
    for (const auto& row : r.results) {
      const commands::Object o(w, "");
      put(w, "id", row.id);
      put(w, "kind", row.kind);
      put(w, "quantity", row.quantity);
      put(w, "claimed", row.claimed);
      put(w, "ours", row.ours);
      put(w, "difference", row.difference);
      put(w, "tolerance", row.tolerance);
      put(w, "verdict", check_verdict_name(row.verdict));
      put(w, "evidence", row.evidence);
    }
  }
  {
    const commands::Object verdicts(w, "verdicts");
    for (const auto& [id, verdict] : r.verdicts) put(w, id, check_verdict_name(verdict));
  }
  put(w, "passed", r.passed);
  put(w, "failed", r.failed);
  put(w, "not_checkable", r.not_checkable);
}

ojson to_json(const CheckResult& r) { return commands::json_of(r); }

int check_exit_status(const CheckResult& r, const CheckOptions& options) {
  if (r.failed > 0) return 1;
  return r.not_checkable > 0 && !options.allow_unchecked ? 1 : 0;
}

}  // namespace ctmc::commands
