// End-to-end checks that the commands write only what the user asked for:
// a folder of the user's at a report's path is refused, not deleted; an
// --output that is a device or a symbolic link is written through / followed,
// never replaced; a network manifest refuses weights it was not written with.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

// The line of the output that starts with "ctmc-snn:" (the error message).
std::string error_line(const std::string& out) {
  const auto at = out.find("ctmc-snn:");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

const std::string kFit = "fit --activation sigmoid --family two-state --starts 1 --basin-rounds 0 --domain -2,2 --points 5";

}  // namespace

TEST_CASE("report --out: a folder of the user's named like the report is refused (exit 2) and kept whole") {
  const auto out = temp_dir() / "report_user_folder";
  const auto mine = out / "convergence";
  fs::create_directories(mine / "drafts");
  std::ofstream(mine / "notes.md") << "my notes";
  std::ofstream(mine / "drafts" / "a.txt") << "draft";
  const auto r = run_cli("report convergence --threads 1 --out \"" + out.string() + "\"");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(error_line(r.output) == "ctmc-snn: --out: '" + mine.string() +
                                    "' is not a report folder written by ctmc-snn (it has no meta.json written by "
                                    "ctmc-snn), so it is not replaced; move it or choose another output folder");
  CHECK(slurp(mine / "notes.md") == "my notes");
  CHECK(slurp(mine / "drafts" / "a.txt") == "draft");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(out)) (void)e, ++entries;
  CHECK(entries == 1);  // no temporary folder left beside it
}

TEST_CASE("fit --output through a symbolic link writes the link's target and keeps the link") {
  const auto dir = temp_dir() / "fit_out_link";
  fs::create_directories(dir / "real");
  std::ofstream(dir / "real" / "m.json") << "old";
  fs::create_symlink("real/m.json", dir / "link.json");
  const auto r = run_cli(kFit + " --output \"" + (dir / "link.json").string() + "\"");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(nlohmann::json::parse(slurp(dir / "real" / "m.json")).contains("transitions"));
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir / "real")) (void)e, ++entries;
  CHECK(entries == 1);  // no temporary left beside the target
}

TEST_CASE("fit --output to a character device writes through it and leaves it a device") {
  // A private null device (major 1, minor 3), never /dev/null itself: run
  // against a build without the fix, this test would replace it. Where no
  // device can be made (not root), the FIFO and device cases of tests/io cover
  // the writer.
  const auto dir = temp_dir() / "fit_out_dev";
  fs::create_directories(dir);
  const fs::path dev = dir / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 || !std::ofstream(dev)) {
    MESSAGE("no character device can be made here; skipped");
    return;
  }
  struct stat st {};
  REQUIRE(::stat(dev.c_str(), &st) == 0);
  REQUIRE(S_ISCHR(st.st_mode));
  const auto r = run_cli(kFit + " --output \"" + dev.string() + "\"");
  INFO(r.output);
  CHECK(r.status == 0);
  REQUIRE(::stat(dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // And a link to it: the link stays, the device stays.
  fs::create_symlink(dev, dir / "link.json");
  CHECK(run_cli(kFit + " --output \"" + (dir / "link.json").string() + "\"").status == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  REQUIRE(::stat(dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("fit --output to a full device exits 2 naming the file and the reason") {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) return;  // no /dev/full here
  const auto dir = temp_dir() / "fit_out_full";
  fs::create_directories(dir);
  fs::create_symlink("/dev/full", dir / "m.json");
  const auto r = run_cli(kFit + " --output \"" + (dir / "m.json").string() + "\"");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(error_line(r.output) == "ctmc-snn: " + (dir / "m.json").string() + ": cannot write (No space left on device)");
  CHECK(fs::is_symlink(dir / "m.json"));
}

TEST_CASE("train: a manifest beside weights it was not written with is refused by evaluate, naming both") {
  // 4 training and 2 test images of 1x2, labels 0 and 1.
  const auto data = temp_dir() / "train_mix_data";
  fs::create_directories(data);
  auto idx = [](int count, bool images) {
    std::string s = images ? std::string("\x00\x00\x08\x03", 4) : std::string("\x00\x00\x08\x01", 4);
    s += std::string("\x00\x00\x00", 3) + char(count);
    if (images) s += std::string("\x00\x00\x00\x01\x00\x00\x00\x02", 8);
    for (int i = 0; i < count; ++i) s += images ? std::string(1, char(i % 2 ? 200 : 10)) + char(i % 2 ? 10 : 200) : std::string(1, char(i % 2));
    return s;
  };
  std::ofstream(data / "train-images-idx3-ubyte", std::ios::binary) << idx(4, true);
  std::ofstream(data / "train-labels-idx1-ubyte", std::ios::binary) << idx(4, false);
  std::ofstream(data / "t10k-images-idx3-ubyte", std::ios::binary) << idx(2, true);
  std::ofstream(data / "t10k-labels-idx1-ubyte", std::ios::binary) << idx(2, false);
  const auto dir = temp_dir() / "train_mix";
  fs::create_directories(dir);
  const std::string d = " --data \"" + data.string() + "\" --hidden 2 --epochs 1 --threads 1";
  const auto a = dir / "a.json", b = dir / "b.json";
  REQUIRE(run_cli("train" + d + " --seed 1 --output \"" + a.string() + "\"").status == 0);
  REQUIRE(run_cli("train" + d + " --seed 2 --output \"" + b.string() + "\"").status == 0);
  CHECK(run_cli("evaluate --net \"" + a.string() + "\" --data \"" + data.string() + "\"").status == 0);
  // What a kill between train's two renames leaves: new weights, old manifest.
  fs::copy_file(dir / "b.safetensors", dir / "a.safetensors", fs::copy_options::overwrite_existing);
  const auto r = run_cli("evaluate --net \"" + a.string() + "\" --data \"" + data.string() + "\"");
  INFO(r.output);
  CHECK(r.status == 2);
  const auto line = error_line(r.output);
  CHECK(line.rfind("ctmc-snn: " + a.string() + ": the weights file " + (dir / "a.safetensors").string(), 0) == 0);
  CHECK(line.find("weights_sha256") != std::string::npos);
}

TEST_CASE("train --output to a device exits 2 before training (its weights would land beside the device)") {
  const auto dir = temp_dir() / "train_out_dev";
  fs::create_directories(dir);
  const fs::path dev = dir / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    MESSAGE("no character device can be made here; skipped");
    return;
  }
  const auto r = run_cli("train --data \"" + (dir / "no_data").string() + "\" --hidden 2 --epochs 1 --output \"" +
                         dev.string() + "\"");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(error_line(r.output) == "ctmc-snn: --output: '" + dev.string() +
                                    "' is not a regular file (train writes the weights beside the manifest as "
                                    "<stem>.safetensors)");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++entries;
  CHECK(entries == 1);
}

TEST_CASE("report: a file that cannot be written (disk full) exits 2 naming it and the reason, nothing left") {
  // Files may not grow past a few KiB (SIGXFSZ ignored: the write fails with
  // EFBIG, as it fails with ENOSPC on a full disk).
  const auto out = temp_dir() / "report_full";
  fs::create_directories(out);
  const auto r = run_cli("report convergence --threads 1 --out \"" + out.string() + "\"", "trap '' XFSZ; ulimit -f 4; ");
  INFO(r.output);
  CHECK(r.status == 2);
  const auto line = error_line(r.output);
  CHECK(line.rfind("ctmc-snn: " + (out / "convergence").string() + "/", 0) == 0);
  const std::string reason = ": cannot write (File too large)";
  CHECK(line.size() > reason.size());
  CHECK(line.substr(line.size() - reason.size()) == reason);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(out)) (void)e, ++entries;
  CHECK(entries == 0);  // no report, no temporary folder
}
