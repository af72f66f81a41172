/* terrane studio's HTTP server: loopback only, Host/Origin/token checks, body limit, embedded page.
 */
#define _POSIX_C_SOURCE 200809L
#include "studio_server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A connection the watchdog keeps an eye on: until its request's headers have arrived (and
 * between requests) it has a deadline; past it, or when too many wait like it, it is shut. */
typedef struct watched {
    struct watched *prev, *next;
    int fd;
    bool busy;       /* a request is being served (headers arrived) */
    bool shut;       /* shutdown already sent */
    double deadline; /* CLOCK_MONOTONIC seconds */
    double since;    /* when it last started waiting */
} watched;

struct studio_server {
    struct MHD_Daemon *v4, *v6;
    pthread_mutex_t watch_lock;
    watched *watching; /* a list */
    pthread_t watchdog;
    bool watchdog_started;
    atomic_bool stopping;
    /* Set (release) once hosts is written: the port is known only after the daemon listens, and
     * a request arriving before then is turned away (acquire) instead of reading hosts half
     * written. */
    atomic_bool ready;
    uint16_t port;
    char token[STUDIO_TOKEN_HEX + 1];
    char hosts[3][32]; /* the Host values accepted: 127.0.0.1:P, localhost:P, [::1]:P */
    studio_api_fn api;
    void *user;
};

/* One request's state across the handler's calls: its body so far. */
typedef struct request_state {
    char *body;
    size_t size;
    bool too_large;
} request_state;

bool studio_token_new(char token[STUDIO_TOKEN_HEX + 1])
{
    unsigned char bytes[STUDIO_TOKEN_HEX / 2];
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f) return false;
    const size_t got = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    if (got != sizeof bytes) return false;
    for (size_t k = 0; k < sizeof bytes; k++)
        snprintf(token + 2 * k, 3, "%02x", bytes[k]);
    return true;
}

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status, const char *type,
                             struct MHD_Response *r, const char *const *headers)
{
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    /* The page never leaves this machine: no caching, no sniffing, no referrer with the token. */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' blob: data:; "
                            "frame-ancestors 'none'");
    for (size_t k = 0; headers && headers[k] && headers[k + 1]; k += 2)
        MHD_add_response_header(r, headers[k], headers[k + 1]);
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

enum MHD_Result studio_reply(struct MHD_Connection *conn, unsigned status, const char *type,
                             const void *data, size_t size, const char *const *headers)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(size, (void *)(uintptr_t)data, MHD_RESPMEM_MUST_COPY);
    return queue(conn, status, type, r, headers);
}

enum MHD_Result studio_reply_owned(struct MHD_Connection *conn, unsigned status, const char *type,
                                   void *data, size_t size, const char *const *headers)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(size, data, MHD_RESPMEM_MUST_FREE);
    if (!r) free(data);
    return queue(conn, status, type, r, headers);
}

static enum MHD_Result reply_error(struct MHD_Connection *conn, unsigned status,
                                   const char *message, bool closing)
{
    /* The message is ours or the library's; quotes and controls are escaped for JSON. */
    char buf[1024];
    size_t n = (size_t)snprintf(buf, sizeof buf, "{\"error\": \"");
    for (const char *p = message; *p && n + 8 < sizeof buf; p++) {
        const unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            n += (size_t)snprintf(buf + n, sizeof buf - n, "\\%c", c);
        else if (c < 0x20)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "\\u%04x", c);
        else
            buf[n++] = (char)c;
    }
    n += (size_t)snprintf(buf + n, sizeof buf - n, "\"}\n");
    /* A refused request (no token, a foreign Host or Origin) costs nothing more: the
     * connection closes instead of waiting for another request. */
    static const char *const close_it[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
    return studio_reply(conn, status, "application/json", buf, n,
                        closing || status == 401 || status == 403 ? close_it : NULL);
}

enum MHD_Result studio_reply_error(struct MHD_Connection *conn, unsigned status,
                                   const char *message)
{
    return reply_error(conn, status, message, false);
}

/* Refused at its headers: answered, and the connection closed (its body is never read). */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, const char *message)
{
    return reply_error(conn, status, message, true);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static watched *watched_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* A connection's request has its headers (busy) or was answered (waiting again). */
static void watched_set(studio_server *s, struct MHD_Connection *conn, bool busy)
{
    pthread_mutex_lock(&s->watch_lock);
    watched *w = watched_of(conn);
    if (w) {
        w->busy = busy;
        w->since = now_seconds();
        w->deadline = w->since + STUDIO_REQUEST_TIMEOUT;
    }
    pthread_mutex_unlock(&s->watch_lock);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    studio_server *s = cls;
    pthread_mutex_lock(&s->watch_lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        watched *w = calloc(1, sizeof *w);
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (w && info) {
            w->fd = info->connect_fd;
            w->since = now_seconds();
            w->deadline = w->since + STUDIO_REQUEST_TIMEOUT;
            w->next = s->watching;
            if (s->watching) s->watching->prev = w;
            s->watching = w;
            /* Too many still sending headers (a slow client holding connections open): the
             * one waiting longest goes, so a page with the token always gets in. */
            size_t pending = 0;
            watched *oldest = NULL;
            for (watched *q = s->watching; q; q = q->next)
                if (!q->busy && !q->shut) {
                    pending++;
                    if (!oldest || q->since < oldest->since) oldest = q;
                }
            if (pending > STUDIO_PENDING_LIMIT && oldest) {
                shutdown(oldest->fd, SHUT_RDWR);
                oldest->shut = true;
            }
            *socket_context = w;
        } else {
            free(w);
            *socket_context = NULL;
        }
    } else {
        watched *w = *socket_context;
        if (w) {
            if (w->prev) w->prev->next = w->next;
            if (w->next) w->next->prev = w->prev;
            if (s->watching == w) s->watching = w->next;
            free(w);
        }
        *socket_context = NULL;
    }
    pthread_mutex_unlock(&s->watch_lock);
}

/* Shuts connections whose headers (or next request) are late: a client trickling bytes keeps
 * MHD's idle timer alive, this deadline it cannot. */
static void *watchdog(void *arg)
{
    studio_server *s = arg;
    while (!atomic_load(&s->stopping)) {
        nanosleep(&(struct timespec){0, 250 * 1000 * 1000}, NULL);
        const double now = now_seconds();
        pthread_mutex_lock(&s->watch_lock);
        for (watched *w = s->watching; w; w = w->next)
            if (!w->busy && !w->shut && now > w->deadline) {
                shutdown(w->fd, SHUT_RDWR);
                w->shut = true;
            }
        pthread_mutex_unlock(&s->watch_lock);
    }
    return NULL;
}

/* The Host header names this server (a DNS-rebinding page names its own host). */
static bool host_ok(const studio_server *s, const char *host)
{
    if (!host) return false;
    for (size_t k = 0; k < 3; k++)
        if (strcasecmp(host, s->hosts[k]) == 0) return true;
    return false;
}

/* An Origin, when sent, is this server's own ("http://" + an accepted Host). */
static bool origin_ok(const studio_server *s, const char *origin)
{
    if (!origin) return true;
    if (strncmp(origin, "http://", 7) != 0) return false;
    return host_ok(s, origin + 7);
}

/* Compared in time independent of where the strings first differ. */
static bool token_ok(const studio_server *s, const char *given)
{
    if (!given || strlen(given) != STUDIO_TOKEN_HEX) return false;
    unsigned diff = 0;
    for (size_t k = 0; k < STUDIO_TOKEN_HEX; k++)
        diff |= (unsigned)(given[k] ^ s->token[k]);
    return diff == 0;
}

static const studio_asset *find_asset(const char *path)
{
    if (strcmp(path, "/") == 0) path = "/index.html";
    for (size_t k = 0; k < studio_asset_count; k++)
        if (strcmp(studio_assets[k].path, path) == 0) return &studio_assets[k];
    return NULL;
}

static const char *asset_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return "application/octet-stream";
    if (strcmp(dot, ".html") == 0) return "text/html; charset=utf-8";
    if (strcmp(dot, ".js") == 0) return "text/javascript; charset=utf-8";
    if (strcmp(dot, ".css") == 0) return "text/css; charset=utf-8";
    return "application/octet-stream";
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    studio_server *s = cls;
    request_state *rq = *con_cls;
    const bool api = strncmp(url, "/api/", 5) == 0;
    if (!rq) {
        if (!atomic_load_explicit(&s->ready, memory_order_acquire)) return MHD_NO;
        /* First call, headers only: every check happens before any body is read. */
        if (!(rq = calloc(1, sizeof *rq))) return MHD_NO;
        *con_cls = rq;
        watched_set(s, conn, true);
        const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
        const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
        if (!host_ok(s, host)) return studio_reply_error(conn, 403, "Host is not this server");
        if (!origin_ok(s, origin))
            return studio_reply_error(conn, 403, "Origin is not this server");
        const bool page = strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0;
        /* The page's other files need no token, so anyone local may ask for them: such a
         * request is read-only and bodiless, refused at its headers otherwise. A body trickled
         * a byte at a time would keep a connection busy (past the watchdog, which times only
         * headers) for as long as the client liked, and 64 of them would lock the page out. */
        if (!api && !page) {
            const char *te =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
            const char *cl =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
                return refuse(conn, 405, "the page's files are read-only");
            if (te || (cl && strtoull(cl, NULL, 10) > 0))
                return refuse(conn, 400, "a request for the page's files has no body");
        }
        if (api || page) {
            const char *t = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
            if (!t) t = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Terrane-Token");
            if (!token_ok(s, t))
                return studio_reply_error(conn, 401,
                                          "missing or wrong token (see the URL "
                                          "terrane studio printed)");
        }
        const char *length =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length && strtoull(length, NULL, 10) > STUDIO_BODY_LIMIT)
            return studio_reply_error(conn, 413, "request body over 1 MiB");
        return MHD_YES;
    }
    if (*upload_data_size) {
        /* A chunked body has no length up front: keep reading, drop it past the limit. */
        if (!rq->too_large && rq->size + *upload_data_size <= STUDIO_BODY_LIMIT) {
            char *grown = realloc(rq->body, rq->size + *upload_data_size + 1);
            if (!grown) return MHD_NO;
            rq->body = grown;
            memcpy(rq->body + rq->size, upload_data, *upload_data_size);
            rq->size += *upload_data_size;
            rq->body[rq->size] = '\0';
        } else {
            rq->too_large = true;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->too_large) return studio_reply_error(conn, 413, "request body over 1 MiB");
    if (api) return s->api(s->user, conn, method, url, rq->body, rq->size);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return studio_reply_error(conn, 405, "the page's files are read-only");
    /* Only the embedded table is looked up: no path ever reaches the file system. */
    const studio_asset *a = find_asset(url);
    if (!a) return studio_reply_error(conn, 404, "not found");
    struct MHD_Response *r = MHD_create_response_from_buffer(a->size, (void *)(uintptr_t)a->data,
                                                             MHD_RESPMEM_PERSISTENT);
    return queue(conn, 200, asset_type(a->path), r, NULL);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    request_state *rq = *con_cls;
    if (rq) watched_set(cls, conn, false);
    if (rq) free(rq->body);
    free(rq);
    *con_cls = NULL;
}

static struct MHD_Daemon *start_one(studio_server *s, const struct sockaddr *addr, bool v6)
{
    const unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                           MHD_USE_AUTO | (v6 ? MHD_USE_IPv6 : 0u);
    return MHD_start_daemon(flags, s->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)STUDIO_CONNECTION_LIMIT,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)STUDIO_CONNECTION_TIMEOUT,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
}

studio_server *studio_server_start(uint16_t port, const char *token, studio_api_fn api, void *user,
                                   char *err_msg, size_t err_size)
{
    studio_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err_msg, err_size, "out of memory");
        return NULL;
    }
    if (!studio_mhd_open(err_msg, err_size)) {
        free(s);
        return NULL;
    }
    snprintf(s->token, sizeof s->token, "%s", token);
    pthread_mutex_init(&s->watch_lock, NULL);
    atomic_init(&s->stopping, false);
    atomic_init(&s->ready, false);
    s->api = api;
    s->user = user;
    s->port = port;
    struct sockaddr_in v4;
    memset(&v4, 0, sizeof v4);
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!(s->v4 = start_one(s, (const struct sockaddr *)&v4, false))) {
        snprintf(err_msg, err_size, "cannot listen on 127.0.0.1:%u (in use?)", (unsigned)port);
        pthread_mutex_destroy(&s->watch_lock);
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->v4, MHD_DAEMON_INFO_BIND_PORT);
    if (info) s->port = info->port;
    snprintf(s->hosts[0], sizeof s->hosts[0], "127.0.0.1:%u", (unsigned)s->port);
    snprintf(s->hosts[1], sizeof s->hosts[1], "localhost:%u", (unsigned)s->port);
    snprintf(s->hosts[2], sizeof s->hosts[2], "[::1]:%u", (unsigned)s->port);
    atomic_store_explicit(&s->ready, true, memory_order_release);
    /* IPv6 loopback at the same port when the host has it; without it IPv4 serves alone. */
    struct sockaddr_in6 v6;
    memset(&v6, 0, sizeof v6);
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(s->port);
    v6.sin6_addr = in6addr_loopback;
    s->v6 = start_one(s, (const struct sockaddr *)&v6, true);
    s->watchdog_started = pthread_create(&s->watchdog, NULL, watchdog, s) == 0;
    return s;
}

uint16_t studio_server_port(const studio_server *server)
{
    return server->port;
}

void studio_server_stop(studio_server *server)
{
    if (!server) return;
    atomic_store(&server->stopping, true);
    if (server->watchdog_started) pthread_join(server->watchdog, NULL);
    if (server->v6) MHD_stop_daemon(server->v6);
    if (server->v4) MHD_stop_daemon(server->v4);
    pthread_mutex_destroy(&server->watch_lock);
    free(server);
}
