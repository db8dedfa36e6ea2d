// End to end: every reader ends in exit 2 with one short line for
// /dev/zero, deep or duplicate JSON, type errors and long values; and a
// table:FILE with rows at +-1e308 scores right.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

void expect_exit2(const std::string& args, const std::string& needle) {
  const auto r = run_cli(args);
  INFO("ctmc-snn " << args << "\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  const auto nl = r.output.find('\n');
  CHECK((nl == std::string::npos || nl + 1 == r.output.size()));
  CHECK(r.output.size() < 400);
}

std::string manifest_with(const std::string& name, const std::string& from, const std::string& to) {
  std::ifstream in(fixture("tiny_mlp.json"));
  std::string s{std::istreambuf_iterator<char>(in), {}};
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  s.replace(at, from.size(), to);
  const auto path = write_file(name, s);
  fs::copy_file(fixture("tiny_mlp.safetensors"), temp_dir() / "tiny_mlp.safetensors", fs::copy_options::skip_existing);
  return path;
}

}  // namespace

TEST_CASE("a model, manifest, table or ONNX file that is /dev/zero: exit 2 before reading a byte") {
  if (!fs::exists("/dev/zero")) return;
  const std::string kDevice = "/dev/zero: not a regular file (a character device)";
  expect_exit2("flux /dev/zero --H 1", kDevice);
  expect_exit2("evaluate --net /dev/zero --data /nonexistent", kDevice);
  expect_exit2("fit --activation table:/dev/zero --domain 0,1 --family two-state", kDevice);
  // import onnx read 2 GiB of zeros before refusing them.
  expect_exit2("import onnx /dev/zero --output \"" + (temp_dir() / "zero_onnx.json").string() + "\"", kDevice);
  CHECK_FALSE(fs::exists(temp_dir() / "zero_onnx.json"));
}

TEST_CASE("a named pipe as a model, a manifest, an ONNX file or a CIFAR-10 test batch: exit 2 at once, no waiting for a writer") {
  const fs::path dir = temp_dir() / "reader_fifo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string fifo = (dir / "model.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string kPipe = fifo + ": not a regular file (a named pipe)";
  // Each of these waited in open() for a writer (timeout: status 124).
  const auto exit2_at_once = [&](const std::string& args, const std::string& needle) {
    const auto r = run_cli(args, "timeout 60 ");
    INFO("ctmc-snn " << args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(needle) != std::string::npos);
    CHECK(r.output.find('\n') == r.output.size() - 1);
  };
  exit2_at_once("flux \"" + fifo + "\" --H 1", kPipe);
  exit2_at_once("evaluate --net \"" + fifo + "\" --data /nonexistent", kPipe);
  exit2_at_once("import onnx \"" + fifo + "\" --output \"" + (dir / "out.json").string() + "\"", kPipe);
  CHECK_FALSE(fs::exists(dir / "out.json"));
  // A CIFAR-10 folder whose test batch is a pipe; its training batches have
  // their exact size (sparse files), so only the pipe is wrong.
  const fs::path cifar = dir / "cifar";
  fs::create_directories(cifar);
  for (int b = 1; b <= 5; ++b) {
    const fs::path f = cifar / ("data_batch_" + std::to_string(b) + ".bin");
    std::ofstream(f).close();
    fs::resize_file(f, 30730000);
  }
  const std::string test = (cifar / "test_batch.bin").string();
  REQUIRE(::mkfifo(test.c_str(), 0600) == 0);
  exit2_at_once("data info \"" + cifar.string() + "\"", test + ": not a regular file (a named pipe)");
  fs::remove_all(dir);
}

TEST_CASE("manifests: deep nesting, duplicate keys and type errors are exit 2 naming the key") {
  // 100,000 nested arrays as "version": SIGSEGV (exit 139) in evaluate.
  const auto deep = manifest_with("reader_deep.json", "\"version\": 1", "\"version\": " + std::string(100000, '[') + std::string(100000, ']'));
  expect_exit2("evaluate --net \"" + deep + "\" --data /nonexistent", "nested deeper than 512 levels");
  // A 290 KB "version" must not be printed whole.
  std::string ones = "[1";
  for (int i = 0; i < 145000; ++i) ones += ",1";
  const auto wide = manifest_with("reader_wide.json", "\"version\": 1", "\"version\": " + ones + "]");
  expect_exit2("evaluate --net \"" + wide + "\" --data /nonexistent", "\"version\" an array of 145001 elements is not supported");
  // "type": 1 is bad input (exit 2), not an internal error (exit 3).
  const auto type1 = manifest_with("reader_type1.json", "{\"type\": \"dense\", \"weight\": \"fc1.weight\"",
                                   "{\"type\": 1, \"weight\": \"fc1.weight\"");
  expect_exit2("evaluate --net \"" + type1 + "\" --data /nonexistent", "layers[0].type: expected a string, got a non-negative integer");
  const auto dup = manifest_with("reader_dup.json", "\"activation\": \"relu\"}", "\"activation\": \"relu\", \"activation\": \"linear\"}");
  expect_exit2("evaluate --net \"" + dup + "\" --data /nonexistent", "duplicate key 'activation'");
}

TEST_CASE("table: a bad row is quoted short; rows at -1e308 and 1e308 score right") {
  const auto bad = write_file("reader_bad_row.csv", "x,phi\n0,0\n1," + std::string(200000, 'x') + "\n");
  expect_exit2("fit --activation table:" + bad + " --domain 0,1 --family two-state", "row 3: expected two finite numbers");
  // phi = (x + 1e308) / 2e308: 1/2 to 17 digits on [-1, 1], the flux of
  // A <-> B at rate 1 each way with the spike B -> A. It scored MSE 0.25
  // (the table read as 0 everywhere).
  const auto table = write_file("reader_wide.csv", "x,phi\n-1e308,0\n1e308,1\n");
  const auto half = write_file("reader_half.json", R"({"states": ["A", "B"], "transitions": [
    {"from": "A", "to": "B", "offset": 1}, {"from": "B", "to": "A", "offset": 1, "spike": true}]})");
  const auto r = run_cli("fit --activation table:" + table + " --domain -1,1 --points 5 --score \"" + half + "\" --json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j.at("mse").get<double>() < 1e-30);
}
