// The pybind11 module ctmc_snn._core: thin bindings over the command layer
// (commands/*.hpp, through python/src/core_*.cpp where arguments need
// converting), returning the commands' Result structs as Python objects
// (to_python.hpp). The Python package (python/ctmc_snn/__init__.py) types
// their values (Fractions, numpy arrays).
//
// Every call releases the GIL once its arguments are copied into C++ values
// (a fit or a simulation may run for minutes; other Python threads go on), and
// then holds one mutex: Eigen's thread count (EigenThreadScope, which the
// trainings and the networks' forward passes open) is process-wide state
// that two calls must not change at once. The MPFR precision is not: each
// call's scope sets its own thread's.
#include <fmt/format.h>
#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

#include "ctmc/analysis/solver_logging.hpp"
#include "core.hpp"
#include "ctmc/commands/bernstein.hpp"
#include "ctmc/commands/command_text.hpp"
#include "ctmc/commands/fit.hpp"
#include "ctmc/commands/limits.hpp"
#include "ctmc/commands/simulate_neuron.hpp"
#include "ctmc/commands/train.hpp"
#include "ctmc/commands/convert.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/commands/check_report.hpp"
#include "to_python.hpp"

namespace py = pybind11;
using namespace ctmc::python;
namespace commands = ctmc::commands;

namespace {

std::mutex g_process_settings;

template <class F>
auto call(F&& f) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(g_process_settings);
  return f();
}

ModelInput model_input(const std::string& text, const std::string& source, bool is_path) {
  return ModelInput{text, source, is_path};
}

// A keyword's value as T; a value of the wrong type (seed=-1, starts="x")
// is a ValueError naming the keyword, not pybind11's RuntimeError.
template <class T>
T get(const py::dict& d, const char* key, T fallback) {
  if (!d.contains(key) || d[key].is_none()) return fallback;
  try {
    return d[key].cast<T>();
  } catch (const py::cast_error&) {
    throw py::value_error(std::string(key) + ": " + py::repr(d[key]).cast<std::string>() +
                          " is not of the expected type or range" +
                          (std::is_unsigned_v<T> ? " (a whole number >= 0)" : ""));
  }
}

std::optional<ModelInput> model_of(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return std::nullopt;
  const auto t = d[key].cast<py::tuple>();
  return ModelInput{t[0].cast<std::string>(), t[1].cast<std::string>(), t[2].cast<bool>()};
}

commands::FitCommandOptions fit_args(const py::dict& d) {
  commands::FitCommandOptions a;
  a.activation = get<std::string>(d, "activation", "");
  a.domain = get<std::string>(d, "domain", "");
  a.family = get<std::string>(d, "family", a.family);
  a.samples = get<std::string>(d, "samples", "");
  a.weights = get<std::string>(d, "weights", "");
  a.alpha = get<std::string>(d, "alpha", a.alpha);
  a.output = get<std::string>(d, "output", "");
  a.warm_start = model_of(d, "warm_start");
  a.score = model_of(d, "score");
  a.states = get<std::size_t>(d, "states", a.states);
  a.points = get<std::size_t>(d, "points", a.points);
  auto& s = a.search;
  s.starts = get<int>(d, "starts", s.starts);
  s.threads = get<int>(d, "threads", s.threads);
  s.max_iterations = get<int>(d, "max_iterations", s.max_iterations);
  s.basin_rounds = get<int>(d, "basin_rounds", s.basin_rounds);
  if (s.basin_rounds < 0) s.basin_rounds = ctmc::analysis::FitOptions{}.basin_rounds;  // below 0: the library's default
  a.gradient = get<std::string>(d, "gradient", a.gradient);
  s.seed = get<std::uint64_t>(d, "seed", s.seed);
  a.bounds.rate_bound = get<double>(d, "rate_bound", a.bounds.rate_bound);
  a.bounds.min_const_rate = get<double>(d, "min_rate", a.bounds.min_const_rate);
  s.mpfr_bits = get<unsigned>(d, "precision", s.mpfr_bits);
  s.widen_on_bound = !get<bool>(d, "no_widen", !s.widen_on_bound);
  a.certify = get<bool>(d, "certify", a.certify);
  a.family_given = get<bool>(d, "family_given", a.family_given);
  return a;
}

// A float64 C-contiguous array (the Python layer converts) as a TensorArg.
std::optional<TensorArg> tensor_of(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return std::nullopt;
  const auto t = d[key].cast<py::tuple>();
  auto arr = t[0].cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
  TensorArg out;
  out.name = t[1].cast<std::string>();
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) out.shape.push_back(static_cast<std::int64_t>(arr.shape(i)));
  out.values.assign(arr.data(), arr.data() + arr.size());
  return out;
}

NetworkArgs network_args(const py::dict& d) {
  NetworkArgs a;
  a.net_path = get<std::string>(d, "net_path", "");
  a.net_name = get<std::string>(d, "net_name", "net");
  if (d.contains("layers") && !d["layers"].is_none()) {
    for (auto item : d["layers"].cast<py::list>()) {
      const auto l = item.cast<py::dict>();
      LayerArg la;
      la.weight = *tensor_of(l, "weight");
      la.bias = tensor_of(l, "bias");
      la.activation = get<std::string>(l, "activation", "");
      a.layers.push_back(std::move(la));
    }
  }
  a.dir = get<std::string>(d, "dir", "");
  a.test_images_spec = get<std::string>(d, "test_images_spec", "");
  a.test_labels_spec = get<std::string>(d, "test_labels_spec", "");
  a.train_images_spec = get<std::string>(d, "train_images_spec", "");
  a.train_labels_spec = get<std::string>(d, "train_labels_spec", "");
  a.normalization = get<std::string>(d, "normalize", "");
  a.test_images = tensor_of(d, "test_images");
  a.test_labels = tensor_of(d, "test_labels");
  a.train_images = tensor_of(d, "train_images");
  a.train_labels = tensor_of(d, "train_labels");
  a.data_name = get<std::string>(d, "data_name", "");
  for (auto item : d["neurons"].cast<py::list>()) {
    const auto t = item.cast<py::tuple>();
    a.neurons.push_back({t[0].cast<std::string>(), t[1].cast<std::string>(), t[2].cast<bool>()});
  }
  auto& o = a.options;
  o.opt.snn.T = get<double>(d, "T", o.opt.snn.T);
  o.opt.snn.tau = get<double>(d, "tau", o.opt.snn.tau);
  o.opt.rate = get<double>(d, "rate", o.opt.rate);
  o.opt.snn.dt = get<double>(d, "dt", o.opt.snn.dt);
  o.opt.trials = get<int>(d, "trials", o.opt.trials);
  o.opt.limit = get<int>(d, "limit", o.opt.limit);
  o.opt.threads = get<int>(d, "threads", o.opt.threads);
  o.opt.seed = get<unsigned long long>(d, "seed", o.opt.seed);
  commands::NetworkOptionTexts t;
  for (const auto& [key, text] : {std::pair{"sampler", &t.sampler}, {"kernel", &t.kernel}, {"conv_path", &t.conv_path},
                                  {"readout", &t.readout}, {"scale", &t.scale}, {"trace_weight", &t.trace_weight},
                                  {"output_scale", &t.output_scale}, {"subset", &t.subset},
                                  {"layer_alpha", &t.layer_alpha}, {"if_norm", &t.if_norm}})
    *text = get<std::string>(d, key, *text);
  commands::set_network_options(o, t);
  o.v0 = get<double>(d, "v0", o.v0);
  o.if_steps = get<int>(d, "if_steps", o.if_steps);
  return a;
}

const char* mode_name(commands::Arithmetic a) {
  switch (a) {
    case commands::Arithmetic::Exact: return "exact";
    case commands::Arithmetic::Double: return "double";
    default: return "mpfr";
  }
}

commands::TrainCommandOptions train_options(const py::dict& d) {
  commands::TrainCommandOptions o;
  o.data = get<std::string>(d, "data", "");
  o.output = get<std::string>(d, "output", "");
  o.arch = get<std::string>(d, "arch", o.arch);
  o.hidden_given = d.contains("hidden") && !d["hidden"].is_none();
  o.hidden = get<std::string>(d, "hidden", o.hidden);
  o.width_given = d.contains("width") && !d["width"].is_none();
  o.width = get<double>(d, "width", o.width);
  o.train_limit = get<int>(d, "train_limit", o.train_limit);
  o.cfg.activation = get<std::string>(d, "activation", o.cfg.activation);
  o.cfg.epochs = get<int>(d, "epochs", o.cfg.epochs);
  o.cfg.batch_size = get<int>(d, "batch", o.cfg.batch_size);
  o.cfg.learning_rate = get<float>(d, "lr", o.cfg.learning_rate);
  o.cfg.seed = get<std::uint64_t>(d, "seed", o.cfg.seed);
  o.cfg.threads = commands::checked_threads(get<int>(d, "threads", o.cfg.threads));
  o.max_memory_gib = get<double>(d, "max_memory", o.max_memory_gib);
  o.command_line = "ctmc_snn.train";
  return o;
}

commands::EvaluateCommandOptions evaluate_options(const py::dict& d) {
  commands::EvaluateCommandOptions o;
  o.net = get<std::string>(d, "net", "");
  o.data.dir = get<std::string>(d, "data", "");
  o.clips = get<std::string>(d, "clip", o.clips);
  o.predictions = get<std::string>(d, "predictions", "");
  o.max_memory_gib = get<double>(d, "max_memory", o.max_memory_gib);
  return o;
}

ctmc::commands::ConvertOptions convert_options(const py::dict& d) {
  ctmc::commands::ConvertOptions o;
  o.net = get<std::string>(d, "net", "");
  o.data.dir = get<std::string>(d, "data", "");
  o.output_dir = get<std::string>(d, "output_dir", "");
  o.fit_images = get<int>(d, "fit_images", o.fit_images);
  o.samples = get<std::size_t>(d, "samples", o.samples);
  o.starts = get<int>(d, "starts", o.starts);
  o.output_activation = get<std::string>(d, "output_activation", "");
  o.seed = get<unsigned long long>(d, "seed", o.seed);
  o.threads = commands::checked_threads(get<int>(d, "threads", o.threads));
  o.command_line = "ctmc_snn.convert";
  return o;
}

// A float option's default as the CLI's --help writes it (0.001, not the
// double nearest the float 0.001f).
double float_as_written(float x) { return std::stod(fmt::format("{}", x)); }

// The keyword defaults of the Python functions, read from default-constructed
// option structs of the commands: the Python package takes its defaults from
// here, so that they are written once, in C++ (tests/python checks every
// keyword of every public function against this table).
py::dict defaults() {
  namespace r = ctmc::commands;
  py::dict out;
  {
    const r::FluxOptions f;
    out["stationary"] = py::dict(py::arg("mode") = mode_name(f.arithmetic), py::arg("precision") = f.precision);
    out["flux"] = out["stationary"];
  }
  out["formula"] = py::dict();  // no options
  {
    const r::CountingOptions c;
    out["counting"] = py::dict(py::arg("start") = py::none(), py::arg("mode") = mode_name(c.arithmetic),
                               py::arg("precision") = c.precision);
  }
  {
    const r::BernsteinOptions b;
    out["bernstein"] = py::dict(py::arg("N") = py::none(), py::arg("eps") = py::none(), py::arg("rho") = py::none(),
                                py::arg("rho_factor") = py::none(), py::arg("precision") = b.precision,
                                py::arg("cap") = b.cap, py::arg("bracket") = b.bracket);
  }
  const r::FitCommandOptions f;
  const auto fit_common = [&] {
    return py::dict(py::arg("domain") = py::none(), py::arg("samples") = py::none(), py::arg("weights") = py::none(),
                    py::arg("points") = f.points, py::arg("alpha") = f.alpha, py::arg("precision") = f.search.mpfr_bits,
                    py::arg("rate_bound") = f.bounds.rate_bound, py::arg("min_rate") = f.bounds.min_const_rate,
                    py::arg("certify") = f.certify);
  };
  {
    py::dict fit = fit_common();
    fit["family"] = f.family;
    fit["states"] = py::none();  // the family's own size (f.states == 0)
    fit["starts"] = f.search.starts;
    fit["seed"] = f.search.seed;
    fit["threads"] = f.search.threads;
    fit["max_iterations"] = f.search.max_iterations;
    fit["basin_rounds"] = py::none();  // the library's default (f.search.basin_rounds)
    fit["gradient"] = f.gradient;
    fit["no_widen"] = !f.search.widen_on_bound;
    fit["warm_start"] = py::none();
    fit["output"] = py::none();
    out["fit"] = fit;
    py::dict score = fit_common();
    score["family"] = py::none();  // recognised from the chain
    out["score"] = score;
  }
  {
    const r::NeuronSimOptions n;
    out["simulate_neuron"] = py::dict(py::arg("trials") = n.trials, py::arg("seed") = n.seed,
                                      py::arg("threads") = n.threads, py::arg("start") = n.start,
                                      py::arg("alpha") = n.alpha);
  }
  {
    const r::NetworkCommandOptions n;
    const r::NetworkOptionTexts t;
    out["simulate_network"] = py::dict(
        py::arg("T") = n.opt.snn.T, py::arg("tau") = n.opt.snn.tau, py::arg("rate") = n.opt.rate,
        py::arg("dt") = n.opt.snn.dt, py::arg("trials") = n.opt.trials, py::arg("seed") = n.opt.seed,
        py::arg("threads") = n.opt.threads, py::arg("sampler") = t.sampler, py::arg("kernel") = t.kernel,
        py::arg("conv_path") = t.conv_path, py::arg("readout") = t.readout,
        py::arg("scale") = t.scale, py::arg("limit") = n.opt.limit, py::arg("subset") = t.subset,
        py::arg("trace_weight") = t.trace_weight, py::arg("output_scale") = t.output_scale,
        py::arg("layer_alpha") = py::none(), py::arg("normalize") = py::none(), py::arg("activation") = py::none(),
        py::arg("if_norm") = py::none(), py::arg("v0") = n.v0, py::arg("if_steps") = n.if_steps);
  }
  {
    const ctmc::commands::ReportFolderContext c;
    const ctmc::commands::CheckOptions k;
    out["check"] = py::dict(py::arg("out") = py::none(), py::arg("seed") = c.seed, py::arg("threads") = c.threads,
                            py::arg("precision") = c.precision, py::arg("allow_outside_paths") = k.allow_outside_paths,
                            py::arg("allow_unchecked") = k.allow_unchecked, py::arg("max_seconds") = k.max_seconds);
  }
  {
    const commands::TrainCommandOptions t;
    out["train"] = py::dict(py::arg("activation") = t.cfg.activation, py::arg("arch") = t.arch,
                            py::arg("hidden") = py::none(),  // t.hidden, or VGG-11's channels with arch vgg11
                            py::arg("width") = py::none(),   // t.width with arch vgg11
                            py::arg("train_limit") = t.train_limit, py::arg("epochs") = t.cfg.epochs,
                            py::arg("batch") = t.cfg.batch_size, py::arg("lr") = float_as_written(t.cfg.learning_rate),
                            py::arg("seed") = t.cfg.seed, py::arg("threads") = t.cfg.threads,
                            py::arg("max_memory") = py::none());  // the machine's memory
    const commands::EvaluateCommandOptions e;
    out["evaluate"] = py::dict(py::arg("clip") = e.clips, py::arg("predictions") = py::none(),
                               py::arg("max_memory") = py::none());
    const ctmc::commands::ConvertOptions c;
    out["convert"] = py::dict(py::arg("fit_images") = c.fit_images, py::arg("samples") = c.samples,
                              py::arg("starts") = c.starts, py::arg("output_activation") = py::none(),
                              py::arg("seed") = c.seed, py::arg("threads") = c.threads);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ctmc-snn library bindings (use the ctmc_snn package, not this module)";
  ctmc::analysis::quiet_solver_logging();  // the fits' solver: FATAL messages only, as the CLI
  // As the CLI at start-up: libgomp crashes when OMP_NUM_THREADS asks for
  // 100000 threads.
  if (omp_get_max_threads() > commands::kMaxThreads) omp_set_num_threads(commands::kMaxThreads);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ctmc::InputError& e) {
      PyErr_SetString(PyExc_ValueError, commands::one_line(commands::option_message(e)).c_str());
    } catch (const ctmc::CheckFailed& e) {
      PyErr_SetString(PyExc_RuntimeError, ("check failed: " + commands::one_line(e.what())).c_str());
    }
  });

  m.def("flux", [](const std::string& text, const std::string& source, bool is_path,
                   const std::vector<std::string>& hs, const std::string& mode, unsigned precision) {
    const auto mi = model_input(text, source, is_path);
    return to_python(call([&] { return flux(mi, hs, mode, precision); }));
  });
  m.def("flux_double", [](const std::string& text, const std::string& source, bool is_path,
                          const std::vector<std::string>& hs) {
    const auto mi = model_input(text, source, is_path);
    std::vector<double> v = call([&] { return flux_double(mi, hs); });
    py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
  });
  m.def("counting", [](const std::string& text, const std::string& source, bool is_path, const std::string& h,
                       const std::string& t, const std::string& from, const std::string& mode, unsigned precision) {
    const auto mi = model_input(text, source, is_path);
    return to_python(call([&] { return counting(mi, h, t, from, mode, precision); }));
  });
  m.def("formula", [](const std::string& text, const std::string& source, bool is_path) {
    const auto mi = model_input(text, source, is_path);
    return to_python(call([&] { return commands::run_formula(load_model(mi), mi.source); }));
  });
  m.def("bernstein", [](const std::string& activation, const std::string& domain, const std::string& rho,
                        const std::string& rho_factor, std::optional<std::int64_t> n, const std::string& eps,
                        unsigned precision, std::int64_t cap, double bracket) {
    const commands::BernsteinOptions a{activation, domain, rho, rho_factor, eps, n, precision, cap, bracket};
    return to_python(call([&] { return commands::run_bernstein(a); }));
  });
  m.def("fit", [](const py::dict& d) {
    const auto a = fit_args(d);
    return to_python(a, call([&] { return commands::run_fit(a); }));
  });
  m.def("score", [](const py::dict& d) {
    const auto a = fit_args(d);
    return to_python(a, call([&] { return commands::run_score(a); }));
  });
  m.def("simulate_neuron", [](const std::string& text, const std::string& source, bool is_path, const py::dict& d) {
    const auto mi = model_input(text, source, is_path);
    commands::NeuronSimOptions a;
    a.h = get<std::string>(d, "H", "");
    a.T = get<double>(d, "T", a.T);
    a.trials = get<std::size_t>(d, "trials", a.trials);
    a.seed = get<unsigned long long>(d, "seed", a.seed);
    a.threads = get<int>(d, "threads", a.threads);
    a.start = get<std::string>(d, "start", a.start);
    a.alpha = get<double>(d, "alpha", a.alpha);
    // Beyond the CLI's document: the count of every trial (for the user's own statistics).
    return to_python(call([&] { return commands::run_simulate_neuron(mi, a, true); }));
  });
  m.def("check", [](const std::string& path, const std::string& out, unsigned long long seed, int threads,
                    unsigned precision, const std::string& base_dir, bool allow_outside_paths, bool allow_unchecked,
                    double max_seconds) {
    int status = -1;
    const ctmc::commands::CheckResult r = call([&] {
      return check(path, out, seed, threads, precision, base_dir, allow_outside_paths, allow_unchecked, max_seconds,
                   &status);
    });
    return py::make_tuple(to_python(r), status);
  });
  m.def("defaults", &defaults);
  m.def("train", [](const py::dict& d) {
    const auto o = train_options(d);
    return to_python(call([&] { return commands::run_train(o); }));
  });
  m.def("evaluate", [](const py::dict& d) {
    const auto o = evaluate_options(d);
    return to_python(call([&] {
      auto r = commands::run_evaluate(o);
      if (!o.predictions.empty()) commands::write_predictions(o, r.rows.front());
      return r;
    }));
  });
  m.def("convert", [](const py::dict& d) {
    const auto o = convert_options(d);
    return to_python(call([&] { return ctmc::commands::run_convert(o); }));
  });
  m.def("simulate_network", [](const py::dict& d) {
    const NetworkArgs a = network_args(d);
    return to_python(call([&] { return simulate_network(a); }));
  });
}
