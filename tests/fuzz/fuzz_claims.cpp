// Claims files (commands/check.hpp): validate_claims on the input, the reading
// and validation `ctmc-snn check` does before it computes anything; it may
// only reject with InputError. The input's folder holds what its paths can
// name: a model (m.json), an activation table (t.csv), the test fixtures'
// network (net.json and its weights), four images and labels (x.npy,
// y.npy), a subfolder, a named pipe (fifo: must
// be refused, never opened, or the run hangs into libFuzzer's timeout) and a
// symbolic link out of the folder (up -> ..: must be refused), so that
// mutations reach path resolution, confinement and the network
// configuration checks. Checking the claims (fits, simulations) is not
// fuzzed: it runs the solvers the other targets reach.
//
// The output escapes are checked on the input's bytes as a claim id: the
// terminal text has no control character, a claims.csv field does not start
// with a formula character unless it is a plain number.
#include <sys/stat.h>

#include <filesystem>

#include "ctmc/reports/check.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

namespace {

void prepare_folder() {
  namespace fs = std::filesystem;
  const fs::path& d = fuzz::work_dir();
  fuzz::write_file("m.json",
                   R"({"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", "offset": 1, "slope": 1, "spike": true},)"
                   R"( {"from": "R", "to": "B", "offset": 2}]})");
  fuzz::write_file("t.csv", "x,phi\n0,0\n1,0.5\n2,1\n");
  std::error_code ec;
  fs::create_directories(d / "sub", ec);
  fs::copy_file(CTMC_FIXTURES_DIR "/tiny_mlp.json", d / "net.json", fs::copy_options::overwrite_existing, ec);
  fs::copy_file(CTMC_FIXTURES_DIR "/tiny_mlp.safetensors", d / "tiny_mlp.safetensors",
                fs::copy_options::overwrite_existing, ec);
  sim::Tensor x{"F32", {4, 2}, {0.1, 0.9, 0.8, 0.2, 0.3, 0.7, 0.6, 0.4}}, y{"F32", {4}, {1, 0, 1, 0}};
  const auto npy = [](const std::string& name, const sim::Tensor& t) {
    const auto bytes = sim::encode_npy(t);
    fuzz::write_file(name, bytes.data(), bytes.size());
  };
  npy("x.npy", x);
  npy("y.npy", y);
  ::mkfifo((d / "fifo").c_str(), 0600);
  fs::create_directory_symlink("..", d / "up", ec);
}

void check_escapes(const std::string& id) {
  for (const char c : reports::claims_terminal_text(id))
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fuzz::finding("terminal text holds a control character");
  // A quoted field (RFC 4180) is never a plain number; an unquoted one that
  // starts with a formula character must be one.
  const std::string field = reports::claims_csv_field(id);
  const bool quoted = !field.empty() && field.front() == '"';
  const std::string inner = quoted ? field.substr(1) : field;
  if (!inner.empty() && std::string("=+-@\t\r").find(inner.front()) != std::string::npos &&
      (quoted || !ctmc::parse_double(inner)))
    fuzz::finding("claims.csv field starts with a formula character");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool prepared = (prepare_folder(), true);
  (void)prepared;
  check_escapes(std::string(reinterpret_cast<const char*>(data), size));
  const std::string path = fuzz::write_file("claims.json", data, size);
  fuzz::reject_only("validate_claims", [&] { (void)commands::validate_claims(path); });
  return 0;
}
