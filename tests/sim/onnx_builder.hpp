// Shared by the ONNX tests (sim, cli): models written with the ONNX protobuf
// API as torch.onnx.export lays them out, and a small VGG-like CNN with its
// reference outputs from conv_reference.hpp.
#pragma once
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "conv_reference.hpp"

namespace ctmc::sim::testing {

struct ModelBuilder {
  onnx::ModelProto m;
  onnx::GraphProto* g = m.mutable_graph();

  ModelBuilder(const std::vector<std::int64_t>& input_dims, int opset = 13, int ir = 7) {
    m.set_ir_version(ir);
    m.set_producer_name("pytorch");
    m.set_producer_version("2.1.0");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g->set_name("main_graph");
    auto* in = g->add_input();
    in->set_name("input");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    for (auto d : input_dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  // A FLOAT initializer, in raw_data (little-endian bytes) or float_data.
  void init(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<double>& v, bool raw) {
    auto* t = g->add_initializer();
    fill(t, name, dims, v, raw);
  }
  static void fill(onnx::TensorProto* t, const std::string& name, const std::vector<std::int64_t>& dims,
                   const std::vector<double>& v, bool raw) {
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    if (raw) {
      std::string bytes(v.size() * 4, '\0');
      for (std::size_t i = 0; i < v.size(); ++i) {
        const float f = static_cast<float>(v[i]);
        std::memcpy(bytes.data() + 4 * i, &f, 4);
      }
      t->set_raw_data(bytes);
    } else {
      for (double x : v) t->add_float_data(static_cast<float>(x));
    }
  }
  void init_i64(const std::string& name, const std::vector<std::int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  // A Constant node holding a float scalar (how torch writes Clip's min and max).
  void constant(const std::string& out, double value) {
    auto* n = node("Constant", {}, out);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    fill(a->mutable_t(), "", {}, {value}, true);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("/" + op + "_" + std::to_string(g->node_size()));
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void integer(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void text(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void real(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  std::string write(const std::filesystem::path& p, const std::string& output) {
    auto* o = g->add_output();
    o->set_name(output);
    std::ofstream f(p, std::ios::binary);
    REQUIRE(m.SerializeToOstream(&f));
    return p.string();
  }
};

// VGG-like: Conv(1->3, 3x3, pad 1) + BN + Relu + MaxPool 2 + Conv(3->2, 3x3,
// stride 2, pad 1, no bias) + Clip(0, 6) + AveragePool(2, stride 1) + Flatten
// + Gemm(transB 1) on 1 x 8 x 8.
struct CnnFixture {
  TestRng rng{21};
  std::vector<double> w1 = as_floats(rng.vec(27, -1, 1)), b1 = as_floats(rng.vec(3, -0.5, 0.5));
  std::vector<double> g = as_floats(rng.vec(3, 0.5, 1.5)), be = as_floats(rng.vec(3, -0.5, 0.5)),
                      mu = as_floats(rng.vec(3, -0.2, 0.2)), var = as_floats(rng.vec(3, 0.1, 2));
  std::vector<double> w2 = as_floats(rng.vec(54, -1, 1));
  std::vector<double> w3 = as_floats(rng.vec(10 * 2, -1, 1)), b3 = as_floats(rng.vec(10, -0.5, 0.5));
  float eps = 1e-3f;

  ModelBuilder build(int opset = 13) const {
    ModelBuilder mb({1, 8, 8}, opset);
    mb.init("features.0.weight", {3, 1, 3, 3}, w1, true);
    mb.init("features.0.bias", {3}, b1, false);
    mb.init("features.1.weight", {3}, g, true);
    mb.init("features.1.bias", {3}, be, false);
    mb.init("features.1.running_mean", {3}, mu, true);
    mb.init("features.1.running_var", {3}, var, false);
    mb.init("features.4.weight", {2, 3, 3, 3}, w2, true);
    mb.init("classifier.weight", {10, 2}, w3, true);
    mb.init("classifier.bias", {10}, b3, true);
    auto* c1 = mb.node("Conv", {"input", "features.0.weight", "features.0.bias"}, "c1");
    ModelBuilder::ints(c1, "kernel_shape", {3, 3});
    ModelBuilder::ints(c1, "pads", {1, 1, 1, 1});
    ModelBuilder::ints(c1, "strides", {1, 1});
    ModelBuilder::ints(c1, "dilations", {1, 1});
    ModelBuilder::integer(c1, "group", 1);
    auto* bn = mb.node("BatchNormalization",
                       {"c1", "features.1.weight", "features.1.bias", "features.1.running_mean", "features.1.running_var"}, "bn1");
    ModelBuilder::real(bn, "epsilon", eps);
    ModelBuilder::real(bn, "momentum", 0.9f);
    mb.node("Relu", {"bn1"}, "r1");
    auto* mp = mb.node("MaxPool", {"r1"}, "p1");
    ModelBuilder::ints(mp, "kernel_shape", {2, 2});
    ModelBuilder::ints(mp, "strides", {2, 2});
    ModelBuilder::ints(mp, "pads", {0, 0, 0, 0});
    ModelBuilder::integer(mp, "ceil_mode", 0);
    auto* c2 = mb.node("Conv", {"p1", "features.4.weight"}, "c2");
    ModelBuilder::ints(c2, "pads", {1, 1, 1, 1});
    ModelBuilder::ints(c2, "strides", {2, 2});
    mb.constant("clip_min", 0.0);
    mb.constant("clip_max", 6.0);
    mb.node("Clip", {"c2", "clip_min", "clip_max"}, "r2");
    auto* ap = mb.node("AveragePool", {"r2"}, "p2");
    ModelBuilder::ints(ap, "kernel_shape", {2, 2});
    ModelBuilder::ints(ap, "strides", {1, 1});
    auto* fl = mb.node("Flatten", {"p2"}, "f");
    ModelBuilder::integer(fl, "axis", 1);
    auto* gm = mb.node("Gemm", {"f", "classifier.weight", "classifier.bias"}, "logits");
    ModelBuilder::real(gm, "alpha", 1.0f);
    ModelBuilder::real(gm, "beta", 1.0f);
    ModelBuilder::integer(gm, "transB", 1);
    return mb;
  }

  std::vector<double> reference(const Image& x) const {
    Image a = ref_relu(ref_batchnorm(ref_conv2d(x, w1, b1, 3, 3, 3, 1, 1, 1, 1), g, be, mu, var, double(eps)));
    a = ref_pool(a, true, 2, 2, 0);                          // 3 x 4 x 4
    a = ref_conv2d(a, w2, {}, 2, 3, 3, 2, 2, 1, 1);          // 2 x 2 x 2
    for (double& v : a.v) v = std::min(std::max(v, 0.0), 6.0);
    a = ref_pool(a, false, 2, 1, 0);                         // 2 x 1 x 1
    return ref_linear(a.v, w3, b3, 10);
  }
};

}  // namespace ctmc::sim::testing
