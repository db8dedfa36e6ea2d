// Network manifest + safetensors weights (manifest.hpp).
#include "ctmc/sim/nets/manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <tuple>
#include <filesystem>
#include <initializer_list>
#include <set>

#include "ctmc/activations/activation.hpp"
#include "ctmc/io/sha256.hpp"
#include "ctmc/sim/formats/atomic_write.hpp"
#include "ctmc/sim/formats/read_file.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"

namespace ctmc::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

// Layers are numbered from 1 as everywhere else in the tool (simulate's
// "layer 1" is the first); the manifest's array index is given beside it.
std::string layer_label(std::size_t l) { return "layer " + std::to_string(l + 1) + " (layers[" + std::to_string(l) + "])"; }

int positive_int(const std::string& path, const json& layer, const char* key, std::size_t l) {
  // Read as uint64 and bounded before narrowing: get<int>() would wrap
  // 4294967298 to 2 and get<int64_t>() turns 2^63 and above negative.
  // (A manifest built in memory, e.g. by the ONNX import, may hold positive
  // counts as signed integers.)
  if (!layer.contains(key) || !layer[key].is_number_integer() ||
      (!layer[key].is_number_unsigned() && layer[key].get<std::int64_t>() < 0) || layer[key].get<std::uint64_t>() == 0 ||
      layer[key].get<std::uint64_t>() > std::uint64_t(INT_MAX))
    fail(path, layer_label(l) + " needs \"" + key + "\" (a positive integer at most " + std::to_string(INT_MAX) + ")");
  return static_cast<int>(layer[key].get<std::uint64_t>());
}

std::string string_field(const std::string& path, const json& layer, const char* key, std::size_t l) {
  if (!layer.contains(key)) fail(path, layer_label(l) + " needs \"" + key + "\" (a string)");
  return solvers::json_string(layer[key], path, solvers::json_member_path(solvers::json_element_path("layers", l), key));
}

const Tensor& tensor(const SafetensorsFile& f, const std::string& weights_path, const std::string& name) {
  auto it = f.tensors.find(name);
  if (it != f.tensors.end()) return it->second;
  // Present but of a dtype weights cannot have (an int64 counter): say so.
  const auto u = f.unusable.find(name);
  if (u != f.unusable.end()) fail(weights_path, "tensor " + quote_excerpt(name) + " (named in the manifest) " + u->second);
  fail(weights_path, "no tensor named " + quote_excerpt(name) + " (named in the manifest)");
}

// Unknown keys are errors: a misspelt "bias" would otherwise read as a zero
// bias, a misspelt "weights" as a missing one (the model reader does the same).
void only_keys(const std::string& path, const json& obj, std::initializer_list<const char*> known,
               const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    (void)value;
    bool ok = false;
    std::string list;
    for (const char* k : known) {
      ok = ok || key == k;
      list += (list.empty() ? "" : ", ") + std::string(k);
    }
    if (!ok) fail(path, where + "unknown key " + quote_excerpt(key) + " (expected " + list + ")");
  }
}

// "weights_sha256" (written by save_network; optional, manifests written by
// hand for PyTorch weights have none): the weights file must be the one the
// manifest was written with. A write killed between its two renames leaves
// new weights beside the old manifest (or the reverse); this refuses the mix.
void check_weights_hash(const std::string& manifest_path, const json& m, const std::string& weights_path) {
  if (!m.contains("weights_sha256")) return;
  const json& h = m["weights_sha256"];
  if (!h.is_string() || h.get<std::string>().size() != 64 ||
      h.get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos)
    fail(manifest_path, "\"weights_sha256\" must be 64 lower-case hex digits (the SHA-256 of the weights file)");
  // Hashed a piece at a time, bounded as the safetensors reader bounds it.
  solvers::InputFile in(weights_path, kSafetensorsKind.what);
  if (in.size() > kSafetensorsKind.max_bytes) solvers::refuse_too_large(weights_path, kSafetensorsKind);
  io::Sha256 sha;
  std::vector<char> piece(std::size_t(1) << 20);
  std::uint64_t total = 0;
  for (std::size_t n; (n = in.read(piece.data(), piece.size())) > 0;) {
    total += n;
    if (total > kSafetensorsKind.max_bytes) solvers::refuse_too_large(weights_path, kSafetensorsKind);
    sha.update(piece.data(), n);
  }
  if (io::hex(sha.digest()) != h.get<std::string>())
    fail(manifest_path, "the weights file " + weights_path +
                            " is not the one this manifest was written with (its SHA-256 differs from \"weights_sha256\"; "
                            "a write of both was interrupted, or one was replaced)");
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

}  // namespace

namespace {

// The tensor names a manifest's layers give (read_safetensors decodes only these).
std::set<std::string> named_tensors(const json& layers) {
  std::set<std::string> out;
  for (const auto& L : layers)
    if (L.is_object())
      for (const char* k : {"weight", "bias", "running_mean", "running_var"})
        if (L.contains(k) && L[k].is_string()) out.insert(L[k].get<std::string>());
  return out;
}

struct ManifestFiles {
  json m;
  std::string weights_path;
};

// The manifest's top level checked, the weights file located and its hash checked.
ManifestFiles read_manifest(const std::string& manifest_path) {
  // Bounded (a manifest is a few KB), strict (nesting capped, duplicate keys refused).
  const json m = solvers::parse_json_strict<json>(solvers::read_input_file(manifest_path, kManifestKind), manifest_path);
  if (!m.is_object()) fail(manifest_path, "manifest is not a JSON object");
  only_keys(manifest_path, m, {"format", "version", "weights", "weights_sha256", "input", "layers", "meta"}, "");
  if (m.contains("version") && m["version"] != 1)
    fail(manifest_path, "\"version\" " + solvers::json_excerpt(m["version"]) + " is not supported (this reader knows version 1)");
  if (m.contains("format") && m["format"] != "ctmc-snn-mlp") fail(manifest_path, "\"format\" must be \"ctmc-snn-mlp\"");
  if (!m.contains("weights")) fail(manifest_path, "needs \"weights\" (the safetensors file name)");
  const std::string weights_name = solvers::json_string(m["weights"], manifest_path, "weights");
  if (!m.contains("layers")) fail(manifest_path, "needs a non-empty \"layers\" array");
  if (solvers::json_expect(m["layers"], solvers::JsonType::Array, manifest_path, "layers").empty())
    fail(manifest_path, "needs a non-empty \"layers\" array");
  const fs::path wpath = fs::path(manifest_path).parent_path() / weights_name;
  const std::string weights_path = wpath.string();
  check_weights_hash(manifest_path, m, weights_path);
  return {m, weights_path};
}

bool all_dense(const json& layers) {
  for (const auto& L : layers)
    if (L.is_object() && L.contains("type") && L["type"] != "dense") return false;
  return true;
}

}  // namespace

Net load_net(const std::string& manifest_path, json* meta_out) {
  const ManifestFiles f = read_manifest(manifest_path);
  const SafetensorsFile st = read_safetensors(f.weights_path, named_tensors(f.m["layers"]));
  Net net = net_from_manifest(f.m, st, manifest_path, f.weights_path);
  if (meta_out) *meta_out = f.m.contains("meta") ? f.m["meta"] : json::object();
  return net;
}

namespace {

// A manifest read and its tensors as a dense network (load_network).
Mlp mlp_from_manifest(const ManifestFiles& f, const SafetensorsFile& st, const std::string& manifest_path) {
  const json& m = f.m;
  const std::string& weights_path = f.weights_path;
  if (!all_dense(m["layers"]) || m.contains("input"))
    return net_from_manifest(m, st, manifest_path, weights_path).to_mlp(manifest_path);

  Mlp net;
  const auto& layers = m["layers"];
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const json& L = layers[l];
    if (!L.is_object()) fail(manifest_path, layer_label(l) + " is not an object");
    only_keys(manifest_path, L, {"type", "weight", "bias", "in", "out", "activation"}, layer_label(l) + ": ");
    const std::string type = L.contains("type") ? string_field(manifest_path, L, "type", l) : "dense";
    if (type != "dense") fail(manifest_path, layer_label(l) + " has type " + quote_excerpt(type) + " (only \"dense\" is supported)");
    const int n_in = positive_int(manifest_path, L, "in", l), n_out = positive_int(manifest_path, L, "out", l);
    DenseLayer d;
    d.activation = string_field(manifest_path, L, "activation", l);
    const std::string wname = string_field(manifest_path, L, "weight", l);
    const Tensor& w = tensor(st, weights_path, wname);
    if (w.shape != std::vector<std::int64_t>{n_out, n_in})
      fail(weights_path, "tensor " + quote_excerpt(wname) + " has shape " + shape_text(w.shape) + ", the manifest says [" + std::to_string(n_out) + ", " +
                             std::to_string(n_in) + "] (out, in)");
    // [out, in] row-major -> Eigen column-major out x in.
    d.W.resize(n_out, n_in);
    for (int i = 0; i < n_out; ++i)
      for (int j = 0; j < n_in; ++j) d.W(i, j) = static_cast<float>(w.values[std::size_t(i) * n_in + j]);
    d.b = Eigen::VectorXf::Zero(n_out);
    if (L.contains("bias") && !L["bias"].is_null()) {
      const std::string bname = string_field(manifest_path, L, "bias", l);
      const Tensor& b = tensor(st, weights_path, bname);
      if (b.shape != std::vector<std::int64_t>{n_out})
        fail(weights_path, "tensor " + quote_excerpt(bname) + " has shape " + shape_text(b.shape) + ", the manifest says [" + std::to_string(n_out) + "]");
      for (int i = 0; i < n_out; ++i) d.b(i) = static_cast<float>(b.values[std::size_t(i)]);
    }
    net.layers.push_back(std::move(d));
  }
  net.validate(manifest_path);
  return net;
}

}  // namespace

Mlp load_network(const std::string& manifest_path, json* meta_out) {
  const ManifestFiles f = read_manifest(manifest_path);
  const SafetensorsFile st = read_safetensors(f.weights_path, named_tensors(f.m["layers"]));
  Mlp net = mlp_from_manifest(f, st, manifest_path);
  if (meta_out) *meta_out = f.m.contains("meta") ? f.m["meta"] : json::object();
  return net;
}

// The manifest and its weights are read (and the weights hashed) once; both
// readers work on what was read.
AnyNetwork load_any_network(const std::string& manifest_path) {
  const ManifestFiles f = read_manifest(manifest_path);
  const SafetensorsFile st = read_safetensors(f.weights_path, named_tensors(f.m["layers"]));
  // The layers declare the kind: dense layers only, without an input shape,
  // are an Mlp (its reader's messages); anything else is read as a layer
  // graph, which is an Mlp after all when only flattens and activations
  // join its dense layers.
  if (all_dense(f.m["layers"]) && !f.m.contains("input")) return AnyNetwork{mlp_from_manifest(f, st, manifest_path), std::nullopt};
  Net net = net_from_manifest(f.m, st, manifest_path, f.weights_path);
  if (net.is_dense()) return AnyNetwork{net.to_mlp(manifest_path), std::nullopt};
  return AnyNetwork{std::nullopt, std::move(net)};
}

AnyNetwork load_any_network(const std::function<Mlp()>& dense, const std::function<Net()>& graph) {
  try {
    return AnyNetwork{dense(), std::nullopt};
  } catch (const InputError&) {
    if (!graph) throw;
    const std::exception_ptr refused = std::current_exception();
    std::optional<Net> g;
    try {
      g = graph();
    } catch (const InputError&) {
      std::rethrow_exception(refused);
    }
    if (g->is_dense()) std::rethrow_exception(refused);
    return AnyNetwork{std::nullopt, std::move(g)};
  }
}

namespace {

// kernel_size / stride / padding: a number, or [h, w] (PyTorch's int or tuple).
std::pair<int, int> pair_field(const std::string& path, const json& L, const char* key, std::size_t l, int min,
                               std::optional<std::pair<int, int>> dflt) {
  const std::string where = layer_label(l) + " \"" + key + "\"";
  if (!L.contains(key)) {
    if (dflt) return *dflt;
    fail(path, layer_label(l) + " needs \"" + key + "\" (a whole number or [h, w])");
  }
  const auto one = [&](const json& v) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > 65536)
      fail(path, where + " must be a whole number in [" + std::to_string(min) + ", 65536] or a pair of them, got " +
                     solvers::json_excerpt(L[key]));
    return static_cast<int>(v.get<std::int64_t>());
  };
  const json& v = L[key];
  if (v.is_array()) {
    if (v.size() != 2) fail(path, where + " must be a whole number or [h, w], got " + solvers::json_excerpt(v));
    return {one(v[0]), one(v[1])};
  }
  const int x = one(v);
  return {x, x};
}

// The values of a tensor the manifest names, checked against the shape it implies.
const Tensor& shaped_tensor(const SafetensorsFile& st, const std::string& weights_path, const std::string& manifest_path,
                            const json& L, const char* key, std::size_t l, const std::vector<std::int64_t>& shape,
                            const std::string& shape_meaning, const std::string& at) {
  const std::string name = string_field(manifest_path, L, key, l);
  const Tensor& t = tensor(st, weights_path, name);
  if (t.shape != shape)
    fail(weights_path, at + ": tensor " + quote_excerpt(name) + " has shape " + shape_text(t.shape) +
                           ", the manifest says " + shape_text(shape) + " (" + shape_meaning + ")");
  return t;
}

std::vector<float> to_floats(const Tensor& t) { return std::vector<float>(t.values.begin(), t.values.end()); }

bool is_activation_name(const std::string& type) {
  try {
    (void)activations::parse_activation(type, "type");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

Net net_from_manifest(const json& m, const SafetensorsFile& st, const std::string& manifest_path, const std::string& weights_path) {
  Net net;
  const json& layers = m["layers"];
  struct PendingFold {
    std::size_t conv;  // index in net.layers
    BatchNorm2d bn;
    std::string at;
  };
  std::vector<PendingFold> folds;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const json& L = layers[l];
    if (!L.is_object()) fail(manifest_path, layer_label(l) + " is not an object");
    const std::string type = L.contains("type") ? string_field(manifest_path, L, "type", l) : "dense";
    NetLayer n;
    n.source_index = static_cast<int>(l);
    if (L.contains("name")) n.name = string_field(manifest_path, L, "name", l);
    // As Net's messages name a layer: "layer 2 (layers[1], conv2d 'features.0')".
    const std::string at = "layer " + std::to_string(l + 1) + " (layers[" + std::to_string(l) + "], " + type +
                           (n.name.empty() ? "" : " " + quote_excerpt(n.name)) + ")";
    if (L.contains("activation")) n.activation = string_field(manifest_path, L, "activation", l);
    if (type == "dense" || type == "linear") {
      only_keys(manifest_path, L, {"type", "name", "weight", "bias", "in", "out", "activation"}, layer_label(l) + ": ");
      if (type == "dense" && !L.contains("activation")) fail(manifest_path, layer_label(l) + " needs \"activation\" (a string)");
      const int n_in = positive_int(manifest_path, L, "in", l), n_out = positive_int(manifest_path, L, "out", l);
      const Tensor& w = shaped_tensor(st, weights_path, manifest_path, L, "weight", l, {n_out, n_in}, "out, in", at);
      n.kind = LayerKind::Dense;
      n.dense.W.resize(n_out, n_in);
      for (int i = 0; i < n_out; ++i)
        for (int j = 0; j < n_in; ++j) n.dense.W(i, j) = static_cast<float>(w.values[std::size_t(i) * n_in + j]);
      n.dense.b = Eigen::VectorXf::Zero(n_out);
      if (L.contains("bias") && !L["bias"].is_null()) {
        const Tensor& b = shaped_tensor(st, weights_path, manifest_path, L, "bias", l, {n_out}, "out", at);
        for (int i = 0; i < n_out; ++i) n.dense.b(i) = static_cast<float>(b.values[std::size_t(i)]);
      }
      n.dense.activation = "linear";
    } else if (type == "conv2d") {
      only_keys(manifest_path, L,
                {"type", "name", "weight", "bias", "in_channels", "out_channels", "kernel_size", "stride", "padding", "activation"},
                layer_label(l) + ": ");
      Conv2d& cv = n.conv;
      cv.in_channels = positive_int(manifest_path, L, "in_channels", l);
      cv.out_channels = positive_int(manifest_path, L, "out_channels", l);
      std::tie(cv.win.kh, cv.win.kw) = pair_field(manifest_path, L, "kernel_size", l, 1, std::nullopt);
      std::tie(cv.win.stride_h, cv.win.stride_w) = pair_field(manifest_path, L, "stride", l, 1, std::pair{1, 1});
      std::tie(cv.win.pad_h, cv.win.pad_w) = pair_field(manifest_path, L, "padding", l, 0, std::pair{0, 0});
      cv.W = to_floats(shaped_tensor(st, weights_path, manifest_path, L, "weight", l,
                                     {cv.out_channels, cv.in_channels, cv.win.kh, cv.win.kw}, "out_channels, in_channels, kh, kw", at));
      cv.b.assign(std::size_t(cv.out_channels), 0.0f);
      if (L.contains("bias") && !L["bias"].is_null())
        cv.b = to_floats(shaped_tensor(st, weights_path, manifest_path, L, "bias", l, {cv.out_channels}, "out_channels", at));
      n.kind = LayerKind::Conv2d;
    } else if (type == "batchnorm2d") {
      only_keys(manifest_path, L, {"type", "name", "weight", "bias", "running_mean", "running_var", "num_features", "eps"},
                layer_label(l) + ": ");
      if (net.layers.empty() || net.layers.back().kind != LayerKind::Conv2d || net.layers.back().activation != "linear" ||
          (!folds.empty() && folds.back().conv == net.layers.size() - 1))
        fail(manifest_path, at + " must directly follow a conv2d layer without an activation (it is folded into it)");
      const int c = positive_int(manifest_path, L, "num_features", l);
      if (c != net.layers.back().conv.out_channels)
        fail(manifest_path, at + " has num_features " + std::to_string(c) + " but the conv2d before it has " +
                                std::to_string(net.layers.back().conv.out_channels) + " output channels");
      BatchNorm2d bn;
      const std::vector<std::int64_t> shape{c};
      const auto values = [&](const char* key) {
        return shaped_tensor(st, weights_path, manifest_path, L, key, l, shape, "num_features", at).values;
      };
      // affine=False BatchNorm has no weight and bias: gamma 1, beta 0.
      bn.gamma = L.contains("weight") ? values("weight") : std::vector<double>(std::size_t(c), 1.0);
      bn.beta = L.contains("bias") ? values("bias") : std::vector<double>(std::size_t(c), 0.0);
      bn.mean = values("running_mean");
      bn.var = values("running_var");
      if (L.contains("eps")) {
        if (!L["eps"].is_number() || !(L["eps"].get<double>() >= 0)) fail(manifest_path, at + " \"eps\" must be a number >= 0");
        bn.eps = L["eps"].get<double>();
      }
      for (int i = 0; i < c; ++i)
        if (!(bn.var[std::size_t(i)] + bn.eps > 0) || !std::isfinite(bn.gamma[std::size_t(i)] + bn.beta[std::size_t(i)] + bn.mean[std::size_t(i)] + bn.var[std::size_t(i)]))
          fail(weights_path, at + ": channel " + std::to_string(i) + " has running_var + eps <= 0 or a non-finite parameter");
      folds.push_back({net.layers.size() - 1, std::move(bn), at});
      continue;
    } else if (type == "avgpool2d" || type == "maxpool2d") {
      const bool avg = type == "avgpool2d";
      if (avg) only_keys(manifest_path, L, {"type", "name", "kernel_size", "stride", "padding", "count_include_pad", "activation"}, layer_label(l) + ": ");
      else only_keys(manifest_path, L, {"type", "name", "kernel_size", "stride", "padding", "activation"}, layer_label(l) + ": ");
      n.kind = avg ? LayerKind::AvgPool2d : LayerKind::MaxPool2d;
      std::tie(n.pool.kh, n.pool.kw) = pair_field(manifest_path, L, "kernel_size", l, 1, std::nullopt);
      // torch: stride defaults to the kernel size.
      std::tie(n.pool.stride_h, n.pool.stride_w) = pair_field(manifest_path, L, "stride", l, 1, std::pair{n.pool.kh, n.pool.kw});
      std::tie(n.pool.pad_h, n.pool.pad_w) = pair_field(manifest_path, L, "padding", l, 0, std::pair{0, 0});
      if (avg && L.contains("count_include_pad")) {
        if (!L["count_include_pad"].is_boolean()) fail(manifest_path, at + " \"count_include_pad\" must be true or false");
        n.count_include_pad = L["count_include_pad"].get<bool>();
      }
    } else if (type == "flatten") {
      only_keys(manifest_path, L, {"type", "name", "activation"}, layer_label(l) + ": ");
      n.kind = LayerKind::Flatten;
    } else if (type == "activation" || is_activation_name(type)) {
      only_keys(manifest_path, L, {"type", "name", "activation"}, layer_label(l) + ": ");
      if (type != "activation") {
        if (L.contains("activation")) fail(manifest_path, at + " names its activation in \"type\"; drop \"activation\"");
        n.activation = type;
      } else if (!L.contains("activation")) {
        fail(manifest_path, at + " needs \"activation\" (a string)");
      }
      // An activation module applies to the layer before it when that one has none.
      if (!net.layers.empty() && net.layers.back().activation == "linear") {
        net.layers.back().activation = n.activation;
        continue;
      }
      n.kind = LayerKind::Activation;
    } else {
      fail(manifest_path, layer_label(l) + " has type " + quote_excerpt(type) +
                              " (known: dense, linear, conv2d, batchnorm2d, avgpool2d, maxpool2d, flatten, activation, or an "
                              "activation name: " + activations::activation_names_help() + ")");
    }
    net.layers.push_back(std::move(n));
  }
  if (net.layers.empty()) fail(manifest_path, "needs at least one layer that is not a batchnorm2d");
  if (m.contains("input")) {
    const json& in = m["input"];
    const auto dim = [&](const json& v) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 65536)
        fail(manifest_path, "\"input\" must be [C, H, W] or [N] with whole numbers in [1, 65536], got " + solvers::json_excerpt(in));
      return static_cast<int>(v.get<std::int64_t>());
    };
    if (in.is_array() && in.size() == 3) net.input = Shape3{dim(in[0]), dim(in[1]), dim(in[2]), false};
    else if (in.is_array() && in.size() == 1) net.input = Shape3{dim(in[0]), 1, 1, true};
    else fail(manifest_path, "\"input\" must be [C, H, W] or [N], got " + solvers::json_excerpt(in));
  } else if (net.layers.front().kind == LayerKind::Dense) {
    net.input = Shape3{net.layers.front().dense.in_size(), 1, 1, true};
  } else {
    fail(manifest_path, "needs \"input\": [C, H, W] (the shape of one sample) when the first layer is not dense");
  }
  net.infer_shapes(manifest_path);
  for (const PendingFold& f : folds) {
    NetLayer& conv = net.layers[f.conv];
    const double err = fold_batchnorm(conv.conv, f.bn, conv.in);
    if (!(err <= kMaxBatchnormFoldError))
      fail(weights_path, fmt::format("{}: folding it into its conv2d changes the outputs by {:.3g} relative (more than {:g}); "
                                     "its running_var + eps is too small for float weights",
                                     f.at, err, kMaxBatchnormFoldError));
    net.batchnorm_fold_error = std::max(net.batchnorm_fold_error, err);
    ++net.batchnorm_folded;
  }
  if (!folds.empty()) net.infer_shapes(manifest_path);  // the folded weights are finite too
  return net;
}

namespace {
// <stem>.safetensors beside the manifest.
std::string weights_file_of(const fs::path& manifest) { return manifest.stem().string() + ".safetensors"; }
}  // namespace

std::vector<std::string> network_output_files(const std::string& manifest_path) {
  const fs::path mp(manifest_path);
  return {manifest_path, (mp.parent_path() / weights_file_of(mp)).string()};
}

std::vector<std::string> network_input_files(const std::string& manifest_path) {
  std::vector<std::string> files = {manifest_path};
  std::error_code ec;
  if (!fs::is_regular_file(manifest_path, ec)) return files;
  try {
    const json m = solvers::parse_json_strict<json>(solvers::read_input_file(manifest_path, kManifestKind), manifest_path);
    if (m.is_object() && m.contains("weights") && m.at("weights").is_string())
      files.push_back((fs::path(manifest_path).parent_path() / m.at("weights").get<std::string>()).string());
  } catch (const std::exception&) {
  }
  return files;
}

void check_network_output(const std::string& manifest_path, const std::string& option) {
  const fs::path mp(manifest_path);
  if (mp.filename().empty() || mp.filename() == "." || mp.filename() == "..")
    throw InputError(option, fmt::format("'{}' names no file", manifest_path));
  std::error_code ec;
  for (const fs::path& p : {mp, mp.parent_path() / weights_file_of(mp)})
    if (fs::is_directory(p, ec)) throw InputError(option, fmt::format("'{}' is a folder, not a file", p.string()));
}

void save_network(const std::string& manifest_path, const Mlp& net, const json& meta) {
  net.validate(manifest_path);
  const fs::path mp(manifest_path);
  const std::string wfile = weights_file_of(mp);
  SafetensorsFile st;
  json layers = json::array();
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const auto& L = net.layers[l];
    const std::string prefix = "fc" + std::to_string(l + 1);
    Tensor w, b;
    w.shape = {L.out_size(), L.in_size()};
    w.values.resize(std::size_t(L.W.size()));
    for (int i = 0; i < L.out_size(); ++i)
      for (int j = 0; j < L.in_size(); ++j) w.values[std::size_t(i) * L.in_size() + j] = L.W(i, j);
    b.shape = {L.out_size()};
    b.values.assign(L.b.data(), L.b.data() + L.b.size());
    st.tensors[prefix + ".weight"] = std::move(w);
    st.tensors[prefix + ".bias"] = std::move(b);
    layers.push_back({{"type", "dense"}, {"weight", prefix + ".weight"}, {"bias", prefix + ".bias"}, {"in", L.in_size()},
                      {"out", L.out_size()}, {"activation", L.activation}});
  }
  st.metadata["format"] = "pt";  // what safetensors.torch.save_file writes, so torch tools accept the file
  // The manifest names the exact weights it goes with (check_weights_hash).
  json m = {{"format", "ctmc-snn-mlp"}, {"version", 1}, {"weights", wfile}, {"weights_sha256", ""}, {"layers", layers}, {"meta", meta}};
  save_manifest(manifest_path, std::move(m), st);
}

void save_manifest(const std::string& manifest_path, json m, const SafetensorsFile& st) {
  const fs::path mp(manifest_path);
  const std::string wfile = weights_file_of(mp);
  const std::string wpath = (mp.parent_path() / wfile).string();
  std::vector<std::uint8_t> weights = encode_safetensors(wpath, st);
  m["weights"] = wfile;
  m["weights_sha256"] = io::sha256_hex(weights.data(), weights.size());
  const std::string text = m.dump(2) + "\n";
  // Weights and manifest together or not at all: an old manifest must never
  // end up beside new weights (or the reverse). The manifest is renamed last;
  // a kill between the two renames is caught by the hash on reading.
  write_files_atomically({{wpath, std::move(weights)}, {manifest_path, std::vector<std::uint8_t>(text.begin(), text.end())}});
}

}  // namespace ctmc::sim
