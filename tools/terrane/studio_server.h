/* terrane studio's HTTP server: loopback binding, Host/Origin/token checks, body limits and the
 * embedded page (libmicrohttpd; no terrain code here). */
#ifndef TRN_STUDIO_SERVER_H
#define TRN_STUDIO_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

/* libmicrohttpd (and the TLS libraries it needs: GnuTLS, nettle, GMP... ten files) opened on the
 * first server's start where the build says so (TRN_MHD_LAZY: Linux, its soname known), not at
 * every start of the CLI, where their loading cost a few ms of one core for a command that
 * rarely serves. True when its functions below can be called; false with the loader's words in
 * why. Always true where it is linked. */
bool studio_mhd_open(char *why, size_t why_size);

#ifdef TRN_MHD_LAZY
#define STUDIO_MHD_FUNCTIONS(X)                                                                   \
    X(MHD_add_response_header)                                                                    \
    X(MHD_create_response_from_buffer)                                                            \
    X(MHD_create_response_from_callback)                                                          \
    X(MHD_destroy_response)                                                                       \
    X(MHD_get_connection_info)                                                                    \
    X(MHD_get_daemon_info)                                                                        \
    X(MHD_lookup_connection_value)                                                                \
    X(MHD_queue_response)                                                                         \
    X(MHD_start_daemon)                                                                           \
    X(MHD_stop_daemon)
#define STUDIO_MHD_MEMBER(name) __typeof__(name) *name;
typedef struct studio_mhd_functions {
    STUDIO_MHD_FUNCTIONS(STUDIO_MHD_MEMBER)
} studio_mhd_functions;
#undef STUDIO_MHD_MEMBER
extern studio_mhd_functions studio_mhd_fn; /* set by studio_mhd_open */
#ifndef STUDIO_MHD_OWN_NAMES
#define MHD_add_response_header studio_mhd_fn.MHD_add_response_header
#define MHD_create_response_from_buffer studio_mhd_fn.MHD_create_response_from_buffer
#define MHD_create_response_from_callback studio_mhd_fn.MHD_create_response_from_callback
#define MHD_destroy_response studio_mhd_fn.MHD_destroy_response
#define MHD_get_connection_info studio_mhd_fn.MHD_get_connection_info
#define MHD_get_daemon_info studio_mhd_fn.MHD_get_daemon_info
#define MHD_lookup_connection_value studio_mhd_fn.MHD_lookup_connection_value
#define MHD_queue_response studio_mhd_fn.MHD_queue_response
#define MHD_start_daemon studio_mhd_fn.MHD_start_daemon
#define MHD_stop_daemon studio_mhd_fn.MHD_stop_daemon
#endif
#endif

/* Limits of one server (docs/studio.md "Limits"). */
#define STUDIO_BODY_LIMIT (1u << 20)  /* request bodies above this get 413 */
#define STUDIO_CONNECTION_LIMIT 64u   /* open connections at once */
#define STUDIO_CONNECTION_TIMEOUT 60u /* seconds an idle connection is kept (MHD's own timer) */
#define STUDIO_REQUEST_TIMEOUT                                                                     \
    10u /* seconds a request's headers may take to arrive in full,                                 \
           and a kept-alive connection may wait for the next one */
#define STUDIO_PENDING_LIMIT                                                                       \
    8u                      /* connections still sending headers; beyond, the oldest               \
                               is closed */
#define STUDIO_TOKEN_HEX 32 /* 16 random bytes as hex */

/* One embedded page file (studio_assets.c, generated from tools/terrane/studio/). */
typedef struct studio_asset {
    const char *path; /* "/index.html" */
    const unsigned char *data;
    size_t size;
} studio_asset;
extern const studio_asset studio_assets[];
extern const size_t studio_asset_count;

/* The API handler: called for every /api/ request that passed the checks, with its body (at
 * most STUDIO_BODY_LIMIT bytes; NULL when empty). It queues a response on conn and returns
 * what MHD_queue_response returned. */
typedef enum MHD_Result (*studio_api_fn)(void *user, struct MHD_Connection *conn,
                                         const char *method, const char *path, const char *body,
                                         size_t body_size);

typedef struct studio_server studio_server;

/* Start serving on 127.0.0.1:port (0: a free port) and on [::1] at the same port when the host
 * has IPv6 loopback. token: STUDIO_TOKEN_HEX hex digits. NULL on failure (message in err_msg). */
studio_server *studio_server_start(uint16_t port, const char *token, studio_api_fn api, void *user,
                                   char *err_msg, size_t err_size);
/* The port bound. */
uint16_t studio_server_port(const studio_server *server);
/* Stop accepting, wait for the connection threads, free. NULL is a no-op. */
void studio_server_stop(studio_server *server);

/* Fill token with STUDIO_TOKEN_HEX hex digits from /dev/urandom. False when it cannot be read. */
bool studio_token_new(char token[STUDIO_TOKEN_HEX + 1]);

/* Responses for API handlers: a copy of data with a content type, a status and up to three
 * extra headers (names and values in pairs, NULL-terminated). */
enum MHD_Result studio_reply(struct MHD_Connection *conn, unsigned status, const char *type,
                             const void *data, size_t size, const char *const *headers);
/* data is malloc'd and handed over (freed by the server). */
enum MHD_Result studio_reply_owned(struct MHD_Connection *conn, unsigned status, const char *type,
                                   void *data, size_t size, const char *const *headers);
/* {"error": message} with status. */
enum MHD_Result studio_reply_error(struct MHD_Connection *conn, unsigned status,
                                   const char *message);

#endif
