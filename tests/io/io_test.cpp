// io/: SHA-256 against the FIPS 180-2 test vectors and sha256sum, and the one
// writer (atomic_write.hpp): symbolic links followed, devices and pipes
// written through (never renamed over), I/O errors as one-line InputErrors
// naming the file and the system's reason, leftovers of killed runs removed.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "ctmc/io/atomic_write.hpp"
#include "failure_hook.hpp"  // io/src (internal): the writer's test seam
#include "ctmc/core/errors.hpp"
#include "ctmc/io/sha256.hpp"

namespace fs = std::filesystem;
using namespace ctmc::io;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("ctmc_io_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> s;
  for (const auto& e : fs::directory_iterator(dir)) s.insert(e.path().filename().string());
  return s;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ctmc::InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// Runs f in a child process whose files may not grow past `bytes` (writes
// beyond fail with EFBIG, SIGXFSZ ignored: a full disk without a full disk),
// and returns the InputError message it got ("" if none, "(crash)" if it died).
std::string in_child_with_file_limit(rlim_t bytes, const std::function<void()>& f) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit r{};
    ::getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &r);
    std::string msg;
    try {
      f();
    } catch (const ctmc::InputError& e) {
      msg = e.what();
    } catch (...) {
      msg = "(other exception)";
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return "(crash)";
  return msg;
}

}  // namespace

TEST_CASE("SHA-256: FIPS 180-2 test vectors") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a', fed in uneven pieces (the block buffer across updates).
  Sha256 s;
  const std::string chunk(997, 'a');
  std::size_t left = 1000000;
  while (left > 0) {
    const std::size_t n = std::min(left, chunk.size());
    s.update(chunk.data(), n);
    left -= n;
  }
  std::string hex;
  for (auto b : s.digest()) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
  CHECK(hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 of a fixture file equals sha256sum's") {
  const std::string path = std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp.safetensors";
  const std::string bytes = slurp(path);
  REQUIRE(!bytes.empty());
  FILE* p = ::popen(("sha256sum '" + path + "' 2>/dev/null").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[128] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  const int rc = ::pclose(p);
  if (!got || rc != 0) return;  // no sha256sum (coreutils) on this machine
  CHECK(sha256_hex(bytes) == std::string(buf).substr(0, 64));
}

TEST_CASE("a regular output is replaced whole and nothing is left beside it") {
  TempDir t;
  const fs::path out = t.path / "m.json";
  std::ofstream(out) << "old";
  std::ofstream(t.path / "m.json.tmp") << "user's file";
  write_file_atomically(out.string(), "new");
  CHECK(slurp(out) == "new");
  CHECK(slurp(t.path / "m.json.tmp") == "user's file");
  CHECK(entries(t.path) == std::set<std::string>{"m.json", "m.json.tmp"});
}

TEST_CASE("a symbolic link is followed: its target is replaced, the link stays") {
  TempDir t;
  fs::create_directories(t.path / "real");
  const fs::path target = t.path / "real" / "m.json", link = t.path / "link.json";
  std::ofstream(target) << "old";
  fs::create_symlink("real/m.json", link);  // relative, taken from the link's folder
  write_file_atomically(link.string(), "new");
  CHECK(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == "real/m.json");
  CHECK(slurp(target) == "new");
  // The temporary went to the target's folder and is gone; nothing beside the link.
  CHECK(entries(t.path / "real") == std::set<std::string>{"m.json"});
  CHECK(entries(t.path) == std::set<std::string>{"link.json", "real"});

  SUBCASE("a chain of links and a dangling link whose folder exists") {
    const fs::path link2 = t.path / "link2.json";
    fs::create_symlink(link, link2);
    write_file_atomically(link2.string(), "newer");
    CHECK(slurp(target) == "newer");
    CHECK(fs::is_symlink(link2));
    const fs::path dangling = t.path / "dangling.json";
    fs::create_symlink("real/new.json", dangling);
    write_file_atomically(dangling.string(), "created");
    CHECK(fs::is_symlink(dangling));
    CHECK(slurp(t.path / "real" / "new.json") == "created");
  }
  SUBCASE("a dangling link into a missing folder is an error naming the link") {
    const fs::path bad = t.path / "bad.json";
    fs::create_symlink("nowhere/x.json", bad);
    const auto msg = message_of([&] { write_file_atomically(bad.string(), "x"); });
    CHECK(msg.rfind(bad.string() + ": cannot create a temporary file (No such file or directory)", 0) == 0);
    CHECK(fs::is_symlink(bad));
    CHECK(!fs::exists(t.path / "nowhere"));
  }
  SUBCASE("a loop of links is an error") {
    const fs::path a = t.path / "a", b = t.path / "b";
    fs::create_symlink(b, a);
    fs::create_symlink(a, b);
    CHECK(message_of([&] { write_file_atomically(a.string(), "x"); }) ==
          a.string() + ": cannot write (Too many levels of symbolic links)");
  }
}

TEST_CASE("a FIFO is written through, not replaced") {
  TempDir t;
  const fs::path fifo = t.path / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  write_file_atomically(fifo.string(), "through the pipe");
  reader.join();
  CHECK(got == "through the pipe");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(entries(t.path) == std::set<std::string>{"pipe.json"});
}

TEST_CASE("a character device is written through and stays a device") {
  TempDir t;
  // A private null device (major 1, minor 3) where mknod is allowed (root);
  // else /dev/null itself, checked to be a character device before and after.
  fs::path dev = t.path / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    const int fd = ::open(dev.c_str(), O_WRONLY);  // a container may allow mknod but not opening it
    if (fd >= 0) ::close(fd);
    else dev = "/dev/null";
  } else {
    dev = "/dev/null";
  }
  struct stat st {};
  REQUIRE(::stat(dev.c_str(), &st) == 0);
  REQUIRE(S_ISCHR(st.st_mode));
  const fs::path link = t.path / "out.json";
  fs::create_symlink(dev, link);
  write_file_atomically(dev.string(), "discarded");
  write_file_atomically(link.string(), "discarded too");
  REQUIRE(::stat(dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(fs::is_symlink(link));
  // No temporary next to the device (e.g. /dev/null.tmp.<pid>.<hex>).
  static const std::regex ours(R"(null\.(tmp|bak)\.[0-9]+\.[0-9a-f]{8})");
  for (const auto& e : fs::directory_iterator(dev.parent_path()))
    CHECK_FALSE(std::regex_match(e.path().filename().string(), ours));
}

TEST_CASE("a full device is an InputError naming the file and the reason") {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) return;  // no /dev/full here
  TempDir t;
  const fs::path link = t.path / "m.json";
  fs::create_symlink("/dev/full", link);
  CHECK(message_of([&] { write_file_atomically(link.string(), "x"); }) ==
        link.string() + ": cannot write (No space left on device)");
  CHECK(fs::is_symlink(link));
}

TEST_CASE("a write that runs out of space: one-line InputError, old output kept, no temporary") {
  TempDir t;
  const fs::path out = t.path / "m.json";
  std::ofstream(out) << "old";
  const std::string big(1 << 16, 'x');
  const auto msg = in_child_with_file_limit(1024, [&] { write_file_atomically(out.string(), big); });
  CHECK(msg == out.string() + ": cannot write (File too large)");
  CHECK(slurp(out) == "old");
  CHECK(entries(t.path) == std::set<std::string>{"m.json"});
  // write_file (files inside a folder the caller made): the same message, naming `shown_as`.
  const auto msg2 = in_child_with_file_limit(
      1024, [&] { write_file((t.path / "inner").string(), big, "report/inner.csv"); });
  CHECK(msg2 == "report/inner.csv: cannot write (File too large)");
}

TEST_CASE("a folder at the output's path is refused") {
  TempDir t;
  fs::create_directories(t.path / "m.json" / "keep");
  CHECK(message_of([&] { write_file_atomically((t.path / "m.json").string(), "x"); }) ==
        (t.path / "m.json").string() + ": is a folder, not a file");
  CHECK(fs::is_directory(t.path / "m.json" / "keep"));
}

TEST_CASE("leftovers of killed runs beside the output are removed by the next write, others kept") {
  TempDir t;
  const fs::path out = t.path / "m.json";
  // Pids above the kernel's pid_max (at most 2^22) are never processes.
  const std::string dead_tmp = "m.json.tmp.2147483000.0123abcd", dead_bak = "m.json.bak.2147483001.deadbeef";
  const std::string live = "m.json.tmp." + std::to_string(::getppid()) + ".0123abcd";
  const std::string user1 = "m.json.tmp.notes", user2 = "m.json.tmp.2147483000.XYZ", other = "n.json.tmp.2147483000.0123abcd";
  for (const auto& n : {dead_tmp, dead_bak, live, user1, user2, other}) std::ofstream(t.path / n) << "x";
  write_file_atomically(out.string(), "new");
  CHECK(entries(t.path) == std::set<std::string>{"m.json", live, user1, user2, other});
}

TEST_CASE("several files: a failed rename rolls back those already installed") {
  TempDir t;
  const fs::path a = t.path / "a", b = t.path / "b";
  std::ofstream(a) << "old a";
  std::ofstream(b) << "old b";
  detail::set_failure_hook([](const std::string& step, const std::string& path) {
    return step == "rename" && path.size() >= 2 && path.substr(path.size() - 2) == "/b";
  });
  const auto msg = message_of([&] {
    write_files_atomically({{a.string(), {'n', 'a'}}, {b.string(), {'n', 'b'}}});
  });
  detail::set_failure_hook(nullptr);
  CHECK(msg.rfind(b.string() + ": cannot rename ", 0) == 0);
  CHECK(slurp(a) == "old a");
  CHECK(slurp(b) == "old b");
  CHECK(entries(t.path) == std::set<std::string>{"a", "b"});
}

TEST_CASE("a magic link of /proc (as /dev/stdout is) to a pipe is written through") {
  // /proc/self/fd/N reads as "pipe:[inode]", which names no file: the writer
  // must open the path itself, not the link's text.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  write_file_atomically("/proc/self/fd/" + std::to_string(fds[1]), "to stdout");
  ::close(fds[1]);
  std::string got;
  char buf[64];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, std::size_t(n));
  ::close(fds[0]);
  CHECK(got == "to stdout");
}
