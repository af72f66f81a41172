/* The table of inputs captured from pipes, FIFOs and devices (input_names.c, load.c). */
#ifndef TRN_CLI_INPUT_NAMES_H
#define TRN_CLI_INPUT_NAMES_H

#include <stdbool.h>

#define CLI_MAX_CAPTURED_INPUTS 8

/* True when no more captured inputs can be remembered. */
bool cli_input_names_full(void);
/* Remember that user_path was captured into the open descriptor fd (read as /proc/self/fd/N);
 * false when out of memory or full. */
bool cli_input_names_add(const char *user_path, int fd);

#endif
