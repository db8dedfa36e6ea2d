// ONNX import (sim/nets/onnx_import.hpp): small models written here with the ONNX
// protobuf API as torch.onnx.export lays them out (initializers in raw_data
// and in the typed fields, Constant nodes, Gemm with transB), imported,
// written, loaded back and evaluated against the direct reference of
// conv_reference.hpp; each refusal names the node and its op type.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "conv_reference.hpp"
#include "onnx_builder.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/onnx_import.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "input_error_check.hpp"

namespace fs = std::filesystem;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;

namespace {

constexpr double kFloatSumTolerance = 1e-5;  // float32 sums of a few hundred terms of size <= 1

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ctmc_onnx_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void check_against(const Net& net, const std::function<std::vector<double>(const Image&)>& ref, int c, int h, int w) {
  TestRng rng(77);
  for (int n = 0; n < 6; ++n) {
    Image x = make_image(c, h, w);
    x.v = as_floats(rng.vec(x.v.size(), 0, 1));
    Eigen::MatrixXf col(static_cast<Eigen::Index>(x.v.size()), 1);
    for (std::size_t i = 0; i < x.v.size(); ++i) col(Eigen::Index(i), 0) = static_cast<float>(x.v[i]);
    const Eigen::MatrixXf y = net.forward(col);
    const auto want = ref(x);
    REQUIRE(static_cast<std::size_t>(y.rows()) == want.size());
    for (std::size_t o = 0; o < want.size(); ++o) CHECK(std::abs(double(y(Eigen::Index(o), 0)) - want[o]) < kFloatSumTolerance);
  }
}

}  // namespace

TEST_CASE("ONNX round trip: a small VGG-like CNN with BatchNorm imports, writes, loads and matches the reference") {
  TempDir t;
  const CnnFixture fx;
  const std::string model = fx.build().write(t.path / "cnn.onnx", "logits");
  const OnnxImport imp = import_onnx(model);
  CHECK(imp.manifest["input"] == nlohmann::json({1, 8, 8}));
  CHECK(imp.net.batchnorm_folded == 1);
  CHECK(imp.net.batchnorm_fold_error < kMaxBatchnormFoldError);
  MESSAGE("BatchNorm fold: max relative error " << imp.net.batchnorm_fold_error);
  CHECK(imp.weights.tensors.count("features.0.weight") == 1);  // initializer names kept
  const auto ref = [&](const Image& x) { return fx.reference(x); };
  check_against(imp.net, ref, 1, 8, 8);
  const std::string manifest = (t.path / "cnn.json").string();
  save_manifest(manifest, imp.manifest, imp.weights);
  CHECK(fs::exists(t.path / "cnn.safetensors"));
  const Net loaded = load_net(manifest);
  check_against(loaded, ref, 1, 8, 8);
  // A conv net is refused by the spiking engines' reader, saying where it runs.
  check_input_error([&] { (void)load_network(manifest); }, manifest, "is a layer graph (load_net), which evaluate, simulate network");
}

TEST_CASE("ONNX: Reshape flatten, MatMul + Add, Softplus, Gemm with transB 0 and alpha/beta, AveragePool counting the padding") {
  TempDir t;
  TestRng rng(4);
  const auto b1 = as_floats(rng.vec(3, -1, 1));
  const auto w2 = as_floats(rng.vec(3 * 2, -1, 1)), b2 = as_floats(rng.vec(2, -1, 1));
  ModelBuilder mb({2, 4, 4});
  auto* ap = mb.node("AveragePool", {"input"}, "p");
  ModelBuilder::ints(ap, "kernel_shape", {2, 2});
  ModelBuilder::ints(ap, "strides", {2, 2});
  ModelBuilder::ints(ap, "pads", {1, 1, 1, 1});
  ModelBuilder::integer(ap, "count_include_pad", 1);
  mb.init_i64("shape", {-1, 18});
  mb.node("Reshape", {"p", "shape"}, "f");
  TestRng r2(8);
  const auto w1b = as_floats(r2.vec(18 * 3, -1, 1));  // [in = 18, out = 3] row-major, as MatMul takes it
  mb.init("W", {18, 3}, w1b, false);
  mb.init("b", {3}, b1, true);
  mb.node("MatMul", {"f", "W"}, "mm");
  mb.node("Add", {"mm", "b"}, "h");
  mb.node("Softplus", {"h"}, "a");
  mb.init("W2", {3, 2}, w2, true);  // [in, out] with transB 0
  mb.init("b2", {2}, b2, false);
  auto* gm = mb.node("Gemm", {"a", "W2", "b2"}, "logits");
  ModelBuilder::real(gm, "alpha", 0.5f);
  ModelBuilder::real(gm, "beta", 2.0f);
  const std::string model = mb.write(t.path / "mlp.onnx", "logits");
  const OnnxImport imp = import_onnx(model);
  const auto ref = [&](const Image& x) {
    const Image p = ref_pool(x, false, 2, 2, 1, true);  // 2 x 3 x 3
    std::vector<double> w1t(3 * 18), w2t(2 * 3), b2s(2);
    for (int i = 0; i < 18; ++i)
      for (int o = 0; o < 3; ++o) w1t[std::size_t(o * 18 + i)] = w1b[std::size_t(i * 3 + o)];
    for (int i = 0; i < 3; ++i)
      for (int o = 0; o < 2; ++o) w2t[std::size_t(o * 3 + i)] = 0.5 * w2[std::size_t(i * 2 + o)];
    for (int o = 0; o < 2; ++o) b2s[std::size_t(o)] = 2.0 * b2[std::size_t(o)];
    auto h = ref_linear(p.v, w1t, b1, 3);
    for (double& v : h) v = std::log1p(std::exp(v));
    return ref_linear(h, w2t, b2s, 2);
  };
  check_against(imp.net, ref, 2, 4, 4);
}

TEST_CASE("ONNX: a Pad of zeros before an AveragePool or a Conv is that layer's padding, as torch.onnx.export writes it") {
  // torch.onnx.export writes nn.AvgPool2d(k, padding=p) (count_include_pad)
  // as Pad(zeros) + AveragePool without pads: the same as avgpool2d with
  // padding p counting the padding. An all-zero Pad is nothing.
  TempDir t;
  TestRng rng(6);
  const auto w = as_floats(rng.vec(2 * 2 * 9, -1, 1));
  ModelBuilder mb({2, 4, 4});
  mb.init_i64("pads0", {0, 0, 0, 0, 0, 0, 0, 0});
  mb.node("Pad", {"input", "pads0"}, "q0");
  mb.init_i64("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  mb.node("Pad", {"q0", "pads"}, "q");
  auto* ap = mb.node("AveragePool", {"q"}, "p");
  ModelBuilder::ints(ap, "kernel_shape", {2, 2});
  ModelBuilder::ints(ap, "strides", {2, 2});
  mb.init("cw", {2, 2, 3, 3}, w, true);
  mb.node("Pad", {"p", "pads"}, "cq");
  mb.node("Conv", {"cq", "cw"}, "c");  // 2 x 3 x 3 padded by 1, 3x3 kernel: 2 x 3 x 3
  mb.node("Relu", {"c"}, "r");
  auto* fl = mb.node("Flatten", {"r"}, "f");
  ModelBuilder::integer(fl, "axis", 1);
  const std::string model = mb.write(t.path / "pad.onnx", "f");
  const OnnxImport imp = import_onnx(model);
  REQUIRE(imp.manifest["layers"].size() == 4);
  CHECK(imp.manifest["layers"][0]["type"] == "avgpool2d");
  CHECK(imp.manifest["layers"][0]["padding"] == nlohmann::json({1, 1}));
  CHECK(imp.manifest["layers"][0]["count_include_pad"] == true);
  CHECK(imp.manifest["layers"][1]["type"] == "conv2d");
  CHECK(imp.manifest["layers"][1]["padding"] == nlohmann::json({1, 1}));
  const auto ref = [&](const Image& x) {
    const Image p = ref_pool(x, false, 2, 2, 1, true);  // 2 x 3 x 3
    std::vector<double> wd(w.begin(), w.end());
    Image c = ref_conv2d(p, wd, {}, 2, 3, 3, 1, 1, 1, 1);
    for (double& v : c.v) v = std::max(v, 0.0);
    return c.v;
  };
  check_against(imp.net, ref, 2, 4, 4);

  const std::string path = (t.path / "bad.onnx").string();
  {
    ModelBuilder bad({1, 4, 4});
    bad.init_i64("p", {0, 0, 1, 1, 0, 0, 1, 1});
    bad.node("Pad", {"input", "p"}, "q")->set_name("/pad");
    bad.node("Relu", {"q"}, "r");
    bad.node("Flatten", {"r"}, "f");
    bad.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "node '/pad' (Pad): a Pad before a activation layer is not supported");
  }
  {
    ModelBuilder bad({1, 4, 4});
    bad.init_i64("p", {0, 0, 1, 0, 0, 0, 2, 0});
    bad.node("Pad", {"input", "p"}, "q");
    bad.node("Flatten", {"q"}, "f");
    bad.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "only pads [0, 0, h, w, 0, 0, h, w]");
  }
  {
    ModelBuilder bad({1, 4, 4});
    bad.init_i64("p", {0, 0, 1, 1, 0, 0, 1, 1});
    auto* pd = bad.node("Pad", {"input", "p"}, "q");
    auto* a = pd->add_attribute();
    a->set_name("mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("reflect");
    bad.node("Flatten", {"q"}, "f");
    bad.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "mode 'reflect' is not supported (only constant zeros)");
  }
}

TEST_CASE("ONNX refusals name the node and its op type") {
  TempDir t;
  const CnnFixture fx;
  const std::string path = (t.path / "bad.onnx").string();
  {
    ModelBuilder mb = fx.build();
    auto* n = mb.node("LogSoftmax", {"logits"}, "ls");
    n->set_name("/classifier/LogSoftmax");
    mb.write(path, "ls");
    check_input_error([&] { (void)import_onnx(path); }, path, "node '/classifier/LogSoftmax' (LogSoftmax): operator 'LogSoftmax' is not supported");
  }
  {
    ModelBuilder mb = fx.build(12);
    mb.write(path, "logits");
    check_input_error([&] { (void)import_onnx(path); }, path, "opset 12 is older than 13");
  }
  {
    ModelBuilder mb({4});
    mb.node("Relu", {"input"}, "a");
    mb.node("Add", {"a", "input"}, "s");  // a skip connection
    mb.write(path, "s");
    check_input_error([&] { (void)import_onnx(path); }, path, "(Add): Add is supported only as the bias of the MatMul before it");
  }
  {
    ModelBuilder mb({4});
    mb.node("Relu", {"input"}, "a");
    mb.node("Sigmoid", {"input"}, "b");  // a branch off the input
    mb.write(path, "b");
    check_input_error([&] { (void)import_onnx(path); }, path, "(Sigmoid): its input 'input' is not the output of the layer before it");
  }
  {
    ModelBuilder mb = fx.build();
    // The Gemm's weight for 3 inputs while the flatten gives 2.
    for (auto& init : *mb.g->mutable_initializer())
      if (init.name() == "classifier.weight") {
        init.Clear();
        ModelBuilder::fill(&init, "classifier.weight", {10, 3}, std::vector<double>(30, 0.1), true);
      }
    mb.write(path, "logits");
    check_input_error([&] { (void)import_onnx(path); }, path, "(layers[8], dense '/Gemm_11') takes 3 inputs but the flatten before it gives 2");
  }
  {
    ModelBuilder mb({1, 2, 2});
    mb.init("w", {1, 1, 5, 5}, std::vector<double>(25, 0.1), true);
    mb.node("Conv", {"input", "w"}, "c");
    mb.node("Flatten", {"c"}, "f");
    mb.write(path, "f");
    check_input_error([&] { (void)import_onnx(path); }, path, "(layers[0], conv2d '/Conv_1'): its 5x5 kernel is larger than its padded input 2x2");
  }
  {
    ModelBuilder mb = fx.build();
    mb.m.set_ir_version(6);
    mb.write(path, "logits");
    check_input_error([&] { (void)import_onnx(path); }, path, "IR version 6 is older than 7");
  }
  {
    std::ofstream(path) << "not a protobuf at all \x01\x02";
    check_input_error([&] { (void)import_onnx(path); }, path, "not an ONNX model");
  }
}

// Each attribute of each operator is handled exactly or refused by name
// (issue: an AveragePool with dilations [2, 2] imported and computed
// something else on about half the inputs).
TEST_CASE("ONNX attributes: unknown, misspelled, of another type, given twice, or newer than the opset are refused") {
  TempDir t;
  const std::string path = (t.path / "a.onnx").string();
  const auto pool_model = [](int opset, const std::function<void(onnx::NodeProto*)>& edit) {
    ModelBuilder mb({1, 4, 4}, opset);
    auto* ap = mb.node("AveragePool", {"input"}, "p");
    ModelBuilder::ints(ap, "kernel_shape", {2, 2});
    edit(ap);
    mb.node("Flatten", {"p"}, "f");
    return mb;
  };
  const auto refused = [&](ModelBuilder mb, const std::string& output, const std::string& fragment) {
    mb.write(path, output);
    check_input_error([&] { (void)import_onnx(path); }, path, fragment);
  };
  refused(pool_model(17, [](auto* n) { ModelBuilder::ints(n, "dilations", {2, 2}); }), "f",
          "node '/AveragePool_1' (AveragePool): unknown attribute 'dilations' (AveragePool at opset 17 has auto_pad, "
          "ceil_mode, count_include_pad, kernel_shape, pads, strides)");
  refused(pool_model(13, [](auto* n) { ModelBuilder::ints(n, "stride", {2, 2}); }), "f", "unknown attribute 'stride'");
  refused(pool_model(13, [](auto* n) { ModelBuilder::real(n, "ceil_mode", 0.0f); }), "f",
          "(AveragePool): attribute ceil_mode is a float, not an integer");
  refused(pool_model(13, [](auto* n) { ModelBuilder::ints(n, "strides", {1, 1}); ModelBuilder::ints(n, "strides", {2, 2}); }),
          "f", "attribute strides is given twice");
  // auto_pad VALID means no padding; beside explicit pads the spec forbids it.
  refused(pool_model(13, [](auto* n) { ModelBuilder::text(n, "auto_pad", "VALID"); ModelBuilder::ints(n, "pads", {1, 1, 1, 1}); }),
          "f", "auto_pad VALID with explicit pads");
  refused(pool_model(13, [](auto* n) { ModelBuilder::text(n, "auto_pad", "SAME_UPPER"); }), "f", "auto_pad 'SAME_UPPER' is not supported");
  {
    ModelBuilder mb = pool_model(13, [](auto* n) { ModelBuilder::text(n, "auto_pad", "VALID"); });
    mb.write(path, "f");
    CHECK(import_onnx(path).manifest["layers"][0]["padding"] == nlohmann::json({0, 0}));
  }
  // Opsets past the newest tested are refused, naming it; 17 is read.
  for (int opset : {18, 19, 99}) refused(pool_model(opset, [](auto*) {}), "f", fmt::format("opset {} is newer than 17", opset));
  {
    ModelBuilder mb = pool_model(17, [](auto*) {});
    mb.write(path, "f");
    CHECK(import_onnx(path).opset == 17);
  }
  // training_mode exists from BatchNormalization-14 on; at opset 13 it is unknown.
  {
    const CnnFixture fx;
    ModelBuilder mb = fx.build(13);
    for (auto& n : *mb.g->mutable_node())
      if (n.op_type() == "BatchNormalization") ModelBuilder::integer(&n, "training_mode", 0);
    refused(mb, "logits", "(BatchNormalization): unknown attribute 'training_mode' (BatchNormalization at opset 13 has epsilon, momentum)");
    ModelBuilder mb14 = fx.build(14);
    for (auto& n : *mb14.g->mutable_node())
      if (n.op_type() == "BatchNormalization") ModelBuilder::integer(&n, "training_mode", 1);
    refused(mb14, "logits", "(BatchNormalization): training_mode 1");
  }
  // A Constant read only as a tensor "value".
  {
    ModelBuilder mb({4});
    auto* c = mb.node("Constant", {}, "k");
    auto* a = c->add_attribute();
    a->set_name("value_float");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(6);
    mb.node("Relu", {"input"}, "r");
    refused(mb, "r", "(Constant): only a Constant with a tensor \"value\" is supported");
  }
  // Reshape's allowzero 1 reads the 0 of [0, -1] as an empty dimension.
  {
    ModelBuilder mb({1, 2, 2}, 14);
    mb.init_i64("shape", {0, -1});
    auto* r = mb.node("Reshape", {"input", "shape"}, "f");
    ModelBuilder::integer(r, "allowzero", 1);
    refused(mb, "f", "allowzero 1 with a 0 in the shape");
  }
}

TEST_CASE("ONNX Dropout: identity at inference; training_mode true is refused") {
  TempDir t;
  const std::string path = (t.path / "d.onnx").string();
  for (const bool training : {false, true}) {
    ModelBuilder mb({4});
    auto* mode = mb.g->add_initializer();
    mode->set_name("training_mode");
    mode->set_data_type(onnx::TensorProto::BOOL);
    mode->set_raw_data(std::string(1, training ? '\1' : '\0'));
    mb.init("ratio", {}, {0.5}, true);
    mb.init("W", {4, 2}, std::vector<double>(8, 0.25), true);
    mb.node("Dropout", {"input", "ratio", "training_mode"}, "d");
    mb.node("MatMul", {"d", "W"}, "o");
    mb.write(path, "o");
    if (training) {
      check_input_error([&] { (void)import_onnx(path); }, path, "(Dropout): training_mode true drops values at random");
    } else {
      const auto imp = import_onnx(path);
      REQUIRE(imp.manifest["layers"].size() == 1);
      CHECK(imp.manifest["layers"][0]["type"] == "linear");
    }
  }
}

// Names the import makes (a transposed Gemm weight, a MatMul's weight and
// bias) never take the name of a tensor of the file or of one made before:
// two layers then read two tensors (issue: both read one, a wrong net).
TEST_CASE("ONNX tensor names: unique by construction; duplicate initializers and outputs refused") {
  TempDir t;
  const std::string path = (t.path / "n.onnx").string();
  TestRng rng(9);
  const auto wa = as_floats(rng.vec(4 * 3, -1, 1)), wb = as_floats(rng.vec(3 * 2, -1, 1)), wc = as_floats(rng.vec(2 * 2, -1, 1));
  ModelBuilder mb({4});
  mb.init("A", {4, 3}, wa, true);    // [in, out]: Gemm with transB 0
  mb.init("fc1.weight", {2, 2}, wc, true);  // the name the transposed A would have taken
  mb.init("B", {3, 2}, wb, true);
  auto* g1 = mb.node("Gemm", {"input", "A"}, "h");
  g1->set_name("fc1");
  auto* m1 = mb.node("MatMul", {"h", "B"}, "m");
  m1->set_name("dense");
  mb.node("Relu", {"m"}, "r");
  auto* g2 = mb.node("Gemm", {"r", "fc1.weight"}, "o");  // transB 0 too: also a transposed copy
  g2->set_name("dense");
  mb.write(path, "o");
  const auto imp = import_onnx(path);
  const auto& layers = imp.manifest["layers"];
  REQUIRE(layers.size() == 4);
  std::set<std::string> names;
  for (const auto& L : layers)
    if (L.contains("weight")) CHECK(names.insert(L["weight"].get<std::string>()).second);
  CHECK(names.size() == 3);
  const auto ref = [&](const Image& x) {
    std::vector<double> at(3 * 4), bt(2 * 3), ct(2 * 2);
    for (int i = 0; i < 4; ++i)
      for (int o = 0; o < 3; ++o) at[std::size_t(o * 4 + i)] = wa[std::size_t(i * 3 + o)];
    for (int i = 0; i < 3; ++i)
      for (int o = 0; o < 2; ++o) bt[std::size_t(o * 3 + i)] = wb[std::size_t(i * 2 + o)];
    for (int i = 0; i < 2; ++i)
      for (int o = 0; o < 2; ++o) ct[std::size_t(o * 2 + i)] = wc[std::size_t(i * 2 + o)];
    auto h = ref_linear(ref_linear(x.v, at, {0, 0, 0}, 3), bt, {0, 0}, 2);
    for (double& v : h) v = std::max(v, 0.0);
    return ref_linear(h, ct, {0, 0}, 2);
  };
  check_against(imp.net, ref, 4, 1, 1);
  {
    ModelBuilder dup({4});
    dup.init("W", {4, 4}, std::vector<double>(16, 0.1), true);
    dup.init("W", {4, 4}, std::vector<double>(16, 0.2), true);
    dup.node("MatMul", {"input", "W"}, "o");
    dup.write(path, "o");
    check_input_error([&] { (void)import_onnx(path); }, path, "two initializers are named 'W'");
  }
  {
    ModelBuilder dup({4});
    dup.init("W", {4, 4}, std::vector<double>(16, 0.1), true);
    dup.node("Relu", {"input"}, "W");  // writes the initializer's name
    dup.write(path, "W");
    check_input_error([&] { (void)import_onnx(path); }, path, "its output 'W' names a tensor that the graph already has");
  }
}

TEST_CASE("ONNX inputs that made internal errors or raw bytes: huge dims, names that are not UTF-8, an empty file") {
  TempDir t;
  const std::string path = (t.path / "u.onnx").string();
  {
    ModelBuilder mb({4});
    auto* w = mb.g->add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    // 2^62 floats are 2^64 bytes, which wraps to the 0 bytes given.
    w->add_dims(std::int64_t(1) << 62);
    w->set_raw_data("");
    mb.node("MatMul", {"input", "W"}, "o");
    mb.write(path, "o");
    check_input_error([&] { (void)import_onnx(path); }, path, "tensor 'W' has a shape of more values than an ONNX file can hold");
  }
  {
    ModelBuilder mb({4});
    mb.node("Relu", {"input"}, "r")->set_name("relu\xFF");
    mb.write(path, "r");
    check_input_error([&] { (void)import_onnx(path); }, path, "the layer name 'relu\\xff' is not UTF-8 text");
  }
  {
    ModelBuilder mb({4});
    mb.m.set_producer_name("py\xC3torch");
    mb.node("Relu", {"input"}, "r");
    mb.write(path, "r");
    check_input_error([&] { (void)import_onnx(path); }, path, "its producer name 'py\\xc3torch' is not UTF-8 text");
  }
  {
    ModelBuilder mb({4});
    mb.node("Re\xFFlu", {"input"}, "r")->set_name("n");
    mb.write(path, "r");
    try {
      (void)import_onnx(path);
      FAIL("imported");
    } catch (const ctmc::InputError& e) {
      const std::string m = e.what();
      CHECK(m.find("operator 'Re\\xfflu' is not supported") != std::string::npos);
      CHECK(ctmc::is_utf8(m));
    }
  }
  {
    std::ofstream(path, std::ios::trunc).flush();
    check_input_error([&] { (void)import_onnx(path); }, path, "empty file (0 bytes), not an ONNX model");
  }
}

// With constant folding off, torch.onnx.export transposes a bias-free
// Linear's weight with a Transpose node and builds x.view(x.size(0), -1)'s
// shape with Unsqueeze and Concat: constants computed at import.
TEST_CASE("ONNX: Transpose, Unsqueeze and Concat of constants are folded; of the data tensor refused") {
  TempDir t;
  const std::string path = (t.path / "f.onnx").string();
  TestRng rng(12);
  const auto wt = as_floats(rng.vec(3 * 8, -1, 1));  // [out = 3, in = 8], as nn.Linear keeps it
  ModelBuilder mb({2, 2, 2});
  auto* one = mb.g->add_initializer();  // a scalar INT64 1, the traced batch size
  one->set_name("batch");
  one->set_data_type(onnx::TensorProto::INT64);
  one->add_int64_data(1);
  mb.init_i64("axes", {0});
  mb.init_i64("rest", {-1});
  mb.node("Unsqueeze", {"batch", "axes"}, "batch1");
  auto* cat = mb.node("Concat", {"batch1", "rest"}, "shape");
  ModelBuilder::integer(cat, "axis", 0);
  mb.node("Reshape", {"input", "shape"}, "flat");
  mb.init("fc.weight", {3, 8}, wt, true);
  auto* tr = mb.node("Transpose", {"fc.weight"}, "fc.weight.T");
  ModelBuilder::ints(tr, "perm", {1, 0});
  mb.node("MatMul", {"flat", "fc.weight.T"}, "logits");
  mb.write(path, "logits");
  const auto imp = import_onnx(path);
  REQUIRE(imp.manifest["layers"].size() == 2);
  check_against(imp.net, [&](const Image& x) { return ref_linear(x.v, wt, {0, 0, 0}, 3); }, 2, 2, 2);
  {
    ModelBuilder bad({4});
    bad.node("Transpose", {"input"}, "x");
    bad.write(path, "x");
    check_input_error([&] { (void)import_onnx(path); }, path, "Transpose of the data tensor 'input' is not supported");
  }
}
