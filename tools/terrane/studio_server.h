/* terrane studio's HTTP server: loopback binding, Host/Origin/token checks, body limits and the
 * embedded page (libmicrohttpd; no terrain code here). */
#ifndef TRN_STUDIO_SERVER_H
#define TRN_STUDIO_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

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
