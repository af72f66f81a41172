# MPI (OpenMPI): the transport, the terrane-mpi entry point and its tests, when TRN_MPI is on
# and MPI is found. Without it the mpi_* tests are still listed and skip (exit 77).
set(TRN_MPI_BUILT OFF)
if(TRN_MPI)
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(TRN_MPI_BUILT ON)
  else()
    message(STATUS "MPI not found: terrane-mpi not built (install libopenmpi-dev openmpi-bin)")
  endif()
endif()

if(TRN_MPI_BUILT)
  add_executable(terrane-mpi ${CMAKE_SOURCE_DIR}/tools/mpi/terrane_mpi.c
                             ${CMAKE_SOURCE_DIR}/src/mpi/comm_mpi.c)
  target_include_directories(terrane-mpi PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(terrane-mpi PRIVATE ${TRN_WARNINGS})
  target_link_libraries(terrane-mpi PRIVATE terrane_static MPI::MPI_C)
  install(TARGETS terrane-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/tools/man/terrane-mpi.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  find_program(TRN_MPIRUN NAMES mpirun mpiexec HINTS ${MPI_C_COMPILER_DIR})
endif()

# mpirun refuses root unless told; OpenMPI's own allocations are not ours to leak-check.
set(TRN_MPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 ASAN_OPTIONS=detect_leaks=0)
# One mpirun test: the script with its arguments where MPI is built, else a skip (exit 77).
function(trn_mpi_test name timeout script)
  if(TRN_MPI_BUILT AND TRN_MPIRUN)
    add_test(NAME ${name} COMMAND sh ${CMAKE_SOURCE_DIR}/tests/${script} ${TRN_MPIRUN} ${ARGN})
  else()
    add_test(NAME ${name}
             COMMAND sh -c "echo 'OpenMPI not built in (TRN_MPI off or not found): skipped'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT "${TRN_MPI_TEST_ENV}"
                       TIMEOUT ${timeout})
endfunction()

foreach(np 2 4)
  set(B ${CMAKE_CURRENT_BINARY_DIR})
  trn_mpi_test(mpi_drainage_np${np} 300 mpi_drainage.sh $<TARGET_FILE:terrane-mpi> ${np}
               ${B}/mpi_np${np})
  # Under the sanitizers on a loaded 2-core machine -np 4 took 141 s: room to spare.
  trn_mpi_test(mpi_generate_np${np} 600 mpi_generate.sh $<TARGET_FILE:terrane-mpi>
               $<TARGET_FILE:terrane> ${np} ${CMAKE_SOURCE_DIR} ${B}/mpi_gen_np${np})
  trn_mpi_test(mpi_every_node_np${np} 600 mpi_every_node.sh $<TARGET_FILE:terrane-mpi>
               $<TARGET_FILE:terrane> ${np} ${B}/mpi_all_np${np})
  trn_mpi_test(mpi_stream_power_np${np} 300 mpi_stream_power.sh $<TARGET_FILE:terrane-mpi> ${np}
               ${B}/mpi_sp_np${np})
  trn_mpi_test(mpi_generate_strokes_np${np} 300 mpi_generate_strokes.sh
               $<TARGET_FILE:terrane-mpi> $<TARGET_FILE:terrane> ${np} ${B}/mpi_strokes_np${np})
endforeach()
