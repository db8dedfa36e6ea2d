// The spiking engine's vector code (the synapses' scatter and gather, the
// vectorised kernel's pass over a layer) runs AVX instructions where the CPU
// has them and SSE2 ones elsewhere; the fast kernel's lane pass runs AVX-512
// (sixteen lanes) where the CPU has AVX-512F. Every lane rounds each sum and
// product as the scalar code does (the build forbids contraction), so all
// give the same bits; allow_avx(false) keeps the engine to SSE2 on any CPU,
// allow_avx512(false) to AVX at most, which lets the tests compare them on
// one machine.
#pragma once
#include <atomic>

namespace ctmc::sim {

namespace detail {
inline std::atomic<bool> avx_allowed{true};
inline std::atomic<bool> avx512_allowed{true};
}  // namespace detail

// Process-wide; meant for tests and diagnosis, set while no simulation runs.
inline void allow_avx(bool allow) { detail::avx_allowed.store(allow, std::memory_order_relaxed); }
inline void allow_avx512(bool allow) { detail::avx512_allowed.store(allow, std::memory_order_relaxed); }

}  // namespace ctmc::sim
