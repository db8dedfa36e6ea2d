#include "ctmc/commands/command_line.hpp"

#include <algorithm>
#include <cctype>

#include "ctmc/commands/command_text.hpp"

namespace ctmc::commands {

std::string shell_word(std::string_view s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("/._-,:=+").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(s);
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

CommandLine::CommandLine(std::string_view command) : text_("ctmc-snn " + std::string(command)) {
  head_ = text_.size() + 1;
}

CommandLine& CommandLine::arg(std::string_view value) {
  text_ += " " + shell_word(value);
  return *this;
}

CommandLine& CommandLine::raw(std::string_view name, const std::string& value) {
  text_ += fmt::format(" {} {}", name, value);
  return *this;
}

CommandLine& CommandLine::option(std::string_view name, std::string_view value) {
  return raw(name, shell_word(value));
}

CommandLine& CommandLine::option(std::string_view name, const std::vector<std::string>& items) {
  std::string joined;
  for (const auto& s : items) joined += (joined.empty() ? "" : ",") + shell_word(s);
  return raw(name, joined);
}

CommandLine& CommandLine::option(std::string_view name, const std::vector<double>& items) {
  std::string joined;
  for (double x : items) joined += (joined.empty() ? "" : ",") + fmt::format("{}", x);
  return raw(name, joined);
}

CommandLine& CommandLine::flag(std::string_view name) {
  text_ += " " + std::string(name);
  return *this;
}

CommandLine& CommandLine::data(const sim::DataSource& d) {
  const auto given = [&](std::string_view name, const std::string& v) {
    if (!v.empty()) option(name, v);
  };
  given("--data", d.dir);
  given("--test-images", d.test_images);
  given("--test-labels", d.test_labels);
  given("--train-images", d.train_images);
  given("--train-labels", d.train_labels);
  given("--normalize", d.normalization);
  return *this;
}

std::string run_in(const std::string& dir, const CommandLine& command) {
  return fmt::format("(cd {} && {})", shell_word(dir), command.text());
}

CommandLine train_command_line(const TrainCommandOptions& o) {
  const TrainCommandOptions d;
  CommandLine c("train");
  if (o.arch != d.arch) c.option("--arch", o.arch).option("--width", o.width);
  c.option("--data", o.data).option("--activation", o.cfg.activation);
  if (o.arch == d.arch) c.option("--hidden", o.hidden);
  c.option("--epochs", o.cfg.epochs).option("--seed", o.cfg.seed);
  if (o.train_limit > 0) c.option("--train-limit", o.train_limit);
  if (o.cfg.batch_size != d.cfg.batch_size) c.option("--batch", o.cfg.batch_size);
  if (o.cfg.learning_rate != d.cfg.learning_rate) c.option("--lr", o.cfg.learning_rate);
  if (o.max_memory_gib != d.max_memory_gib) c.option("--max-memory", o.max_memory_gib);
  return c.option("--output", o.output);
}

CommandLine evaluate_command_line(const EvaluateCommandOptions& o) {
  const EvaluateCommandOptions d;
  CommandLine c("evaluate");
  c.option("--net", o.net).data(o.data);
  if (o.clips != d.clips) c.option("--clip", o.clips);
  if (!o.predictions.empty()) c.option("--predictions", o.predictions);
  if (o.max_memory_gib != d.max_memory_gib) c.option("--max-memory", o.max_memory_gib);
  return c;
}

CommandLine import_onnx_command_line(const ImportOnnxOptions& o) {
  return CommandLine("import onnx").arg(o.model).option("--output", o.output);
}

CommandLine fit_command_line(const FitCommandOptions& o) {
  const FitCommandOptions d;
  CommandLine c("fit");
  c.option("--activation", o.activation);
  if (!o.domain.empty()) c.option("--domain", o.domain);
  c.option("--family", o.family);
  if (o.states != d.states) c.option("--states", o.states);
  if (o.points != d.points) c.option("--points", o.points);
  if (!o.samples.empty()) c.option("--samples", o.samples);
  if (!o.weights.empty()) c.option("--weights", o.weights);
  c.option("--rate-bound", o.bounds.rate_bound);
  if (o.bounds.min_const_rate != d.bounds.min_const_rate) c.option("--min-rate", o.bounds.min_const_rate);
  if (!o.search.widen_on_bound) c.flag("--no-widen");
  c.option("--starts", o.search.starts).option("--seed", o.search.seed);
  if (o.alpha != d.alpha) c.option("--alpha", o.alpha);
  if (o.gradient != d.gradient) c.option("--gradient", o.gradient);
  if (o.search.mpfr_bits != d.search.mpfr_bits) c.option("--precision", o.search.mpfr_bits);
  if (o.search.max_iterations != d.search.max_iterations) c.option("--max-iterations", o.search.max_iterations);
  if (o.warm_start && o.warm_start->is_path) c.option("--warm-start", o.warm_start->text);
  if (o.score && o.score->is_path) c.option("--score", o.score->text);
  if (o.certify) c.flag("--certify");
  if (!o.output.empty()) c.option("--output", o.output);
  return c;
}

CommandLine check_command_line(const std::string& claims, const CheckOptions& o) {
  const CheckOptions d;
  CommandLine c("check");
  c.arg(claims).option("--seed", o.seed);
  if (o.precision != d.precision) c.option("--precision", o.precision);
  if (o.max_seconds != d.max_seconds) c.option("--max-seconds", o.max_seconds);
  if (o.allow_outside_paths) c.flag("--allow-outside-paths");
  if (o.allow_unchecked) c.flag("--allow-unchecked");
  return c;
}

CommandLine simulate_network_command_line(const SimulateNetworkCommand& sc) {
  const NetworkCommandOptions d;
  const NetworkCommandOptions& o = sc.options;
  CommandLine c("simulate network");
  c.option("--net", sc.net).data(sc.data).option("--neurons", sc.neurons);
  c.option("--T", o.opt.snn.T).option("--tau", o.opt.snn.tau).option("--rate", o.opt.rate);
  if (o.opt.snn.dt != d.opt.snn.dt) c.option("--dt", o.opt.snn.dt);
  c.option("--trials", o.opt.trials).option("--seed", o.opt.seed);
  const sim::NetworkSimOptions &r = o.opt, &dr = d.opt;
  if (r.snn.sampler != dr.snn.sampler) c.option("--sampler", sim::sampler_name(r.snn.sampler));
  if (r.snn.kernel != dr.snn.kernel) c.option("--kernel", sim::kernel_name(r.snn.kernel));
  if (r.snn.conv_path != dr.snn.conv_path) c.option("--conv-path", sim::conv_path_name(r.snn.conv_path));
  if (r.snn.readout != dr.snn.readout) c.option("--readout", sim::readout_name(r.snn.readout));
  if (r.scale != dr.scale) c.option("--scale", sim::scale_name(r.scale));
  if (r.limit != dr.limit) c.option("--limit", r.limit);
  if (r.subset.text != dr.subset.text) c.option("--subset", r.subset.text);
  if (r.snn.trace_weight != dr.snn.trace_weight) c.option("--trace-weight", sim::trace_weight_name(r.snn.trace_weight));
  if (r.output_scale != dr.output_scale) c.option("--output-scale", sim::output_scale_name(r.output_scale));
  if (!r.layer_alpha.empty()) c.option("--layer-alpha", layer_alpha_text(r.layer_alpha));
  if (o.if_norm) {
    c.option("--if", if_norm_name(*o.if_norm));
    if (o.v0 != d.v0) c.option("--v0", o.v0);
    if (o.if_steps != d.if_steps) c.option("--if-steps", o.if_steps);
  }
  return c;
}

CommandLine sweep_command_line(const SweepCommandOptions& o, SweepConventions shown) {
  const SweepCommandOptions d;
  const sim::SweepSpec& s = o.spec;
  const bool every = shown == SweepConventions::Every;
  std::vector<std::string> samplers;
  for (auto k : s.samplers) samplers.push_back(sim::sampler_name(k));
  CommandLine c("sweep");
  c.option("--net", s.nets).data(s.data).option("--neurons", s.neurons);
  c.option("--tau", s.taus).option("--rate", s.rates).option("--T", s.T);
  if (every || s.samplers != d.spec.samplers) c.option("--sampler", samplers);
  if (every || s.kernel != d.spec.kernel) c.option("--kernel", sim::kernel_name(s.kernel));
  c.option("--trials", s.trials);
  if (every || s.dt != d.spec.dt) c.option("--dt", s.dt);
  if (every || s.readout != d.spec.readout) c.option("--readout", sim::readout_name(s.readout));
  if (every || s.trace_weight != d.spec.trace_weight)
    c.option("--trace-weight", sim::trace_weight_name(s.trace_weight));
  if (every || s.output_scale != d.spec.output_scale)
    c.option("--output-scale", sim::output_scale_name(s.output_scale));
  if (every || s.subset.text != d.spec.subset.text) c.option("--subset", s.subset.text);
  if (every || s.limit != d.spec.limit) c.option("--limit", s.limit);
  c.option("--seed", s.seed);
  if (s.criterion != d.spec.criterion) c.option("--criterion", s.criterion);
  if (s.scale != d.spec.scale) c.option("--scale", sim::scale_name(s.scale));
  if (!s.layer_alpha.empty()) c.option("--layer-alpha", layer_alpha_text(s.layer_alpha));
  if (o.shard) c.option("--shard", fmt::format("{}/{}", o.shard->index, o.shard->count));
  if (s.limits.runs != d.spec.limits.runs) c.option("--max-runs", s.limits.runs);
  if (s.limits.neuron_steps != d.spec.limits.neuron_steps) c.option("--max-neuron-steps", s.limits.neuron_steps);
  if (o.max_memory_gib != d.max_memory_gib) c.option("--max-memory", o.max_memory_gib);
  if (o.dry_run) c.flag("--dry-run");
  if (!o.out.empty()) c.option("--out", o.out);
  return c;
}

}  // namespace ctmc::commands
