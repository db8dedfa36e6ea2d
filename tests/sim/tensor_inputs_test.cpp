// Images and labels from .npy files and safetensors tensors (tensor_inputs.hpp):
// float pixels round-trip exactly, the data set equals the in-memory one,
// normalisation, and one-line errors for malformed files.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <random>

#include "../test_temp_files.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc::sim;

namespace {

std::string save(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  return ctmc::testing::write_temp_file(name, std::string(bytes.begin(), bytes.end()));
}

// A .npy file written by hand (not by encode_npy): header text as numpy writes it.
// The file with the header dict text as given (padded as numpy pads).
std::string npy_with_header(const std::string& name, std::string header, const std::string& payload) {
  header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 255);
  file += static_cast<char>(header.size() >> 8);
  return ctmc::testing::write_temp_file(name, file + header + payload);
}

std::string npy_by_hand(const std::string& name, const std::string& descr, const std::string& shape,
                        const std::string& payload, bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 255);
  file += static_cast<char>(header.size() >> 8);
  return ctmc::testing::write_temp_file(name, file + header + payload);
}

Tensor random_images(int n, int features, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Tensor t;
  t.dtype = "F32";
  t.shape = {n, 1, 1, features};
  for (int k = 0; k < n * features; ++k) t.values.push_back(u(g));  // not multiples of 1/255
  return t;
}

}  // namespace

TEST_CASE(".npy: float32 images round-trip bit for bit; every integer and float dtype reads exactly") {
  const Tensor t = random_images(7, 5, 1);
  const Tensor back = read_npy(save("rt.npy", encode_npy(t)));
  CHECK(back.shape == t.shape);
  REQUIRE(back.values.size() == t.values.size());
  for (std::size_t k = 0; k < t.values.size(); ++k) CHECK(back.values[k] == t.values[k]);

  // Little-endian payloads built byte by byte.
  const std::string i8("\xff\xff\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x00\x00\x00", 16);  // -1, 2
  CHECK(read_npy(npy_by_hand("i8.npy", "<i8", "(2,)", i8)).values == std::vector<double>{-1, 2});
  CHECK(read_npy(npy_by_hand("u1.npy", "|u1", "(3,)", std::string("\x00\x07\xff", 3))).values ==
        std::vector<double>{0, 7, 255});
  CHECK(read_npy(npy_by_hand("i2.npy", "<i2", "(1,)", std::string("\x00\x80", 2))).values ==
        std::vector<double>{-32768});
  // float16 0x3c00 = 1, 0xc000 = -2, 0x0001 = 2^-24 (subnormal).
  CHECK(read_npy(npy_by_hand("f2.npy", "<f2", "(3,)", std::string("\x00\x3c\x00\xc0\x01\x00", 6))).values ==
        std::vector<double>{1, -2, std::ldexp(1.0, -24)});
  double d = 0.1;
  std::string f8(8, '\0');
  std::memcpy(f8.data(), &d, 8);
  CHECK(read_npy(npy_by_hand("f8.npy", "<f8", "(1, 1)", f8)).values == std::vector<double>{0.1});
}

TEST_CASE("float inputs: the data set from tensor files equals the in-memory one; safetensors tensors too") {
  const Tensor images = random_images(6, 4, 2);
  Tensor labels;
  labels.dtype = "F64";
  labels.shape = {6};
  labels.values = {0, 1, 2, 1, 0, 2};
  const std::string img = save("img.npy", encode_npy(images)), lab = save("lab.npy", encode_npy(labels));
  DataSource src;
  src.test_images = img;
  src.test_labels = lab;
  const DatasetSplit d = load_data(src);
  REQUIRE(d.test.size() == 6);
  CHECK(d.test.features() == 4);
  CHECK(d.train.size() == 0);
  for (int j = 0; j < 6; ++j) {
    CHECK(d.test.labels[j] == static_cast<int>(labels.values[j]));
    for (int i = 0; i < 4; ++i) CHECK(d.test.images(i, j) == static_cast<float>(images.values[j * 4 + i]));
  }
  SafetensorsFile st;
  st.tensors["x"] = images;
  st.tensors["y"] = labels;
  const std::string stf = ctmc::testing::temp_dir() / "inputs.safetensors";
  write_safetensors(stf, st);
  DataSource src2;
  src2.test_images = stf + ":x";
  src2.test_labels = stf + ":y";
  const DatasetSplit d2 = load_data(src2);
  CHECK(d2.test.images == d.test.images);
  CHECK(d2.test.labels == d.test.labels);

  // Normalisation (x - 0.25) / 0.5, in double then rounded to float.
  src.normalization = "0.25/0.5";
  const DatasetSplit n = load_data(src);
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 4; ++i)
      CHECK(n.test.images(i, j) == static_cast<float>((static_cast<double>(d.test.images(i, j)) - 0.25) / 0.5));
}

TEST_CASE("float inputs: malformed files and options give one-line errors naming them") {
  const auto throws = [](auto f, const char* what) {
    CHECK_THROWS_WITH_AS(f(), doctest::Contains(what), ctmc::InputError);
  };
  const std::string four(16, '\0');
  throws([&] { return read_npy(npy_by_hand("fortran.npy", "<f4", "(2, 2)", four, true)); }, "Fortran order");
  throws([&] { return read_npy(npy_by_hand("big.npy", ">f4", "(4,)", four)); }, "not little-endian");
  throws([&] { return read_npy(npy_by_hand("short.npy", "<f4", "(5,)", four)); }, "needs 20 bytes of data, the file has 16");
  throws([&] { return read_npy(npy_by_hand("str.npy", "<U4", "(1,)", four)); }, "is not a real number type");
  throws([&] { return read_npy(npy_by_hand("shape.npy", "<f4", "(x,)", four)); }, "shape entry 'x' is not a whole number");
  throws([&] { return read_npy(ctmc::testing::write_temp_file("plain.npy", "hello")); }, "not a .npy file");
  Tensor labels;
  labels.shape = {2};
  labels.values = {0, 1.5};
  const Tensor images = random_images(2, 3, 4);
  throws([&] { return dataset_from_tensors(images, labels, "x.npy", "y.npy"); }, "y.npy: label 1 (1.5) is not a class");
  labels.shape = {3};
  labels.values = {0, 1, 1};
  throws([&] { return dataset_from_tensors(images, labels, "x.npy", "y.npy"); }, "labels need the shape (2,)");
  DataSource src;
  src.test_images = "x.npy";
  throws([&] { return load_data(src); }, "test_images: give the test images and labels both or neither");
  throws([&] { return load_data(DataSource{}); }, "data: give a data folder");
  throws([] { return parse_normalization("0.5"); }, "is not MEAN/SD");
  throws([] { return parse_normalization("0.5/0"); }, "'0' is not a positive number");
  throws([] { return parse_normalization("0.1,0.2/0.3"); }, "2 means but 1 standard deviations");
  Dataset three;
  three.channels = 3;
  three.images = Eigen::MatrixXf::Zero(12, 1);
  throws([&] { normalize(three, parse_normalization("0.1,0.2/0.3,0.4")); return 0; }, "2 values per list for images of 3");
}

TEST_CASE(".npy header read as numpy reads it: each key once, no other keys, honest messages") {
  const auto throws = [](const std::string& path, const char* what) {
    CHECK_THROWS_WITH_AS(read_npy(path), doctest::Contains(what), ctmc::InputError);
  };
  const std::string four(16, '\0');
  // numpy takes the last of duplicate keys (a Python dict literal): here '<f8' of shape (2,), while the first
  // would be '<f4' of shape (4,); either reading would be wrong for one of the two tools.
  throws(npy_with_header("dup.npy", "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", four),
         "key 'descr' appears twice");
  throws(npy_with_header("dup2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'shape': (2, 2), }", four),
         "key 'shape' appears twice");
  throws(npy_with_header("extra.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", four),
         "unknown key 'x'");
  throws(npy_with_header("missing.npy", "{'descr': '<f4', 'shape': (4,)}", four), "no 'fortran_order'");
  throws(npy_with_header("tail.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x", four), "text after");
  // 2^62 is a whole number, too large: said so.
  throws(npy_by_hand("huge.npy", "<f4", "(4611686018427387904,)", four), "shape entry '4611686018427387904' is too large");
  // What numpy writes, and the variants a Python literal allows, are read.
  CHECK(read_npy(npy_with_header("dq.npy", "{\"descr\": \"<f4\", \"shape\": (2, 2), \"fortran_order\": False}", four))
            .shape == std::vector<std::int64_t>{2, 2});
  CHECK(read_npy(npy_with_header("py2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4L,), }", four)).shape ==
        std::vector<std::int64_t>{4});
  CHECK(read_npy(npy_with_header("scalar.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                                 std::string(4, '\0')))
            .values.size() == 1);
}
