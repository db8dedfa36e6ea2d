// SHA-256 (FIPS 180-4), for content hashes that tie files together: a network
// manifest records the hash of the weights it was written with, so a
// manifest beside other weights (a write killed between its two renames) is
// detected (sim/nets/manifest.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ctmc::io {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<std::uint8_t, 32> digest();  // finishes; call once

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
};

// Lower-case hex of a digest (64 characters).
std::string hex(const std::array<std::uint8_t, 32>& digest);
// Lower-case hex of the SHA-256 of `size` bytes (64 characters).
std::string sha256_hex(const void* data, std::size_t size);
inline std::string sha256_hex(std::string_view s) { return sha256_hex(s.data(), s.size()); }

}  // namespace ctmc::io
