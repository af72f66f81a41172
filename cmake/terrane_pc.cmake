# Writes terrane.pc at install time for the prefix being installed to; run by cmake_install.cmake.
# In: TRN_PC_TEMPLATE, TRN_PC_OUTPUT, TRN_PC_LIBDIR, TRN_PC_INCLUDEDIR (relative to the prefix
# unless absolute), TRN_PC_VERSION, TRN_PC_OPENMP, TRN_PC_GEO; CMAKE_INSTALL_PREFIX is the install's own.
set(TRN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  if(NOT IS_ABSOLUTE "${TRN_PC_${dir}}")
    set(TRN_PC_${dir} "\${prefix}/${TRN_PC_${dir}}")
  endif()
endforeach()
string(STRIP "${TRN_PC_OPENMP}" TRN_PC_OPENMP)
string(STRIP "${TRN_PC_GEO}" TRN_PC_GEO)
configure_file("${TRN_PC_TEMPLATE}" "${TRN_PC_OUTPUT}" @ONLY)
