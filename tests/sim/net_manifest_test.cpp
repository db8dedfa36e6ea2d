// Layer-graph manifests (manifest.hpp, load_net): a PyTorch-style state_dict
// with BatchNorm unfolded and its I64 num_batches_tracked, written here byte
// by byte as safetensors.torch.save_file lays it out, evaluated against the
// direct reference of conv_reference.hpp; the errors that name a layer.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "conv_reference.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/core/errors.hpp"
#include "input_error_check.hpp"

namespace fs = std::filesystem;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;
using ctmc::InputError;
using nlohmann::json;

namespace {

constexpr double kFloatSumTolerance = 1e-5;  // float32 sums of a few hundred terms of size <= 1

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ctmc_netm_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// A safetensors file written without the library's writer: F32 tensors and
// I64 scalars, in the order given, header padded to 8 bytes.
struct RawTensor {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::vector<double> values;
};
void write_raw_safetensors(const fs::path& p, const std::vector<RawTensor>& ts) {
  json h = json::object();
  std::string data;
  for (const auto& t : ts) {
    const std::size_t b = data.size();
    for (double v : t.values) {
      if (t.dtype == "F32") {
        const float f = static_cast<float>(v);
        data.append(reinterpret_cast<const char*>(&f), 4);
      } else {
        const std::int64_t i = static_cast<std::int64_t>(v);
        data.append(reinterpret_cast<const char*>(&i), 8);
      }
    }
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {b, data.size()}}};
  }
  h["__metadata__"] = {{"format", "pt"}};
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream f(p, std::ios::binary);
  const std::uint64_t n = text.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << text << data;
}

void write_json(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(2); }

// The net: conv(1->3, 3x3, stride 1, pad 1) + BatchNorm2d(3) + ReLU6 + maxpool 2
// + conv(3->2, 3x3, stride 2, pad 1, no bias) + BN + ReLU + avgpool 2 (stride 1)
// + flatten + linear(2 -> 4) on 1 x 8 x 8 inputs.
struct Fixture {
  TestRng rng{5};
  std::vector<double> w1 = as_floats(rng.vec(3 * 9, -1, 1)), b1 = as_floats(rng.vec(3, -0.5, 0.5));
  std::vector<double> g1 = as_floats(rng.vec(3, 0.5, 1.5)), be1 = as_floats(rng.vec(3, -0.5, 0.5)),
                      m1 = as_floats(rng.vec(3, -0.2, 0.2)), v1 = as_floats(rng.vec(3, 0.1, 2));
  std::vector<double> w2 = as_floats(rng.vec(2 * 3 * 9, -1, 1));
  std::vector<double> g2 = as_floats(rng.vec(2, 0.5, 1.5)), be2 = as_floats(rng.vec(2, -0.5, 0.5)),
                      m2 = as_floats(rng.vec(2, -0.2, 0.2)), v2 = as_floats(rng.vec(2, 0.1, 2));
  std::vector<double> w3 = as_floats(rng.vec(4 * 2, -1, 1)), b3 = as_floats(rng.vec(4, -0.5, 0.5));

  std::vector<RawTensor> state_dict() const {
    return {{"features.0.weight", "F32", {3, 1, 3, 3}, w1},   {"features.0.bias", "F32", {3}, b1},
            {"features.1.weight", "F32", {3}, g1},            {"features.1.bias", "F32", {3}, be1},
            {"features.1.running_mean", "F32", {3}, m1},      {"features.1.running_var", "F32", {3}, v1},
            {"features.1.num_batches_tracked", "I64", {}, {1234}},
            {"features.4.weight", "F32", {2, 3, 3, 3}, w2},   {"features.5.weight", "F32", {2}, g2},
            {"features.5.bias", "F32", {2}, be2},             {"features.5.running_mean", "F32", {2}, m2},
            {"features.5.running_var", "F32", {2}, v2},       {"features.5.num_batches_tracked", "I64", {}, {1234}},
            {"classifier.weight", "F32", {4, 2}, w3},         {"classifier.bias", "F32", {4}, b3}};
  }
  static json bn(const std::string& p, int c) {
    return {{"type", "batchnorm2d"},
            {"weight", p + ".weight"},
            {"bias", p + ".bias"},
            {"running_mean", p + ".running_mean"},
            {"running_var", p + ".running_var"},
            {"num_features", c},
            {"eps", 1e-5}};
  }
  json manifest() const {
    return {{"format", "ctmc-snn-mlp"},
            {"version", 1},
            {"weights", "net.safetensors"},
            {"input", {1, 8, 8}},
            {"layers",
             {{{"type", "conv2d"}, {"name", "features.0"}, {"weight", "features.0.weight"}, {"bias", "features.0.bias"},
               {"in_channels", 1}, {"out_channels", 3}, {"kernel_size", 3}, {"padding", 1}},
              bn("features.1", 3),
              {{"type", "cliprelu_6"}},
              {{"type", "maxpool2d"}, {"kernel_size", 2}},
              {{"type", "conv2d"}, {"name", "features.4"}, {"weight", "features.4.weight"}, {"in_channels", 3},
               {"out_channels", 2}, {"kernel_size", {3, 3}}, {"stride", 2}, {"padding", {1, 1}}},
              bn("features.5", 2),
              {{"type", "activation"}, {"activation", "relu"}},
              {{"type", "avgpool2d"}, {"kernel_size", 2}, {"stride", 1}},
              {{"type", "flatten"}},
              {{"type", "linear"}, {"weight", "classifier.weight"}, {"bias", "classifier.bias"}, {"in", 2}, {"out", 4}}}}};
  }
  std::vector<double> reference(const Image& x) const {
    Image a = ref_batchnorm(ref_conv2d(x, w1, b1, 3, 3, 3, 1, 1, 1, 1), g1, be1, m1, v1, 1e-5);
    for (double& v : a.v) v = std::min(std::max(v, 0.0), 6.0);
    a = ref_pool(a, true, 2, 2, 0);                                               // 3 x 4 x 4
    a = ref_relu(ref_batchnorm(ref_conv2d(a, w2, {}, 2, 3, 3, 2, 2, 1, 1), g2, be2, m2, v2, 1e-5));  // 2 x 2 x 2
    a = ref_pool(a, false, 2, 1, 0);                                              // 2 x 1 x 1
    return ref_linear(a.v, w3, b3, 4);
  }
};

}  // namespace

TEST_CASE("a PyTorch state_dict with BatchNorm (and I64 num_batches_tracked) loads and matches the reference") {
  TempDir t;
  Fixture fx;
  write_raw_safetensors(t.path / "net.safetensors", fx.state_dict());
  write_json(t.path / "net.json", fx.manifest());
  const Net net = load_net((t.path / "net.json").string());
  CHECK(net.batchnorm_folded == 2);
  MESSAGE("BatchNorm fold: max relative error " << net.batchnorm_fold_error);
  CHECK(net.batchnorm_fold_error < kMaxBatchnormFoldError);
  REQUIRE(net.layers.size() == 6);  // BatchNorms folded, activations merged into the layer before them
  CHECK(net.layers[0].activation == "cliprelu_6");
  CHECK(net.layers[2].activation == "relu");
  CHECK(net.output_size() == 4);
  TestRng rng(9);
  for (int n = 0; n < 5; ++n) {
    Image x = make_image(1, 8, 8);
    x.v = as_floats(rng.vec(64, 0, 1));
    Eigen::MatrixXf col(64, 1);
    for (int i = 0; i < 64; ++i) col(i, 0) = static_cast<float>(x.v[std::size_t(i)]);
    const Eigen::MatrixXf y = net.forward(col);
    const auto want = fx.reference(x);
    for (int o = 0; o < 4; ++o) CHECK(std::abs(double(y(o, 0)) - want[std::size_t(o)]) < kFloatSumTolerance);
  }
}

TEST_CASE("conv manifests: errors name the file and the layer") {
  TempDir t;
  Fixture fx;
  const std::string mpath = (t.path / "net.json").string(), wpath = (t.path / "net.safetensors").string();
  write_raw_safetensors(wpath, fx.state_dict());
  const auto with = [&](auto edit) {
    json m = fx.manifest();
    edit(m);
    write_json(mpath, m);
  };
  with([](json& m) { m["layers"][0]["out_channels"] = 4; });
  check_input_error([&] { (void)load_net(mpath); }, wpath,
                    "layer 1 (layers[0], conv2d 'features.0'): tensor 'features.0.weight' has shape [3, 1, 3, 3], the manifest says [4, 1, 3, 3]");
  with([](json& m) { m["layers"][9]["in"] = 3; });
  check_input_error([&] { (void)load_net(mpath); }, wpath, "tensor 'classifier.weight' has shape [4, 2], the manifest says [4, 3]");
  with([](json& m) { m["input"] = {1, 10, 10}; });  // 2 x 2 x 2 before the flatten: 8 values, the linear takes 2
  check_input_error([&] { (void)load_net(mpath); }, mpath, "layer 10 (layers[9], dense) takes 2 inputs but the flatten before it gives 8");
  with([](json& m) { m["input"] = {1, 1, 1}; });
  check_input_error([&] { (void)load_net(mpath); }, mpath, "layer 4 (layers[3], maxpool2d): its 2x2 kernel is larger than its padded input 1x1");
  with([](json& m) { m["layers"].erase(0); });
  check_input_error([&] { (void)load_net(mpath); }, mpath, "layer 1 (layers[0], batchnorm2d) must directly follow a conv2d");
  with([](json& m) { m["layers"][1]["num_features"] = 4; });
  check_input_error([&] { (void)load_net(mpath); }, mpath, "has num_features 4 but the conv2d before it has 3 output channels");
  with([](json& m) { m["layers"][0]["type"] = "conv3d"; });
  check_input_error([&] { (void)load_net(mpath); }, mpath, "has type 'conv3d'");
  with([](json& m) { m.erase("input"); });
  check_input_error([&] { (void)load_net(mpath); }, mpath, "needs \"input\"");
  // The spiking engines read networks with load_network: a conv net is refused there, saying why.
  with([](json&) {});
  check_input_error([&] { (void)load_network(mpath); }, mpath, "this reader takes dense layers only; a network with convolutions or pooling is a layer graph (load_net), which evaluate, simulate network, sweep, convert and check run");
}

TEST_CASE("a dense net in the layer-graph form (linear + relu + flatten) is still an MLP for every engine") {
  TempDir t;
  TestRng rng(2);
  const auto w1 = as_floats(rng.vec(3 * 4, -1, 1)), b1 = as_floats(rng.vec(3, -1, 1)), w2 = as_floats(rng.vec(2 * 3, -1, 1));
  write_raw_safetensors(t.path / "d.safetensors", {{"fc1.weight", "F32", {3, 4}, w1}, {"fc1.bias", "F32", {3}, b1},
                                                   {"fc2.weight", "F32", {2, 3}, w2}, {"step", "I64", {}, {7}}});
  write_json(t.path / "d.json", {{"weights", "d.safetensors"},
                                 {"input", {4}},
                                 {"layers",
                                  {{{"type", "flatten"}},
                                   {{"type", "linear"}, {"weight", "fc1.weight"}, {"bias", "fc1.bias"}, {"in", 4}, {"out", 3}},
                                   {{"type", "relu"}},
                                   {{"type", "linear"}, {"weight", "fc2.weight"}, {"in", 3}, {"out", 2}}}}});
  const Mlp mlp = load_network((t.path / "d.json").string());
  REQUIRE(mlp.layers.size() == 2);
  CHECK(mlp.layers[0].activation == "relu");
  CHECK(mlp.layers[1].activation == "linear");
  CHECK(mlp.layers[1].b.isZero());
  Eigen::MatrixXf x(4, 1);
  x << 0.1f, -0.2f, 0.3f, 0.9f;
  const Net net = load_net((t.path / "d.json").string());
  CHECK((net.forward(x) - mlp.forward(x)).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE("a dense manifest in the original form reads past tensors it does not name, of any dtype") {
  TempDir t;
  TestRng rng(6);
  const auto w = as_floats(rng.vec(2 * 3, -1, 1));
  write_raw_safetensors(t.path / "o.safetensors", {{"fc1.weight", "F32", {2, 3}, w}, {"optimizer.step", "I64", {}, {42}}});
  write_json(t.path / "o.json", {{"weights", "o.safetensors"},
                                 {"layers", {{{"weight", "fc1.weight"}, {"in", 3}, {"out", 2}, {"activation", "linear"}}}}});
  const Mlp mlp = load_network((t.path / "o.json").string());
  REQUIRE(mlp.layers.size() == 1);
  CHECK(mlp.layers[0].W(1, 2) == static_cast<float>(w[5]));
}
