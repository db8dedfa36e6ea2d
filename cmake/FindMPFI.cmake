# MPFI (Debian libmpfi-dev) ships neither a CMake config nor a pkg-config file.
# This module gives it an imported target, MPFI::MPFI, so that the exported
# ctmc_snn targets name a target rather than this machine's library path; it
# is installed beside ctmc_snnConfig.cmake and used by it as well.
find_library(MPFI_LIBRARY mpfi)
find_path(MPFI_INCLUDE_DIR mpfi.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MPFI REQUIRED_VARS MPFI_LIBRARY MPFI_INCLUDE_DIR)
if(MPFI_FOUND AND NOT TARGET MPFI::MPFI)
  add_library(MPFI::MPFI UNKNOWN IMPORTED)
  set_target_properties(MPFI::MPFI PROPERTIES
    IMPORTED_LOCATION "${MPFI_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${MPFI_INCLUDE_DIR}")
endif()
mark_as_advanced(MPFI_LIBRARY MPFI_INCLUDE_DIR)
