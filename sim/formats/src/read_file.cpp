// Bounded reading of the sim data files (read_file.hpp).
#include "ctmc/sim/formats/read_file.hpp"

#include <zlib.h>

#include <algorithm>

#include "ctmc/core/errors.hpp"

namespace ctmc::sim {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

constexpr std::size_t kPiece = std::size_t(1) << 20;

// After every piece: the content so far against the reader's bound and the
// cap of any data file. `compressed` is the gzip file's size (0: not gzip).
void check_bound(const std::string& path, const std::vector<std::uint8_t>& out, const SizeBound& bound,
                 std::uint64_t compressed) {
  if (out.size() > kDataFileKind.max_bytes) solvers::refuse_too_large(path, kDataFileKind);
  if (!bound) return;
  const SizeLimit lim = bound(out);
  if (lim.claimed && compressed > 0 && lim.most / kMaxDeflateRatio > compressed)
    fail(path, "its header describes " + std::to_string(lim.most) + " bytes, more than " + std::to_string(kMaxDeflateRatio) +
                   " times the " + std::to_string(compressed) + " bytes of gzip data (deflate expands at most " +
                   std::to_string(kMaxDeflateRatio) + ":1)");
  if (out.size() > lim.most)
    fail(path, std::string(compressed > 0 ? "gzip data decompresses to" : "holds") + " more than the " + std::to_string(lim.most) +
                   " bytes " + lim.why);
}

// gunzip semantics: a file may hold several gzip members, decompressed one
// after the other (what `gzip -c a b > f` or pigz write); anything after a
// member that is not the start of another is an error, not silently ignored.
std::vector<std::uint8_t> gunzip(const std::string& path, const std::vector<std::uint8_t>& in, const SizeBound& bound) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (zlib manual, inflateInit2).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) fail(path, "cannot initialise zlib");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  std::vector<std::uint8_t> out;
  bool reserved = false;
  std::vector<std::uint8_t> buf(kPiece);
  std::size_t pos = 0;  // input bytes handed to zlib so far
  // zlib counts in uInt: feed a file over 4 GiB in pieces.
  constexpr std::size_t kChunk = std::size_t(1) << 30;
  auto refill = [&] {
    if (zs.avail_in == 0 && pos < in.size()) {
      const std::size_t k = std::min(kChunk, in.size() - pos);
      zs.next_in = const_cast<Bytef*>(in.data() + pos);
      zs.avail_in = static_cast<uInt>(k);
      pos += k;
    }
  };
  refill();
  for (;;) {
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      refill();
      zs.next_out = buf.data();
      zs.avail_out = static_cast<uInt>(buf.size());
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END)
        // Z_BUF_ERROR here means the input ended before the stream did.
        fail(path, rc == Z_BUF_ERROR ? "truncated gzip stream" : std::string("corrupt gzip stream (") + (zs.msg ? zs.msg : "zlib error") + ")");
      out.insert(out.end(), buf.data(), buf.data() + (buf.size() - zs.avail_out));
      check_bound(path, out, bound, in.size());
      // Once the header says how large the content is (and check_bound
      // found that deflate can produce it), room for exactly that: growing
      // by doubling would hold up to twice the content.
      if (!reserved && bound) {
        const SizeLimit lim = bound(out);
        if (lim.claimed) {
          out.reserve(lim.most);
          reserved = true;
        }
      }
      if (rc == Z_OK && zs.avail_in == 0 && pos == in.size() && zs.avail_out != 0) fail(path, "truncated gzip stream");
    }
    const std::size_t rest = zs.avail_in + (in.size() - pos);
    if (rest == 0) break;
    const std::size_t at = in.size() - rest;  // first byte after this member
    const bool member = rest >= 2 && in[at] == 0x1f && in[at + 1] == 0x8b;
    if (!member) fail(path, std::to_string(rest) + " bytes of trailing data after the gzip stream");
    if (inflateReset(&zs) != Z_OK) fail(path, "cannot reset zlib");
  }
  return out;
}

// Appends up to one piece from `in`; false at the end of the file.
bool read_piece(solvers::InputFile& in, std::vector<std::uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + kPiece);
  const std::size_t k = in.read(out.data() + at, kPiece);
  out.resize(at + k);
  return k == kPiece;
}

}  // namespace

std::vector<std::uint8_t> read_maybe_gz(const std::string& path, const SizeBound& bound) {
  solvers::InputFile in(path, kDataFileKind.what);
  if (in.size() > kDataFileKind.max_bytes) solvers::refuse_too_large(path, kDataFileKind);
  std::vector<std::uint8_t> bytes;
  bool more = read_piece(in, bytes);
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
    // The compressed file whole (within the cap), then inflated piece by piece.
    while (more) {
      more = read_piece(in, bytes);
      if (bytes.size() > kDataFileKind.max_bytes) solvers::refuse_too_large(path, kDataFileKind);
    }
    return gunzip(path, bytes, bound);
  }
  for (;;) {
    check_bound(path, bytes, bound, 0);
    if (!more) break;
    more = read_piece(in, bytes);
  }
  return bytes;
}

}  // namespace ctmc::sim
