# Every dependency is a Debian package (DESIGN.md section 3). A missing one is a
# configure-time error naming the package: run scripts/install-deps.sh.
macro(ctmc_require found pkg what)
  if(NOT ${found})
    message(FATAL_ERROR "ctmc-snn: ${what} not found; install the Debian package '${pkg}' (scripts/install-deps.sh does this)")
  endif()
endmacro()

find_package(Eigen3 3.4 QUIET NO_MODULE)
ctmc_require(Eigen3_FOUND libeigen3-dev "Eigen 3.4")
find_package(Boost 1.81 QUIET)  # 1.81: a default precision per thread (core/numeric_context.hpp)
ctmc_require(Boost_FOUND libboost1.81-dev "Boost 1.81 (Multiprecision, Math)")
find_package(Ceres QUIET)
ctmc_require(Ceres_FOUND libceres-dev "Ceres Solver")
find_package(doctest QUIET)
ctmc_require(doctest_FOUND doctest-dev "doctest")
find_package(CLI11 QUIET)
ctmc_require(CLI11_FOUND libcli11-dev "CLI11")
find_package(nlohmann_json QUIET)
ctmc_require(nlohmann_json_FOUND nlohmann-json3-dev "nlohmann-json")
find_package(fmt QUIET)
ctmc_require(fmt_FOUND libfmt-dev "fmt")
find_package(OpenMP QUIET)
ctmc_require(OpenMP_CXX_FOUND libgomp1 "OpenMP (g++)")
find_package(ZLIB QUIET)
ctmc_require(ZLIB_FOUND zlib1g-dev "zlib")
# ctmc-snn import onnx: the ONNX protobuf schema (onnx::ModelProto) and protobuf.
find_package(Protobuf QUIET)
ctmc_require(Protobuf_FOUND libprotobuf-dev "Protocol Buffers (for the ONNX import)")
find_package(ONNX QUIET)
ctmc_require(ONNX_FOUND libonnx-dev "the ONNX protobuf schema (for the ONNX import)")
find_package(PkgConfig QUIET)
ctmc_require(PkgConfig_FOUND pkg-config "pkg-config")
pkg_check_modules(MPFR QUIET IMPORTED_TARGET mpfr)
ctmc_require(MPFR_FOUND libmpfr-dev "MPFR")
pkg_check_modules(GMP QUIET IMPORTED_TARGET gmp)
ctmc_require(GMP_FOUND libgmp-dev "GMP")
find_package(MPFI QUIET)  # cmake/FindMPFI.cmake
ctmc_require(MPFI_FOUND libmpfi-dev "MPFI")
find_program(GNUPLOT_PROGRAM gnuplot)
if(NOT GNUPLOT_PROGRAM)
  message(WARNING "ctmc-snn: gnuplot not found (Debian package gnuplot-nox); reports will fail to draw plots")
endif()

# The multiprecision stack as one target. Only imported targets here: it is
# exported with the libraries (ctmc_snn::ctmc_mp), and ctmc_snnConfig.cmake
# finds the same packages again on the consumer's side.
add_library(ctmc_mp INTERFACE)
target_link_libraries(ctmc_mp INTERFACE Boost::boost MPFI::MPFI PkgConfig::MPFR PkgConfig::GMP)
