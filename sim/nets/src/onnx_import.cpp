// ONNX -> network manifest + safetensors (onnx_import.hpp), with the ONNX
// protobuf schema of Debian's libonnx-dev.
#include "ctmc/sim/nets/onnx_import.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/core/quote.hpp"

namespace ctmc::sim {
namespace {

using nlohmann::json;

constexpr solvers::InputKind kOnnxKind{"ONNX model", kMaxOnnxBytes, "protobuf's limit for one message"};
constexpr std::int64_t kMinIrVersion = 7, kMinOpset = 13;
// The newest opset whose operators are listed in kAttributes below and
// tested (tests/fixtures: torch.onnx.export of Debian's python3-torch 1.13
// writes opsets 13 to 17, the newest that Debian's ONNX 1.12 schema defines).
// A later opset may give an operator new attributes (AveragePool's dilations
// in 19): refused rather than read with today's meaning.
constexpr std::int64_t kMaxOpset = 17;

using AttrType = onnx::AttributeProto::AttributeType;
struct AttrSpec {
  const char* name;
  AttrType type;
  std::int64_t since = kMinOpset;  // the first opset that has it
};

// Every attribute of every operator read, for opsets kMinOpset..kMaxOpset
// (the ONNX operator changelog: Conv-11, BatchNormalization-9/14/15,
// AveragePool-11, MaxPool-12, Flatten-13, Reshape-13/14, Gemm-13,
// Dropout-13, Pad-13, Constant-13, Transpose-13, Concat-13, Unsqueeze-13
// (its axes an input); the others have none). Each is handled
// where its operator is read: computed exactly, or refused by name for the
// values that are not. Any other attribute is refused: an attribute
// silently ignored changes what the network computes.
const std::map<std::string, std::vector<AttrSpec>, std::less<>> kAttributes = {
    {"Conv",
     {{"auto_pad", onnx::AttributeProto::STRING}, {"dilations", onnx::AttributeProto::INTS},
      {"group", onnx::AttributeProto::INT}, {"kernel_shape", onnx::AttributeProto::INTS},
      {"pads", onnx::AttributeProto::INTS}, {"strides", onnx::AttributeProto::INTS}}},
    {"BatchNormalization",
     {{"epsilon", onnx::AttributeProto::FLOAT}, {"momentum", onnx::AttributeProto::FLOAT},
      {"training_mode", onnx::AttributeProto::INT, 14}}},
    {"AveragePool",
     {{"auto_pad", onnx::AttributeProto::STRING}, {"ceil_mode", onnx::AttributeProto::INT},
      {"count_include_pad", onnx::AttributeProto::INT}, {"kernel_shape", onnx::AttributeProto::INTS},
      {"pads", onnx::AttributeProto::INTS}, {"strides", onnx::AttributeProto::INTS}}},
    {"MaxPool",
     {{"auto_pad", onnx::AttributeProto::STRING}, {"ceil_mode", onnx::AttributeProto::INT},
      {"dilations", onnx::AttributeProto::INTS}, {"kernel_shape", onnx::AttributeProto::INTS},
      {"pads", onnx::AttributeProto::INTS}, {"storage_order", onnx::AttributeProto::INT},
      {"strides", onnx::AttributeProto::INTS}}},
    {"Flatten", {{"axis", onnx::AttributeProto::INT}}},
    {"Reshape", {{"allowzero", onnx::AttributeProto::INT, 14}}},
    {"Gemm",
     {{"alpha", onnx::AttributeProto::FLOAT}, {"beta", onnx::AttributeProto::FLOAT},
      {"transA", onnx::AttributeProto::INT}, {"transB", onnx::AttributeProto::INT}}},
    {"Dropout", {{"seed", onnx::AttributeProto::INT}}},
    {"Pad", {{"mode", onnx::AttributeProto::STRING}}},
    {"Constant",
     {{"value", onnx::AttributeProto::TENSOR}, {"sparse_value", onnx::AttributeProto::SPARSE_TENSOR},
      {"value_float", onnx::AttributeProto::FLOAT}, {"value_floats", onnx::AttributeProto::FLOATS},
      {"value_int", onnx::AttributeProto::INT}, {"value_ints", onnx::AttributeProto::INTS},
      {"value_string", onnx::AttributeProto::STRING}, {"value_strings", onnx::AttributeProto::STRINGS}}},
    {"Transpose", {{"perm", onnx::AttributeProto::INTS}}},
    {"Concat", {{"axis", onnx::AttributeProto::INT}}},
    {"Unsqueeze", {}},
    {"Relu", {}},
    {"Sigmoid", {}},
    {"Softplus", {}},
    {"Clip", {}},
    {"MatMul", {}},
    {"Add", {}},
    {"Identity", {}}};

const char* attr_type_name(int t) {
  switch (t) {
    case onnx::AttributeProto::FLOAT: return "a float";
    case onnx::AttributeProto::INT: return "an integer";
    case onnx::AttributeProto::STRING: return "a string";
    case onnx::AttributeProto::TENSOR: return "a tensor";
    case onnx::AttributeProto::FLOATS: return "a list of floats";
    case onnx::AttributeProto::INTS: return "a list of integers";
    case onnx::AttributeProto::STRINGS: return "a list of strings";
    case onnx::AttributeProto::SPARSE_TENSOR: return "a sparse tensor";
    default: return "of another type";
  }
}

// An operator name as messages show it: as written where it is a plain
// name, quoted (escaped) otherwise.
std::string op_text(const std::string& op) {
  const bool plain = !op.empty() && op.size() <= kExcerptBytes &&
                     std::all_of(op.begin(), op.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return plain ? op : quote_excerpt(op);
}

const char* kSupported =
    "Conv, BatchNormalization, Relu, Clip, Sigmoid, Softplus, AveragePool, MaxPool, Flatten, Reshape, Gemm, MatMul, Add, "
    "Identity, Dropout, Pad (constant zeros before a Conv or AveragePool), and Transpose, Unsqueeze and Concat of "
    "constants";

class Importer {
 public:
  explicit Importer(std::string path) : path_(std::move(path)) {}

  OnnxImport run() {
    const std::string bytes = solvers::read_input_file(path_, kOnnxKind);
    if (bytes.empty()) fail("empty file (0 bytes), not an ONNX model");
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) fail("not an ONNX model (the protobuf does not parse as onnx.ModelProto)");
    if (!model.has_ir_version() || !model.has_graph())
      fail(fmt::format("not an ONNX model (the protobuf has no {})", model.has_graph() ? "IR version" : "graph"));
    check_versions(model);
    // The manifest (JSON) records these: text, or the model is refused.
    utf8_or_fail(path_, "the file name");
    utf8_or_fail(model.producer_name(), "its producer name");
    utf8_or_fail(model.producer_version(), "its producer version");
    const onnx::GraphProto& g = model.graph();
    for (const auto& t : g.initializer()) {
      if (!consts_.emplace(t.name(), &t).second)
        fail("two initializers are named " + quote_excerpt(t.name()) + " (names must be unique)");
      file_names_.insert(t.name());
    }
    for (const auto& in : g.input()) file_names_.insert(in.name());
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto& out : g.node(i).output())
        if (!out.empty() && !file_names_.insert(out).second)
          fail(node_label(g.node(i), i) + ": its output " + quote_excerpt(out) +
               " names a tensor that the graph already has (each tensor is written once)");
    current_ = graph_input(g);
    for (int i = 0; i < g.node_size(); ++i) node(g.node(i), i);
    if (pending_pad_) fail(pad_label_ + ": a Pad with no Conv or AveragePool after it is not supported");
    if (g.output_size() != 1) fail(fmt::format("the graph has {} outputs; one (the class scores) is supported", g.output_size()));
    if (g.output(0).name() != current_)
      fail("the graph output " + quote_excerpt(g.output(0).name()) + " is not the output of its last layer");
    if (layers_.empty()) fail("the graph has no layers");

    OnnxImport out;
    out.manifest = {{"format", "ctmc-snn-mlp"}, {"version", 1}, {"input", input_shape_}, {"layers", layers_}};
    out.manifest["meta"] = {{"source", path_},
                            {"producer", model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version())},
                            {"ir_version", model.ir_version()},
                            {"opset", opset_}};
    out.opset = opset_;
    out.weights = std::move(weights_);
    out.weights.metadata["format"] = "pt";
    // Loaded as any manifest is, so the import refuses what load_net would.
    out.net = net_from_manifest(out.manifest, out.weights, path_, path_);
    check_reshapes(out.net);
    return out;
  }

 private:
  std::string path_;
  std::map<std::string, const onnx::TensorProto*> consts_;  // initializers and Constant outputs
  std::set<std::string> file_names_;                       // every tensor name of the graph
  std::string current_;                                    // the chain's data tensor
  json layers_ = json::array();
  json input_shape_;
  std::int64_t opset_ = 0;
  SafetensorsFile weights_;
  std::deque<onnx::TensorProto> owned_;  // Constant node values (a deque: pointers to them stay valid)
  struct PendingReshape {
    std::size_t layer;
    std::int64_t size;
    std::string node;
  };
  std::vector<PendingReshape> reshapes_;
  std::optional<std::size_t> matmul_without_bias_;  // a MatMul layer an Add may give its bias
  // A Pad node's zeros [h, w] that the next layer (Conv or AveragePool) takes
  // as its padding, and that node's label.
  std::optional<std::pair<std::int64_t, std::int64_t>> pending_pad_;
  std::string pad_label_;

  // Messages name the file as given, escaped where it is not UTF-8 text.
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError((is_utf8(path_) ? path_ : quote_excerpt(path_)) + ": " + what);
  }

  void utf8_or_fail(const std::string& text, const std::string& what) const {
    if (!is_utf8(text)) fail(what + " " + quote_excerpt(text) + " is not UTF-8 text");
  }

  static std::string node_label(const onnx::NodeProto& n, int index) {
    const std::string name = n.name().empty() ? fmt::format("#{}", index) : quote_excerpt(n.name());
    return fmt::format("node {} ({})", name, op_text(n.op_type()));
  }

  void check_versions(const onnx::ModelProto& m) {
    if (m.ir_version() < kMinIrVersion)
      fail(fmt::format("IR version {} is older than {} (export with torch.onnx.export, opset_version >= {})", m.ir_version(),
                       kMinIrVersion, kMinOpset));
    for (const auto& o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    if (opset_ < kMinOpset)
      fail(fmt::format("opset {} is older than {} (export with opset_version={} or later)", opset_, kMinOpset, kMinOpset));
    if (opset_ > kMaxOpset)
      fail(fmt::format("opset {} is newer than {}, the newest this importer knows the operators of (export with "
                       "opset_version={} or older)", opset_, kMaxOpset, kMaxOpset));
  }

  // Every attribute of the node is one its operator has at this opset, of
  // its type, given once (kAttributes).
  void check_attributes(const onnx::NodeProto& n, int index, const std::vector<AttrSpec>& spec) const {
    for (int k = 0; k < n.attribute_size(); ++k) {
      const auto& a = n.attribute(k);
      const auto it = std::find_if(spec.begin(), spec.end(), [&](const AttrSpec& s) { return a.name() == s.name; });
      if (it == spec.end() || it->since > opset_) {
        std::string known;
        for (const auto& s : spec)
          if (s.since <= opset_) known += (known.empty() ? "" : ", ") + std::string(s.name);
        fail(fmt::format("{}: unknown attribute {} ({} at opset {} has {})", node_label(n, index), quote_excerpt(a.name()),
                         op_text(n.op_type()), opset_, known.empty() ? "none" : known));
      }
      if (a.type() != it->type)
        fail(fmt::format("{}: attribute {} is {}, not {}", node_label(n, index), it->name, attr_type_name(a.type()),
                         attr_type_name(it->type)));
      for (int j = 0; j < k; ++j)
        if (n.attribute(j).name() == a.name()) fail(fmt::format("{}: attribute {} is given twice", node_label(n, index), it->name));
    }
  }

  // The first graph input that is not an initializer (IR < 4 listed them there too).
  std::string graph_input(const onnx::GraphProto& g) {
    for (const auto& in : g.input()) {
      if (consts_.count(in.name())) continue;
      const auto& shape = in.type().tensor_type().shape();
      if (shape.dim_size() != 4 && shape.dim_size() != 2)
        fail("graph input " + quote_excerpt(in.name()) + fmt::format(" has {} dimensions; expected [N, C, H, W] or [N, features]", shape.dim_size()));
      input_shape_ = json::array();
      for (int d = 1; d < shape.dim_size(); ++d) {
        if (!shape.dim(d).has_dim_value() || shape.dim(d).dim_value() <= 0)
          fail("graph input " + quote_excerpt(in.name()) + fmt::format(" has no fixed size in dimension {} (export with a fixed image size)", d));
        input_shape_.push_back(shape.dim(d).dim_value());
      }
      return in.name();
    }
    fail("the graph has no input besides its initializers");
  }

  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::int64_t int_attr(const onnx::NodeProto& n, int index, const char* name, std::int64_t dflt) const {
    const auto* a = attr(n, name);
    if (!a) return dflt;
    if (a->type() != onnx::AttributeProto::INT) fail(node_label(n, index) + ": attribute " + name + " is not an integer");
    return a->i();
  }
  float float_attr(const onnx::NodeProto& n, int index, const char* name, float dflt) const {
    const auto* a = attr(n, name);
    if (!a) return dflt;
    if (a->type() != onnx::AttributeProto::FLOAT) fail(node_label(n, index) + ": attribute " + name + " is not a float");
    return a->f();
  }
  std::optional<std::vector<std::int64_t>> ints_attr(const onnx::NodeProto& n, int index, const char* name) const {
    const auto* a = attr(n, name);
    if (!a) return std::nullopt;
    if (a->type() != onnx::AttributeProto::INTS) fail(node_label(n, index) + ": attribute " + name + " is not a list of integers");
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
  }

  // The values of an initializer or Constant as doubles (FLOAT, DOUBLE, INT64).
  Tensor values(const onnx::NodeProto& n, int index, int input) const {
    const std::string what = node_label(n, index);
    if (input >= n.input_size() || n.input(input).empty()) fail(what + fmt::format(": input {} is missing", input));
    const auto it = consts_.find(n.input(input));
    if (it == consts_.end())
      fail(what + ": input " + quote_excerpt(n.input(input)) + " is not an initializer or Constant (weights must be constant)");
    const onnx::TensorProto& t = *it->second;
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      fail(what + ": tensor " + quote_excerpt(t.name()) + " is stored outside the file (export a model under 2 GB in one file)");
    Tensor out;
    out.shape.assign(t.dims().begin(), t.dims().end());
    // The values a shape asks for are in this file, which holds at most
    // kMaxOnnxBytes: a larger product (or one past 64 bits) is a bad shape,
    // refused before anything is allocated for it.
    std::uint64_t n_values = 1;
    for (const std::int64_t d : out.shape) {
      if (d < 0) fail(what + ": tensor " + quote_excerpt(t.name()) + " has a negative dimension");
      if (d != 0 && n_values > kMaxOnnxBytes / static_cast<std::uint64_t>(d))
        fail(what + ": tensor " + quote_excerpt(t.name()) + " has a shape of more values than an ONNX file can hold");
      n_values *= static_cast<std::uint64_t>(d);
    }
    const auto raw = [&](std::size_t size, auto decode) {
      if (static_cast<std::uint64_t>(t.raw_data().size()) != n_values * size)
        fail(what + fmt::format(": tensor {} holds {} bytes, its shape needs {}", quote_excerpt(t.name()), t.raw_data().size(), n_values * size));
      out.values.resize(n_values);
      for (std::size_t i = 0; i < n_values; ++i) out.values[i] = decode(t.raw_data().data() + i * size);
    };
    const auto typed = [&](const auto& field) {
      if (static_cast<std::uint64_t>(field.size()) != n_values)
        fail(what + fmt::format(": tensor {} holds {} values, its shape needs {}", quote_excerpt(t.name()), field.size(), n_values));
      out.values.assign(field.begin(), field.end());
    };
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        out.dtype = "F32";
        if (t.has_raw_data()) raw(4, [](const char* p) { float v; std::memcpy(&v, p, 4); return double(v); });
        else typed(t.float_data());
        break;
      case onnx::TensorProto::DOUBLE:
        out.dtype = "F64";
        if (t.has_raw_data()) raw(8, [](const char* p) { double v; std::memcpy(&v, p, 8); return v; });
        else typed(t.double_data());
        break;
      case onnx::TensorProto::INT64:
        out.dtype = "I64";
        if (t.has_raw_data()) raw(8, [](const char* p) { std::int64_t v; std::memcpy(&v, p, 8); return double(v); });
        else typed(t.int64_data());
        break;
      case onnx::TensorProto::BOOL:  // a flag (Dropout's training_mode), never a weight
        out.dtype = "BOOL";
        if (t.has_raw_data()) raw(1, [](const char* p) { return double(*p != 0); });
        else typed(t.int32_data());
        break;
      default:
        fail(what + fmt::format(": tensor {} has ONNX data type {} (FLOAT, DOUBLE, INT64 and BOOL are read)", quote_excerpt(t.name()), t.data_type()));
    }
    return out;
  }

  // A float tensor stored for the manifest under the name of the
  // initializer or Constant it is (a tensor that two nodes read is stored
  // twice under its one name, with the same values).
  std::string store(const std::string& name, Tensor t) {
    utf8_or_fail(name, "the tensor name");
    if (t.dtype == "I64" || t.dtype == "BOOL") t.dtype = "F32";
    weights_.tensors[name] = std::move(t);
    return name;
  }
  std::string store_input(const onnx::NodeProto& n, int index, int input) { return store(n.input(input), values(n, index, input)); }
  // A tensor that the import computed (a transposed or scaled weight, a
  // MatMul's bias) under a name that no tensor of the file has and no
  // earlier computed one took: `base`, else base_1, base_2, ... Unique by
  // construction, so two layers never read one tensor by accident.
  std::string store_new(const std::string& base, Tensor t) {
    std::string name = base;
    for (int k = 1; file_names_.count(name) || weights_.tensors.count(name); ++k) name = fmt::format("{}_{}", base, k);
    return store(name, std::move(t));
  }

  std::string layer_name(const onnx::NodeProto& n) const { return n.name().empty() ? n.output(0) : n.name(); }

  void chain(const onnx::NodeProto& n, int index) {
    if (n.input_size() < 1 || n.input(0) != current_)
      fail(node_label(n, index) + ": its input " + (n.input_size() ? quote_excerpt(n.input(0)) : std::string("(none)")) +
           " is not the output of the layer before it (" + quote_excerpt(current_) +
           "); only a chain of layers is supported, no branches or skip connections");
    if (n.output_size() < 1) fail(node_label(n, index) + " has no output");
    current_ = n.output(0);
  }

  // [top, left, bottom, right] pads must be symmetric (PyTorch's padding).
  // auto_pad NOTSET (the default) takes them as given; VALID means no
  // padding and, as the ONNX spec says, cannot stand beside explicit pads;
  // SAME_UPPER and SAME_LOWER are not read.
  std::pair<std::int64_t, std::int64_t> symmetric_pads(const onnx::NodeProto& n, int index) const {
    const auto a = attr(n, "auto_pad");
    if (a && a->s() != "NOTSET" && a->s() != "VALID")
      fail(node_label(n, index) + ": auto_pad " + quote_excerpt(a->s()) + " is not supported (NOTSET or VALID)");
    const auto given = ints_attr(n, index, "pads");
    if (a && a->s() == "VALID" && given)
      fail(node_label(n, index) + ": auto_pad VALID with explicit pads (the ONNX spec forbids using both)");
    const auto pads = given.value_or(std::vector<std::int64_t>{0, 0, 0, 0});
    if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
      fail(node_label(n, index) + ": only symmetric 2-d pads [h, w, h, w] are supported");
    return {pads[0], pads[1]};
  }

  void ones_only(const onnx::NodeProto& n, int index, const char* name) const {
    if (const auto v = ints_attr(n, index, name))
      for (auto x : *v)
        if (x != 1) fail(node_label(n, index) + ": " + name + " other than 1 are not supported");
  }

  void add_layer(json layer, const onnx::NodeProto& n) {
    if (pending_pad_) take_pad(layer);
    utf8_or_fail(layer_name(n), "the layer name");
    layer["name"] = layer_name(n);
    layers_.push_back(std::move(layer));
    matmul_without_bias_.reset();
  }

  void activation(const std::string& act, const onnx::NodeProto& n) { add_layer({{"type", "activation"}, {"activation", act}}, n); }

  // Pad (opset 11 on: pads, and the value, as inputs) with constant zeros on
  // the height and width only, the same on both sides: torch.onnx.export
  // writes one before an AveragePool with count_include_pad and padding (and
  // an all-zero one where there is none). The next layer takes it as its
  // padding; an all-zero Pad is nothing.
  void pad(const onnx::NodeProto& n, int i) {
    const auto mode = attr(n, "mode");
    if (mode && mode->s() != "constant") fail(node_label(n, i) + ": mode " + quote_excerpt(mode->s()) + " is not supported (only constant zeros)");
    if (n.input_size() > 3 && !n.input(3).empty()) fail(node_label(n, i) + ": the axes input is not supported");
    if (n.input_size() > 2 && !n.input(2).empty())
      for (double v : values(n, i, 2).values)
        if (v != 0) fail(node_label(n, i) + ": only zero padding is supported");
    const Tensor p = values(n, i, 1);
    const auto& v = p.values;
    if (v.size() != 8 || v[0] != 0 || v[1] != 0 || v[4] != 0 || v[5] != 0 || v[2] != v[6] || v[3] != v[7] || v[2] < 0 || v[3] < 0)
      fail(node_label(n, i) + ": only pads [0, 0, h, w, 0, 0, h, w] (the same zeros on both sides of the height and width) are supported");
    if (v[2] == 0 && v[3] == 0) return;
    if (pending_pad_) fail(node_label(n, i) + ": two Pad nodes in a row are not supported");
    pending_pad_ = {static_cast<std::int64_t>(v[2]), static_cast<std::int64_t>(v[3])};
    pad_label_ = node_label(n, i);
  }

  // The pending Pad as the padding of `layer` (avgpool2d: counted in the
  // averages, as the explicit zeros are).
  void take_pad(json& layer) {
    const auto [h, w] = *pending_pad_;
    pending_pad_.reset();
    const std::string type = layer["type"];
    if (type != "conv2d" && type != "avgpool2d")
      fail(pad_label_ + ": a Pad before a " + type + " layer is not supported (only before Conv or AveragePool)");
    const auto own = layer["padding"].get<std::vector<std::int64_t>>();
    if (type == "avgpool2d" && (own[0] != 0 || own[1] != 0))
      fail(pad_label_ + ": a Pad before an AveragePool with pads of its own is not supported");
    layer["padding"] = {own[0] + h, own[1] + w};
    if (type == "avgpool2d") layer["count_include_pad"] = true;
  }

  void conv(const onnx::NodeProto& n, int i) {
    if (int_attr(n, i, "group", 1) != 1) fail(node_label(n, i) + ": grouped convolutions (group != 1) are not supported");
    ones_only(n, i, "dilations");
    const auto [ph, pw] = symmetric_pads(n, i);
    const Tensor w = values(n, i, 1);
    if (w.shape.size() != 4) fail(node_label(n, i) + ": its weight is not 4-d [out, in, kh, kw]");
    const auto strides = ints_attr(n, i, "strides").value_or(std::vector<std::int64_t>{1, 1});
    if (strides.size() != 2) fail(node_label(n, i) + ": only 2-d convolutions are supported");
    if (const auto k = ints_attr(n, i, "kernel_shape"); k && (k->size() != 2 || (*k)[0] != w.shape[2] || (*k)[1] != w.shape[3]))
      fail(node_label(n, i) + ": kernel_shape does not match its weight's shape");
    json layer = {{"type", "conv2d"},
                  {"in_channels", w.shape[1]},
                  {"out_channels", w.shape[0]},
                  {"kernel_size", {w.shape[2], w.shape[3]}},
                  {"stride", strides},
                  {"padding", {ph, pw}}};
    layer["weight"] = store(n.input(1), w);
    if (n.input_size() > 2 && !n.input(2).empty()) layer["bias"] = store_input(n, i, 2);
    add_layer(std::move(layer), n);
  }

  // momentum only updates the running statistics in training: nothing at
  // inference.
  void batchnorm(const onnx::NodeProto& n, int i) {
    if (int_attr(n, i, "training_mode", 0) != 0) fail(node_label(n, i) + ": training_mode 1 (export the model in eval mode)");
    for (int k = 1; k < n.output_size(); ++k)
      if (!n.output(k).empty()) fail(node_label(n, i) + ": running-statistics outputs are a training graph (export in eval mode)");
    const Tensor scale = values(n, i, 1);
    if (scale.shape.size() != 1) fail(node_label(n, i) + ": its scale is not 1-d");
    json layer = {{"type", "batchnorm2d"}, {"num_features", scale.shape[0]}, {"eps", float_attr(n, i, "epsilon", 1e-5f)}};
    layer["weight"] = store(n.input(1), scale);
    layer["bias"] = store_input(n, i, 2);
    layer["running_mean"] = store_input(n, i, 3);
    layer["running_var"] = store_input(n, i, 4);
    add_layer(std::move(layer), n);
  }

  void pool(const onnx::NodeProto& n, int i, bool avg) {
    if (int_attr(n, i, "ceil_mode", 0) != 0) fail(node_label(n, i) + ": ceil_mode 1 is not supported (use ceil_mode=False)");
    if (!avg) {
      // storage_order only orders the Indices output, refused here.
      ones_only(n, i, "dilations");
      if (n.output_size() > 1 && !n.output(1).empty()) fail(node_label(n, i) + ": the Indices output is not supported");
    }
    const auto k = ints_attr(n, i, "kernel_shape");
    if (!k || k->size() != 2) fail(node_label(n, i) + ": needs a 2-d kernel_shape");
    const auto strides = ints_attr(n, i, "strides").value_or(std::vector<std::int64_t>{1, 1});  // ONNX's default, not torch's
    if (strides.size() != 2) fail(node_label(n, i) + ": strides must have 2 entries");
    const auto [ph, pw] = symmetric_pads(n, i);
    json layer = {{"type", avg ? "avgpool2d" : "maxpool2d"}, {"kernel_size", *k}, {"stride", strides}, {"padding", {ph, pw}}};
    if (avg) layer["count_include_pad"] = int_attr(n, i, "count_include_pad", 0) != 0;
    add_layer(std::move(layer), n);
  }

  void gemm(const onnx::NodeProto& n, int i) {
    if (int_attr(n, i, "transA", 0) != 0) fail(node_label(n, i) + ": transA 1 is not supported");
    const bool trans_b = int_attr(n, i, "transB", 0) != 0;
    const double alpha = float_attr(n, i, "alpha", 1.0f), beta = float_attr(n, i, "beta", 1.0f);
    Tensor w = values(n, i, 1);
    if (w.shape.size() != 2) fail(node_label(n, i) + ": its B input is not a matrix");
    const bool changed = !trans_b || alpha != 1.0;
    if (!trans_b) w = transposed(w);
    for (double& v : w.values) v *= alpha;
    json layer = {{"type", "linear"}, {"in", w.shape[1]}, {"out", w.shape[0]}};
    layer["weight"] = changed ? store_new(layer_name(n) + ".weight", std::move(w)) : store(n.input(1), std::move(w));
    if (n.input_size() > 2 && !n.input(2).empty()) {
      Tensor c = values(n, i, 2);
      if (c.numel() != layer["out"].get<std::int64_t>())
        fail(node_label(n, i) + fmt::format(": its C input has {} values, not one per output ({}); broadcast C is not supported", c.numel(),
                                            layer["out"].get<std::int64_t>()));
      const bool reshaped = c.shape.size() != 1;
      c.shape = {c.numel()};
      for (double& v : c.values) v *= beta;
      layer["bias"] = beta != 1.0 || reshaped ? store_new(layer_name(n) + ".bias", std::move(c)) : store(n.input(2), std::move(c));
    }
    add_layer(std::move(layer), n);
  }

  static Tensor transposed(const Tensor& w) { return permuted(w, {1, 0}); }

  void matmul(const onnx::NodeProto& n, int i) {
    const Tensor w = values(n, i, 1);  // [in, out]: x W
    if (w.shape.size() != 2) fail(node_label(n, i) + ": its second input is not a matrix");
    json layer = {{"type", "linear"}, {"in", w.shape[0]}, {"out", w.shape[1]}};
    layer["weight"] = store_new(layer_name(n) + ".weight", transposed(w));
    add_layer(std::move(layer), n);
    matmul_without_bias_ = layers_.size() - 1;
  }

  // Add after a MatMul: its bias (x W + b, the other input a constant vector).
  void add(const onnx::NodeProto& n, int i) {
    if (!matmul_without_bias_ || n.input_size() != 2)
      fail(node_label(n, i) + ": Add is supported only as the bias of the MatMul before it");
    const int other = n.input(0) == current_ ? 1 : 0;
    if (other == 0 && n.input(1) != current_) chain(n, i);  // names the branch
    current_ = n.output(0);
    json& layer = layers_[*matmul_without_bias_];
    Tensor b = values(n, i, other);
    if (b.numel() != layer["out"].get<std::int64_t>())
      fail(node_label(n, i) + fmt::format(": its constant has {} values, not one per output of the MatMul ({})", b.numel(),
                                          layer["out"].get<std::int64_t>()));
    b.shape = {b.numel()};
    layer["bias"] = store_new(layer["name"].get<std::string>() + ".bias", std::move(b));
    matmul_without_bias_.reset();
  }

  void clip(const onnx::NodeProto& n, int i) {
    const auto bound = [&](int input) -> std::optional<double> {
      if (input >= n.input_size() || n.input(input).empty()) return std::nullopt;
      const Tensor t = values(n, i, input);
      if (t.values.size() != 1) fail(node_label(n, i) + ": its min and max must be scalars");
      return t.values[0];
    };
    const auto lo = bound(1), hi = bound(2);
    if (!lo || *lo != 0 || !hi || !(*hi > 0))
      fail(node_label(n, i) + ": only a clipped ReLU (min 0, max K > 0) is supported");
    activation(fmt::format("cliprelu_{}", *hi), n);
  }

  void reshape(const onnx::NodeProto& n, int i) {
    const Tensor s = values(n, i, 1);
    // torch's x.view(x.size(0), -1) after constant folding: [N, -1] or [N, K]
    // (N may be written as 0, "copy the input's", or -1).
    if (s.values.size() != 2 || !(s.values[0] >= -1) || !(s.values[1] == -1 || s.values[1] > 0))
      fail(node_label(n, i) + ": only a flatten (shape [N, -1] or [N, K]) is supported");
    // allowzero 1 (opset 14 on) reads a 0 as a dimension of size 0, not as
    // "the input's": an empty batch.
    if (int_attr(n, i, "allowzero", 0) != 0 && s.values[0] == 0)
      fail(node_label(n, i) + ": allowzero 1 with a 0 in the shape makes an empty tensor");
    add_layer({{"type", "flatten"}}, n);
    if (s.values[1] > 0) reshapes_.push_back({layers_.size() - 1, static_cast<std::int64_t>(s.values[1]), node_label(n, i)});
  }

  void check_reshapes(const Net& net) const {
    for (const auto& r : reshapes_)
      for (const auto& L : net.layers)
        if (L.source_index == static_cast<int>(r.layer) && L.out.size() != r.size)
          fail(fmt::format("{}: reshapes {} values {} into {} per sample", r.node, L.in.size(), L.in.text(), r.size));
  }

  void node(const onnx::NodeProto& n, int i) {
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      fail(node_label(n, i) + ": operator domain " + quote_excerpt(n.domain()) + " is not supported");
    const auto spec = kAttributes.find(op);
    if (spec == kAttributes.end())
      fail(node_label(n, i) + ": operator " + quote_excerpt(op) + " is not supported (supported: " + kSupported + ")");
    check_attributes(n, i, spec->second);
    if (op == "Constant") {
      const auto* v = attr(n, "value");
      if (!v || n.attribute_size() != 1 || n.output_size() != 1)
        fail(node_label(n, i) + ": only a Constant with a tensor \"value\" is supported (not value_float, value_ints, ...)");
      owned_.push_back(v->t());
      owned_.back().set_name(n.output(0));
      consts_[n.output(0)] = &owned_.back();
      return;
    }
    if (op == "Identity" && n.input_size() == 1 && n.output_size() == 1 && consts_.count(n.input(0))) {
      // torch.onnx.export passes a parameter through an Identity node where
      // it aliases one (BatchNorm's with training=PRESERVE): a constant under
      // a second name, not a layer of the chain.
      consts_[n.output(0)] = consts_.at(n.input(0));
      return;
    }
    if (op == "Transpose" || op == "Unsqueeze" || op == "Concat") return fold_constant(n, i);
    if (op == "Add") return add(n, i);
    chain(n, i);
    if (op == "Conv") conv(n, i);
    else if (op == "BatchNormalization") batchnorm(n, i);
    else if (op == "Relu") activation("relu", n);
    else if (op == "Sigmoid") activation("sigmoid", n);
    else if (op == "Softplus") activation("softplus", n);
    else if (op == "Clip") clip(n, i);
    else if (op == "AveragePool") pool(n, i, true);
    else if (op == "MaxPool") pool(n, i, false);
    else if (op == "Flatten") {
      if (int_attr(n, i, "axis", 1) != 1) fail(node_label(n, i) + ": only axis 1 (torch.flatten(x, 1)) is supported");
      add_layer({{"type", "flatten"}}, n);
    } else if (op == "Reshape") reshape(n, i);
    else if (op == "Gemm") gemm(n, i);
    else if (op == "Pad") pad(n, i);
    else if (op == "MatMul") matmul(n, i);
    else if (op == "Dropout") dropout(n, i);
    // Identity of the data tensor: nothing to compute.
  }

  // Transpose, Unsqueeze and Concat of constants, which torch.onnx.export
  // writes with constant folding off (a Linear without bias transposes its
  // weight; x.view(x.size(0), -1) concatenates its shape): computed here into
  // a constant of the node's output name. Of the data tensor they are not
  // supported.
  void fold_constant(const onnx::NodeProto& n, int i) {
    const std::string& op = n.op_type();
    if (n.output_size() != 1 || n.input_size() < 1) fail(node_label(n, i) + ": expected one output and an input");
    for (const auto& in : n.input())
      if (!in.empty() && !consts_.count(in))
        fail(node_label(n, i) + ": " + op + " of the data tensor " + quote_excerpt(in) +
             " is not supported (only of initializers and Constants)");
    Tensor out;
    if (op == "Transpose") out = transpose_node(n, i);
    else if (op == "Unsqueeze") out = unsqueezed(n, i);
    else out = concatenated(n, i);
    owned_.push_back(tensor_proto(n.output(0), out));
    consts_[n.output(0)] = &owned_.back();
  }

  // perm (default: the dimensions reversed), as ONNX's Transpose.
  Tensor transpose_node(const onnx::NodeProto& n, int i) const {
    const Tensor x = values(n, i, 0);
    const std::size_t rank = x.shape.size();
    std::vector<std::int64_t> perm(rank);
    for (std::size_t d = 0; d < rank; ++d) perm[d] = static_cast<std::int64_t>(rank - 1 - d);
    if (const auto p = ints_attr(n, i, "perm")) perm = *p;
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) fail(node_label(n, i) + fmt::format(": perm has {} entries for {} dimensions", perm.size(), rank));
    for (const auto d : perm) {
      if (d < 0 || d >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(d)])
        fail(node_label(n, i) + ": perm is not a permutation of the dimensions");
      seen[static_cast<std::size_t>(d)] = true;
    }
    return permuted(x, perm);
  }

  // x with its dimensions in the order perm (y.shape[d] = x.shape[perm[d]]).
  static Tensor permuted(const Tensor& x, const std::vector<std::int64_t>& perm) {
    const std::size_t rank = x.shape.size();
    Tensor y;
    y.dtype = x.dtype;
    for (const auto d : perm) y.shape.push_back(x.shape[static_cast<std::size_t>(d)]);
    y.values.resize(x.values.size());
    // Row-major strides of x; output element k's index, digit by digit.
    std::vector<std::size_t> stride(rank, 1);
    for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * static_cast<std::size_t>(x.shape[d]);
    for (std::size_t k = 0; k < y.values.size(); ++k) {
      std::size_t rest = k, from = 0;
      for (std::size_t d = rank; d-- > 0;) {
        const auto size = static_cast<std::size_t>(y.shape[d]);
        from += (rest % size) * stride[static_cast<std::size_t>(perm[d])];
        rest /= size;
      }
      y.values[k] = x.values[from];
    }
    return y;
  }

  // Unsqueeze-13: size-1 dimensions inserted at the axes (an input; negative
  // ones count from the end of the output).
  Tensor unsqueezed(const onnx::NodeProto& n, int i) const {
    Tensor x = values(n, i, 0);
    const Tensor axes = values(n, i, 1);
    const auto rank = static_cast<std::int64_t>(x.shape.size() + axes.values.size());
    std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
    for (const double a : axes.values) {
      const auto axis = static_cast<std::int64_t>(a) < 0 ? static_cast<std::int64_t>(a) + rank : static_cast<std::int64_t>(a);
      if (axis < 0 || axis >= rank || inserted[static_cast<std::size_t>(axis)])
        fail(node_label(n, i) + ": its axes are out of range or repeated");
      inserted[static_cast<std::size_t>(axis)] = true;
    }
    std::vector<std::int64_t> shape;
    for (std::size_t d = 0, k = 0; d < inserted.size(); ++d) shape.push_back(inserted[d] ? 1 : x.shape[k++]);
    x.shape = std::move(shape);
    return x;
  }

  // Concat along `axis` (negative: from the end) of tensors that agree on
  // every other dimension.
  Tensor concatenated(const onnx::NodeProto& n, int i) const {
    std::vector<Tensor> parts;
    for (int k = 0; k < n.input_size(); ++k) parts.push_back(values(n, i, k));
    const auto rank = static_cast<std::int64_t>(parts[0].shape.size());
    std::int64_t axis = int_attr(n, i, "axis", std::numeric_limits<std::int64_t>::min());
    if (axis == std::numeric_limits<std::int64_t>::min()) fail(node_label(n, i) + ": the axis attribute is required");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) fail(node_label(n, i) + ": axis out of range");
    const auto a = static_cast<std::size_t>(axis);
    Tensor y = parts[0];
    y.shape[a] = 0;
    for (const auto& p : parts) {
      for (std::size_t d = 0; d < p.shape.size(); ++d)
        if (p.shape.size() != y.shape.size() || (d != a && p.shape[d] != y.shape[d]))
          fail(node_label(n, i) + ": its inputs' shapes differ outside the axis");
      y.shape[a] += p.shape[a];
    }
    // Row-major: blocks of (dims from the axis on) per index of the dims before it.
    std::size_t outer = 1;
    for (std::size_t d = 0; d < a; ++d) outer *= static_cast<std::size_t>(y.shape[d]);
    y.values.clear();
    for (std::size_t o = 0; o < outer; ++o)
      for (const auto& p : parts) {
        const std::size_t block = p.values.size() / outer;
        y.values.insert(y.values.end(), p.values.begin() + static_cast<std::ptrdiff_t>(o * block),
                        p.values.begin() + static_cast<std::ptrdiff_t>((o + 1) * block));
      }
    return y;
  }

  // A computed constant as the tensor proto the other nodes read (doubles
  // for floats, exact: every value read is exact in double).
  static onnx::TensorProto tensor_proto(const std::string& name, const Tensor& t) {
    onnx::TensorProto p;
    p.set_name(name);
    for (const auto d : t.shape) p.add_dims(d);
    if (t.dtype == "I64" || t.dtype == "BOOL") {
      p.set_data_type(onnx::TensorProto::INT64);
      for (const double v : t.values) p.add_int64_data(static_cast<std::int64_t>(v));
    } else if (t.dtype == "F64") {
      p.set_data_type(onnx::TensorProto::DOUBLE);
      for (const double v : t.values) p.add_double_data(v);
    } else {
      p.set_data_type(onnx::TensorProto::FLOAT);
      for (const double v : t.values) p.add_float_data(static_cast<float>(v));
    }
    return p;
  }

  // Dropout at inference is the identity: its seed and ratio change nothing
  // there. Its training_mode input (opset 12 on) must be absent or a
  // constant false; training mode drops values at random.
  void dropout(const onnx::NodeProto& n, int i) {
    if (n.output_size() > 1 && !n.output(1).empty()) fail(node_label(n, i) + ": the mask output is a training graph");
    if (n.input_size() > 2 && !n.input(2).empty()) {
      const Tensor mode = values(n, i, 2);
      if (mode.values.size() != 1 || mode.values[0] != 0)
        fail(node_label(n, i) + ": training_mode true drops values at random (export the model in eval mode)");
    }
  }
};

}  // namespace

OnnxImport import_onnx(const std::string& onnx_path) { return Importer(onnx_path).run(); }

}  // namespace ctmc::sim
