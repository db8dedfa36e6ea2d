// The names and version of the sweep's file formats, shared by the writer
// (sweep_document.cpp) and the readers of parts and documents (sweep.cpp).
// Internal header of sim/studies (not installed).
#pragma once

namespace ctmc::sim {

inline constexpr const char* kSweepPartFormat = "ctmc-snn sweep part";
inline constexpr const char* kSweepDocumentFormat = "ctmc-snn sweep";
inline constexpr int kSweepFormatVersion = 1;

}  // namespace ctmc::sim
