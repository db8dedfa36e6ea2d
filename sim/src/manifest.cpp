// Network manifest + safetensors weights (manifest.hpp).
#include "ctmc/sim/manifest.hpp"

#include <fmt/format.h>

#include <climits>
#include <filesystem>
#include <initializer_list>

#include "ctmc/io/sha256.hpp"
#include "ctmc/sim/atomic_write.hpp"
#include "read_file.hpp"
#include "ctmc/sim/safetensors.hpp"
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
  if (!layer.contains(key) || !layer[key].is_number_unsigned() || layer[key].get<std::uint64_t>() == 0 ||
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
  if (it == f.tensors.end()) fail(weights_path, "no tensor named " + quote_excerpt(name) + " (named in the manifest)");
  return it->second;
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

Mlp load_network(const std::string& manifest_path, json* meta_out) {
  // Bounded (a manifest is a few KB), strict (nesting capped, duplicate keys refused).
  const json m = solvers::parse_json_strict<json>(solvers::read_input_file(manifest_path, kManifestKind), manifest_path);
  if (!m.is_object()) fail(manifest_path, "manifest is not a JSON object");
  only_keys(manifest_path, m, {"format", "version", "weights", "weights_sha256", "layers", "meta"}, "");
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
  const SafetensorsFile st = read_safetensors(weights_path);

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
  if (meta_out) *meta_out = m.contains("meta") ? m["meta"] : json::object();
  return net;
}

namespace {
// <stem>.safetensors beside the manifest.
std::string weights_file_of(const fs::path& manifest) { return manifest.stem().string() + ".safetensors"; }
}  // namespace

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
  const std::string wpath = (mp.parent_path() / wfile).string();
  std::vector<std::uint8_t> weights = encode_safetensors(wpath, st);
  // The manifest names the exact weights it goes with (check_weights_hash).
  const json m = {{"format", "ctmc-snn-mlp"},
                  {"version", 1},
                  {"weights", wfile},
                  {"weights_sha256", io::sha256_hex(weights.data(), weights.size())},
                  {"layers", layers},
                  {"meta", meta}};
  const std::string text = m.dump(2) + "\n";
  // Weights and manifest together or not at all: an old manifest must never
  // end up beside new weights (or the reverse). The manifest is renamed last;
  // a kill between the two renames is caught by the hash on reading.
  write_files_atomically({{wpath, std::move(weights)}, {manifest_path, std::vector<std::uint8_t>(text.begin(), text.end())}});
}

}  // namespace ctmc::sim
