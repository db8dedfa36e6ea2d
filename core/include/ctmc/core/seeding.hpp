// Seeding: the one place where the seeds of random streams are derived from
// the user's --seed (DESIGN.md sections 7 and 9).
//
// Reproducibility rule: every random result is fixed by the seed and is the
// same for any thread count. Work is split into units (a trial, a sample, a
// layer's initial weights, an epoch's order, a check point) and each unit draws
// only from its own stream, whose seed is a function of (seed, purpose, index)
// computed here, never from a generator shared between threads.
//
// The primitive is splitmix64 (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): a state advanced by the
// golden-ratio increment kGoldenGamma and an output mixer mix64 that is a
// bijection of 64-bit words. From it, three derivations, each fixed by the
// numbers that the reports publish at a given seed:
//
//   stream_seed(seed, index)
//       = mix64(splitmix64(seed) + (index + 1) * kStreamGamma)
//     Weyl-sequence streams: for a fixed seed, distinct indices give distinct
//     stream seeds (kStreamGamma is odd, so index -> index * kStreamGamma is a
//     bijection mod 2^64), and (seed, index) is not symmetric. The purpose is
//     the position: stream_seed(seed, trial, sample) nests a sub-stream.
//     Used by sim/ (SSA trials, network trials x samples) and reports/.
//   numbered_stream_seed(seed, purpose, index)
//       = splitmix64(seed ^ splitmix64(purpose + index))
//     The purpose is a number (a multiple of 0x1000 in use), the index counts
//     within it. Used by sim/ training (initial weights per layer, the order
//     of each epoch).
//   named_stream_seed(seed, purpose, index)
//       = splitmix64(purpose_key(seed, purpose) ^ splitmix64(index))
//     The purpose is a text (e.g. "three-state/random"), folded into the seed
//     byte by byte. Used by proofs_check/ (flux-identity check points).
//
// The multistart fits (analysis/) draw start k from
//   multistart_seed(seed, k) = splitmix64(splitmix64(seed) ^ (k * kStreamGamma + kMultistartOffset)).
// A computation of several phases that draw from one numbered family of
// streams (a fit's search moves) takes the indices through StreamBlocks:
// each phase reserves its block by name and size, in the order the phases
// run, and knows no other phase's count.
//
// Every stream seed here feeds a generator that scrambles it further
// (xoshiro256** filled by splitmix64_next, or std::mt19937_64).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ctmc {

// splitmix64's state increment: 2^64 / golden ratio, rounded to odd.
inline constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;
// The odd multiplier of the stream index in stream_seed and multistart_seed.
inline constexpr std::uint64_t kStreamGamma = 0xd1b54a32d192ed03ULL;
// The constant added to the scaled start index in multistart_seed.
inline constexpr std::uint64_t kMultistartOffset = 0x632be59bd9b4e019ULL;

// splitmix64's output function: a bijective 64-bit mixer (the "finalizer").
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One splitmix64 step: advances `state` and returns the output of the new state.
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += kGoldenGamma;
  return mix64(state);
}

// splitmix64 as a hash: the first output of a generator whose state is x.
constexpr std::uint64_t splitmix64(std::uint64_t x) { return splitmix64_next(x); }

// Weyl-sequence stream `index` of the run seeded `seed`, and sub-stream `sub` of it.
constexpr std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t index) {
  return mix64(splitmix64(seed) + (index + 1) * kStreamGamma);
}
constexpr std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t index, std::uint64_t sub) {
  return stream_seed(stream_seed(seed, index), sub);
}

// Stream `index` of the numbered purpose `purpose` (purposes spaced so that
// purpose + index never reaches the next one).
constexpr std::uint64_t numbered_stream_seed(std::uint64_t seed, std::uint64_t purpose, std::uint64_t index) {
  return splitmix64(seed ^ splitmix64(purpose + index));
}

// The seed folded with a purpose's bytes: one splitmix64 per byte.
constexpr std::uint64_t purpose_key(std::uint64_t seed, std::string_view purpose) {
  std::uint64_t h = splitmix64(seed);
  for (unsigned char ch : purpose) h = splitmix64(h ^ ch);
  return h;
}

// Stream `index` of the named purpose `purpose`.
constexpr std::uint64_t named_stream_seed(std::uint64_t seed, std::string_view purpose, std::uint64_t index) {
  return splitmix64(purpose_key(seed, purpose) ^ splitmix64(index));
}

// Start `index` of a multistart fit.
constexpr std::uint64_t multistart_seed(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(splitmix64(seed) ^ (index * kStreamGamma + kMultistartOffset));
}

// Named blocks of consecutive stream indices, handed out in the order they
// are reserved (the first block starts at index 0). The index a phase draws
// from is then fixed by the order of the reservations and the sizes of the
// blocks before it, which is what keeps the published numbers of a seed,
// while no phase computes another's offset.
class StreamBlocks {
 public:
  struct Block {
    std::uint64_t first = 0, count = 0;
    // Index i of the block; i >= count is a programming error.
    std::uint64_t operator[](std::uint64_t i) const {
      if (i >= count) throw std::logic_error("StreamBlocks: index past the end of its block");
      return first + i;
    }
  };
  // The next `count` indices, under `name`; a name reserved twice is a
  // programming error.
  Block reserve(std::string_view name, std::uint64_t count) {
    for (const auto& [n, b] : blocks_)
      if (n == name) throw std::logic_error("StreamBlocks: '" + std::string(name) + "' reserved twice");
    const Block b{next_, count};
    blocks_.emplace_back(std::string(name), b);
    next_ += count;
    return b;
  }
  // The block reserved under `name`; none is a programming error.
  const Block& block(std::string_view name) const {
    for (const auto& [n, b] : blocks_)
      if (n == name) return b;
    throw std::logic_error("StreamBlocks: no block '" + std::string(name) + "'");
  }
  // Indices reserved so far.
  std::uint64_t reserved() const { return next_; }

 private:
  std::vector<std::pair<std::string, Block>> blocks_;
  std::uint64_t next_ = 0;
};

}  // namespace ctmc
