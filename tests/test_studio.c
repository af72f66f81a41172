/* terrane studio: the server's security checks and its editing API, driven over plain sockets. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <math.h>

#include "terrane/generate.h"
#include "terrane/mesh.h"
#include "test.h"

static pid_t server_pid = -1;
static unsigned port;
static char token[64];
static char root[512], project[600], recipe_path[700];

/* A 128 x 128 cell terrain in 32-cell chunks: 16 chunks, so a small stroke touches few. Biome
 * "s" covers nothing until the page paints it (index 1: biomes go by name). */
static const char *const recipe_text =
    "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 11, \"default_landform\": "
    "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 40}}, \"default_biome\": \"g\", "
    "\"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}, \"s\": {\"color\": [0.9, 0.8, 0.5, "
    "1]}}}\n";

typedef struct reply {
    int status;
    char *head; /* status line and headers */
    char *body;
    size_t size;
} reply;

static void reply_free(reply *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

/* Send raw request bytes (head then body) and read the reply until the server closes. */
static reply send_raw(const char *head, const void *body, size_t body_size)
{
    reply r = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return r;
    }
    size_t n = strlen(head);
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, head + off, n - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    for (size_t off = 0; off < body_size;) {
        ssize_t w = send(fd, (const char *)body + off, body_size - off, MSG_NOSIGNAL);
        if (w <= 0) break; /* the server may answer early (413) and close */
        off += (size_t)w;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    for (ssize_t got; buf && (got = recv(fd, buf + len, cap - len, 0)) > 0;) {
        len += (size_t)got;
        if (len == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) break;
            buf = grown;
            cap *= 2;
        }
    }
    close(fd);
    if (!buf) return r;
    buf[len] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    if (!end || sscanf(buf, "HTTP/1.%*d %d", &r.status) != 1) {
        free(buf);
        return r;
    }
    *end = '\0';
    r.head = strdup(buf);
    r.size = len - (size_t)(end + 4 - buf);
    r.body = malloc(r.size + 1);
    memcpy(r.body, end + 4, r.size);
    r.body[r.size] = '\0';
    free(buf);
    return r;
}

/* A request from this server's own page: the right Host and the token (unless with_token is
 * false); extra is more header lines ("Name: value\r\n"). */
static reply request(const char *method, const char *target, const char *extra, const char *body,
                     size_t body_size, bool with_token)
{
    char head[2048];
    snprintf(head, sizeof head,
             "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s%s%s%sContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n",
             method, target, port, with_token ? "X-Terrane-Token: " : "", with_token ? token : "",
             with_token ? "\r\n" : "", extra ? extra : "", body_size);
    return send_raw(head, body, body_size);
}

static int status_of(const char *method, const char *target, const char *extra, bool with_token)
{
    reply r = request(method, target, extra, NULL, 0, with_token);
    int s = r.status;
    reply_free(&r);
    return s;
}

/* Run terrane studio on input at a free port (with one more option when option is not NULL);
 * its port and token into the globals. */
static bool serve_with(const char *input, const char *option)
{
    int out[2];
    if (pipe(out) != 0) return false;
    server_pid = fork();
    if (server_pid < 0) return false;
    if (server_pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        if (option)
            execl(TRN_CLI_PATH, "terrane", "studio", input, option, "--port", "0", "-q",
                  (char *)NULL);
        else
            execl(TRN_CLI_PATH, "terrane", "studio", input, "--port", "0", "-q", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256];
    size_t len = 0;
    char c;
    while (len + 1 < sizeof line && read(out[0], &c, 1) == 1 && c != '\n')
        line[len++] = c;
    line[len] = '\0';
    close(out[0]);
    return sscanf(line, "http://127.0.0.1:%u/?token=%63s", &port, token) == 2 &&
           strlen(token) == 32;
}

static bool serve(const char *input)
{
    return serve_with(input, NULL);
}

static bool stop_server(void)
{
    if (server_pid <= 0) return false;
    kill(server_pid, SIGINT);
    int status = 0;
    const bool reaped = waitpid(server_pid, &status, 0) == server_pid;
    server_pid = -1;
    return reaped && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool start_server(void)
{
    char tmp[512];
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return false;
    snprintf(root, sizeof root, "%s", tmp);
    snprintf(project, sizeof project, "%s/project", root);
    snprintf(recipe_path, sizeof recipe_path, "%s/land.json", project);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", project);
    if (system(cmd) != 0 || !trn_test_write_file(recipe_path, recipe_text, strlen(recipe_text)))
        return false;
    return serve(recipe_path);
}

static void test_url(void)
{
    CHECK(port > 0 && port < 65536);
    /* 16 random bytes as lowercase hex. */
    CHECK_EQ_INT(strspn(token, "0123456789abcdef"), 32);
}

static void test_page(void)
{
    char target[128];
    snprintf(target, sizeof target, "/?token=%s", token);
    reply r = request("GET", target, NULL, NULL, 0, false);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "Content-Type: text/html");
    CHECK_CONTAINS(r.body, "<canvas");
    CHECK_CONTAINS(r.head, "Referrer-Policy: no-referrer");
    reply_free(&r);
    /* The page's scripts carry no secret: they load without the token. */
    CHECK_EQ_INT(status_of("GET", "/app.js", NULL, false), 200);
    CHECK_EQ_INT(status_of("GET", "/style.css", NULL, false), 200);
    CHECK_EQ_INT(status_of("POST", "/app.js", NULL, false), 405);
}

static void test_host_and_origin(void)
{
    char head[512];
    const char *hosts[] = {"evil.example", "127.0.0.2", "localhost",
                           "LocalHost",    "[::1]",     "127.0.0.1"};
    /* A rebinding page's Host names its own domain; the port must match too. */
    for (size_t k = 0; k < 6; k++) {
        snprintf(head, sizeof head,
                 "GET /api/recipe HTTP/1.1\r\nHost: %s:%u\r\nX-Terrane-Token: %s\r\n"
                 "Connection: close\r\n\r\n",
                 hosts[k], k == 5 ? port + 1 : port, token);
        reply r = send_raw(head, NULL, 0);
        CHECK_EQ_INT(r.status, k >= 2 && k <= 4 ? 200 : 403);
        reply_free(&r);
    }
    snprintf(head, sizeof head,
             "GET /api/recipe HTTP/1.1\r\nX-Terrane-Token: %s\r\nConnection: close\r\n\r\n", token);
    reply none = send_raw(head, NULL, 0);
    CHECK(none.status == 403 || none.status == 400); /* HTTP/1.1 needs a Host */
    reply_free(&none);
    char origin[128];
    CHECK_EQ_INT(status_of("GET", "/api/recipe", "Origin: http://evil.example\r\n", true), 403);
    CHECK_EQ_INT(status_of("GET", "/api/recipe", "Origin: null\r\n", true), 403);
    snprintf(origin, sizeof origin, "Origin: https://127.0.0.1:%u\r\n", port);
    CHECK_EQ_INT(status_of("GET", "/api/recipe", origin, true), 403);
    snprintf(origin, sizeof origin, "Origin: http://127.0.0.1:%u\r\n", port);
    CHECK_EQ_INT(status_of("GET", "/api/recipe", origin, true), 200);
}

static void test_token(void)
{
    CHECK_EQ_INT(status_of("GET", "/", NULL, false), 401);
    CHECK_EQ_INT(status_of("GET", "/index.html", NULL, false), 401);
    CHECK_EQ_INT(status_of("GET", "/api/recipe", NULL, false), 401);
    CHECK_EQ_INT(status_of("POST", "/api/save", NULL, false), 401);
    char target[128], wrong[64];
    snprintf(wrong, sizeof wrong, "%s", token);
    wrong[31] = wrong[31] == '0' ? '1' : '0';
    snprintf(target, sizeof target, "/api/recipe?token=%s", wrong);
    CHECK_EQ_INT(status_of("GET", target, NULL, false), 401);
    snprintf(target, sizeof target, "/api/recipe?token=%.31s", token);
    CHECK_EQ_INT(status_of("GET", target, NULL, false), 401);
    snprintf(target, sizeof target, "/api/recipe?token=%s", token);
    CHECK_EQ_INT(status_of("GET", target, NULL, false), 200);
    CHECK_EQ_INT(status_of("GET", "/api/recipe", NULL, true), 200);
    CHECK_EQ_INT(status_of("GET", "/api/nothing", NULL, true), 404);
    CHECK_EQ_INT(status_of("GET", "/api/stroke", NULL, true), 405);
    CHECK_EQ_INT(status_of("POST", "/api/recipe", NULL, true), 405);
}

static void test_traversal(void)
{
    CHECK_EQ_INT(status_of("GET", "/../etc/passwd", NULL, false), 404);
    CHECK_EQ_INT(status_of("GET", "/%2e%2e/x", NULL, false), 404);
    CHECK_EQ_INT(status_of("GET", "/%2E%2E/%2E%2E/etc/passwd", NULL, false), 404);
    CHECK_EQ_INT(status_of("GET", "/./app.js", NULL, false), 404);
    CHECK_EQ_INT(status_of("GET", "//app.js", NULL, false), 404);
}

static void test_body_limit(void)
{
    const size_t limit = 1u << 20;
    /* Refused on its declared length, before any byte of it is read. */
    char head[512];
    snprintf(head, sizeof head,
             "POST /api/stroke HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Terrane-Token: %s\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n",
             port, token, limit + 1);
    reply r = send_raw(head, NULL, 0);
    CHECK_EQ_INT(r.status, 413);
    reply_free(&r);
    /* The limit itself is read (and then refused as a stroke, not as a size). */
    char *body = malloc(limit);
    memset(body, ' ', limit);
    body[0] = '[';
    body[limit - 1] = ']';
    r = request("POST", "/api/stroke", NULL, body, limit, true);
    CHECK_EQ_INT(r.status, 400);
    reply_free(&r);
    /* A chunked body has no length up front: counted as it arrives. */
    snprintf(head, sizeof head,
             "POST /api/stroke HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Terrane-Token: %s\r\n"
             "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
             port, token);
    size_t chunked_size = 0;
    char *chunked = malloc(limit + 4096);
    for (size_t k = 0; k < 2; k++) {
        chunked_size += (size_t)sprintf(chunked + chunked_size, "%zx\r\n", limit / 2 + k);
        memset(chunked + chunked_size, ' ', limit / 2 + k);
        chunked_size += limit / 2 + k;
        memcpy(chunked + chunked_size, "\r\n", 2);
        chunked_size += 2;
    }
    memcpy(chunked + chunked_size, "0\r\n\r\n", 5);
    chunked_size += 5;
    r = send_raw(head, chunked, chunked_size);
    CHECK_EQ_INT(r.status, 413);
    reply_free(&r);
    free(chunked);
    free(body);
}

static bool only_inserted(const char *before, const char *after);
static char *replaced(const char *text, const char *what, const char *with);

static float *get_heights(size_t *count)
{
    reply r = request("GET", "/api/heights", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "X-Terrane-Cells: 128,128");
    *count = r.size / sizeof(float);
    float *h = malloc(r.size ? r.size : 1);
    memcpy(h, r.body, r.size);
    reply_free(&r);
    return h;
}

/* The chunk windows of an edit reply: "i0":N,"j0":N,"nx":N,"nz":N per chunk. */
static size_t reply_windows(const char *json, unsigned win[][4], size_t max)
{
    size_t n = 0;
    for (const char *p = json; n < max && (p = strstr(p, "\"i0\":"));) {
        if (sscanf(p, "\"i0\":%u,\"j0\":%u,\"nx\":%u,\"nz\":%u", &win[n][0], &win[n][1], &win[n][2],
                   &win[n][3]) != 4)
            break;
        n++;
        p++;
    }
    return n;
}

static bool in_windows(unsigned i, unsigned j, unsigned win[][4], size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (i >= win[k][0] && i < win[k][0] + win[k][2] && j >= win[k][1] &&
            j < win[k][1] + win[k][3])
            return true;
    return false;
}

static void test_edit_and_save(void)
{
    size_t recipe_size = 0;
    uint8_t *original = trn_test_read_file(recipe_path, &recipe_size);
    size_t count = 0, count_after = 0;
    float *before = get_heights(&count);
    CHECK_EQ_INT(count, 129 * 129);

    const char *stroke =
        "{\"type\": \"raise\", \"radius\": 12, \"strength\": 5, \"center\": [40, 200]}";
    reply r = request("POST", "/api/stroke", "Content-Type: application/json\r\n", stroke,
                      strlen(stroke), true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"can_undo\":true");
    CHECK_CONTAINS(r.body, "\"biomes\":\"");
    unsigned win[16][4];
    const size_t windows = reply_windows(r.body ? r.body : "", win, 16);
    CHECK(windows >= 1 && windows < 16);
    reply_free(&r);
    float *after = get_heights(&count_after);
    size_t changed = 0, outside = 0;
    for (unsigned j = 0; j < 129 && count_after == count; j++)
        for (unsigned i = 0; i < 129; i++)
            if (memcmp(&before[j * 129 + i], &after[j * 129 + i], sizeof(float)) != 0) {
                changed++;
                outside += !in_windows(i, j, win, windows);
            }
    CHECK(changed > 0);
    CHECK_EQ_INT(outside, 0);

    /* A chunk's own heights are the field's window. */
    r = request("GET", "/api/heights?chunk=1,3", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "X-Terrane-Origin: 32,96");
    CHECK_CONTAINS(r.head, "X-Terrane-Samples: 33,33");
    CHECK_EQ_INT(r.size, 33 * 33 * sizeof(float));
    bool same = r.size == 33 * 33 * sizeof(float);
    for (size_t j = 0; j < 33 && same; j++)
        same = memcmp(r.body + j * 33 * 4, &after[(96 + j) * 129 + 32], 33 * 4) == 0;
    CHECK(same);
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/heights?chunk=4,0", NULL, true), 400);
    /* Biome indices, one byte a sample, with the biomes' colours (0.2, 0.6, 0.2 -> 51,153,51). */
    r = request("GET", "/api/biomes", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_INT(r.size, 129 * 129);
    CHECK_CONTAINS(r.head, "X-Terrane-Biome-Colors: 51,153,51");
    reply_free(&r);
    r = request("GET", "/api/biomes?chunk=3,3", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.size, 33 * 33);
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/heights?chunk=3,3", NULL, true), 200);

    /* A bad stroke is refused by the recipe's own parser and changes nothing. */
    const char *bad = "{\"type\": \"raise\", \"radius\": -1, \"center\": [1, 1]}";
    r = request("POST", "/api/stroke", NULL, bad, strlen(bad), true);
    CHECK_EQ_INT(r.status, 400);
    CHECK_CONTAINS(r.body, "radius");
    reply_free(&r);

    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    size_t n2 = 0;
    float *undone = get_heights(&n2);
    CHECK(n2 == count && memcmp(undone, before, count * sizeof(float)) == 0);
    free(undone);
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 409);
    CHECK_EQ_INT(status_of("POST", "/api/redo", NULL, true), 200);
    float *redone = get_heights(&n2);
    CHECK(n2 == count && memcmp(redone, after, count * sizeof(float)) == 0);
    free(redone);
    CHECK_EQ_INT(status_of("POST", "/api/redo", NULL, true), 409);

    /* Nothing is written before Save. */
    CHECK(trn_test_same_bytes(recipe_path, recipe_path));
    size_t now_size = 0;
    uint8_t *now = trn_test_read_file(recipe_path, &now_size);
    CHECK(now && now_size == recipe_size && memcmp(now, original, recipe_size) == 0);
    free(now);
    char cmd[1024];
    /* (the autosave's recovery file aside) */
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | grep -v '[.]recovery$' | wc -l) -eq 1", project);
    CHECK_EQ_INT(system(cmd), 0);

    r = request("POST", "/api/save", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    now = trn_test_read_file(recipe_path, &now_size);
    CHECK(now && strstr((const char *)now, "\"edits\"") && strstr((const char *)now, "\"raise\""));
    /* The file's own text, the strokes added after its last key, numbers as short as they
     * read back. */
    CHECK(now && only_inserted((const char *)original, (const char *)now));
    CHECK_CONTAINS((const char *)now, "\"color\": [0.2, 0.6, 0.2, 1]");
    free(now);
    CHECK_EQ_INT(system(cmd), 0); /* no temporary left beside it */

    /* The saved recipe generates the session's heights bit for bit. */
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("generate '%s' -o '%s/saved.r32' -q", &out, &err, recipe_path, root);
    CHECK_EQ_INT(rc, 0);
    free(out), free(err);
    char r32[700];
    snprintf(r32, sizeof r32, "%s/saved.r32", root);
    size_t r32_size = 0;
    uint8_t *generated = trn_test_read_file(r32, &r32_size);
    /* .r32 holds the north row (the last z) first; the API's rows go with z. */
    bool equal = generated && r32_size == count * sizeof(float);
    for (size_t j = 0; j < 129 && equal; j++)
        equal = memcmp(generated + (128 - j) * 129 * 4, &after[j * 129], 129 * 4) == 0;
    CHECK(equal);
    free(generated);

    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"raise\"");
    reply_free(&r);
    r = request("GET", "/api/check", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"errors\":0");
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/water?x=10&z=10", NULL, true), 200);
    CHECK_EQ_INT(status_of("GET", "/api/water?x=10", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/instances", NULL, true), 200);
    /* The implicit graph's landform node, drawn as a hillshade PNG of the whole grid. */
    r = request("GET", "/api/preview?node=landform", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "Content-Type: image/png");
    CHECK(r.size > 8 && memcmp(r.body, "\x89PNG", 4) == 0);
    CHECK(r.size > 24 && (uint8_t)r.body[19] == 129 &&
          (uint8_t)r.body[23] == 129); /* IHDR width, height */
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/preview?node=nothing", NULL, true), 404);
    CHECK_EQ_INT(status_of("GET", "/api/preview", NULL, true), 400);
    free(before);
    free(after);
    free(original);
}

static uint8_t *get_biomes(void)
{
    reply r = request("GET", "/api/biomes", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_INT(r.size, 129 * 129);
    uint8_t *b = calloc(129 * 129, 1);
    if (r.size == 129 * 129) memcpy(b, r.body, r.size);
    reply_free(&r);
    return b;
}

static reply post_stroke(const char *stroke)
{
    return request("POST", "/api/stroke", "Content-Type: application/json\r\n", stroke,
                   strlen(stroke), true);
}

static bool same_heights(const float *a)
{
    size_t n = 0;
    float *now = get_heights(&n);
    const bool same = n == 129 * 129 && memcmp(now, a, n * sizeof(float)) == 0;
    free(now);
    return same;
}

/* The page's biome, protect and exclusion tools: the strokes exactly as app.js's buildStroke
 * writes them (JSON.stringify: no spaces; the default layers' ids are their groups). */
static void test_page_tools(void)
{
    size_t count = 0;
    float *before = get_heights(&count);
    uint8_t *biomes = get_biomes();
    CHECK_EQ_INT(count, 129 * 129);

    /* Paint biome "s" (strength slider 10 -> blend 1) around (200, 60), radius 16. */
    reply r = post_stroke("{\"type\":\"region\",\"layer\":\"biomes\",\"radius\":16,\"strength\":1,"
                          "\"falloff\":0.5,\"points\":[[200,60],[204,60]],\"biome\":\"s\"}");
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"can_undo\":true");
    reply_free(&r);
    uint8_t *painted = get_biomes();
    size_t to_s = 0, wrong = 0;
    for (unsigned j = 0; j < 129; j++)
        for (unsigned i = 0; i < 129; i++) {
            const size_t k = j * 129 + i;
            const double dx = i * 2.0 - 200, dx2 = i * 2.0 - 204, dz = j * 2.0 - 60;
            const bool inside = dx * dx + dz * dz <= 16 * 16 || dx2 * dx2 + dz * dz <= 16 * 16;
            if (painted[k] != biomes[k]) {
                to_s += painted[k] == 1;
                wrong += painted[k] != 1 || !inside;
            }
        }
    /* Weight >= 0.5 reaches past the inner disc (radius 8): more than its ~50 samples. */
    CHECK(to_s > 50);
    CHECK_EQ_INT(wrong, 0);
    CHECK(painted[30 * 129 + 100] == 1); /* the centre (200, 60) */
    CHECK(same_heights(before));         /* "s" has no landform of its own */
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    uint8_t *undone = get_biomes();
    CHECK(memcmp(undone, biomes, 129 * 129) == 0);
    free(undone);
    free(painted);

    /* A region stroke on a sculpt layer is refused: the page offers only the group's layers. */
    const char *misplaced =
        "{\"type\":\"region\",\"layer\":\"sculpt\",\"radius\":16,\"strength\":1,"
        "\"falloff\":0.5,\"points\":[[200,60]],\"biome\":\"s\"}";
    r = post_stroke(misplaced);
    CHECK_EQ_INT(r.status, 400);
    CHECK_CONTAINS(r.body, "layer");
    reply_free(&r);

    /* Protect: the samples within radius 6 of (100, 100) at their current heights. */
    size_t cap = 4096, len = 0;
    char *protect = malloc(cap);
    len += (size_t)snprintf(protect, cap,
                            "{\"type\":\"protect\",\"layer\":\"protection\",\"grid\":[128,128],"
                            "\"samples\":[");
    size_t samples = 0;
    for (unsigned j = 47; j <= 53; j++)
        for (unsigned i = 47; i <= 53; i++) {
            const double dx = i * 2.0 - 100, dz = j * 2.0 - 100;
            if (dx * dx + dz * dz > 36) continue;
            len += (size_t)snprintf(protect + len, cap - len, "%s[%u,%u,%.17g]", samples ? "," : "",
                                    i, j, (double)before[j * 129 + i]);
            samples++;
        }
    snprintf(protect + len, cap - len, "]}");
    CHECK_EQ_INT(samples, 29);
    r = post_stroke(protect);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"can_undo\":true");
    reply_free(&r);
    CHECK(same_heights(before));
    /* A raise over it leaves the protected samples and moves their neighbours. */
    r = post_stroke("{\"type\":\"raise\",\"layer\":\"sculpt\",\"radius\":12,\"strength\":2,"
                    "\"falloff\":0.5,\"points\":[[100,100]]}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    size_t n = 0;
    float *raised = get_heights(&n);
    size_t kept = 0, moved = 0;
    for (unsigned j = 44; j <= 56 && n == count; j++)
        for (unsigned i = 44; i <= 56; i++) {
            const double dx = i * 2.0 - 100, dz = j * 2.0 - 100;
            const bool same = raised[j * 129 + i] == before[j * 129 + i];
            if (dx * dx + dz * dz <= 36)
                kept += same;
            else
                moved += !same;
        }
    CHECK_EQ_INT(kept, 29);
    CHECK(moved > 0);
    free(raised);
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    CHECK(same_heights(before));
    free(protect);

    /* Exclusion and its erase: a mask only, heights and biomes stay. */
    r = post_stroke(
        "{\"type\":\"exclusion\",\"layer\":\"exclusions\",\"radius\":20,\"strength\":0.2,"
        "\"falloff\":0.5,\"points\":[[60,60],[70,60]]}");
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"can_undo\":true");
    reply_free(&r);
    r = post_stroke(
        "{\"type\":\"exclusion\",\"layer\":\"exclusions\",\"radius\":20,\"strength\":0.2,"
        "\"falloff\":0.5,\"points\":[[60,60]],\"mode\":\"erase\"}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    CHECK(same_heights(before));
    uint8_t *masked = get_biomes();
    CHECK(memcmp(masked, biomes, 129 * 129) == 0);
    free(masked);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"exclusions\":[{\"layer\":\"exclusions\"");
    CHECK_CONTAINS(r.body, "\"mode\":\"erase\"");
    reply_free(&r);
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK(r.body && !strstr(r.body, "\"exclusion\""));
    reply_free(&r);
    CHECK(same_heights(before));
    free(biomes);
    free(before);
}

static int open_idle(void);
static void pause_ms(long ms);

/* Read from fd until needle arrives, the peer closes or 60 s pass in all (keepalives must not
 * keep a missing event waiting for ever); true when it arrived. */
static bool read_until(int fd, const char *needle, char *buf, size_t size)
{
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    size_t len = 0;
    buf[0] = '\0';
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 60 || len + 1 >= size) return false;
        const ssize_t got = recv(fd, buf + len, size - 1 - len, 0);
        if (got == 0) return false;
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
            return false;
        }
        len += (size_t)got;
        buf[len] = '\0';
        if (strstr(buf, needle)) return true;
    }
}

static void test_events(void)
{
    /* A generation's progress reaches an open event stream, ending with "done". The connection
     * limit's test just closed 16 connections: the server may take a moment to count them out. */
    static char buf[1 << 16];
    int fd = -1;
    bool opened = false;
    for (int attempt = 0; attempt < 50 && !opened; attempt++) {
        if (fd >= 0) close(fd), pause_ms(100);
        fd = open_idle();
        char head[512];
        const int n = snprintf(head, sizeof head,
                               "GET /api/events?token=%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
                               token, port);
        opened = fd >= 0 && send(fd, head, (size_t)n, MSG_NOSIGNAL) == n &&
                 read_until(fd, "\r\n\r\n", buf, sizeof buf);
    }
    CHECK(opened);
    CHECK_CONTAINS(buf, "200 OK");
    CHECK_CONTAINS(buf, "Content-Type: text/event-stream");
    CHECK_EQ_INT(status_of("POST", "/api/generate", NULL, true), 200);
    CHECK(read_until(fd, "event: done", buf, sizeof buf));
    if (fd >= 0) close(fd);
}

static void test_generate(void)
{
    /* Regenerating from the file on disk (the saved recipe) keeps the heights. */
    size_t n1 = 0, n2 = 0;
    float *before = get_heights(&n1);
    CHECK_EQ_INT(status_of("POST", "/api/generate", NULL, true), 200);
    float *after = get_heights(&n2);
    CHECK(n1 == n2 && memcmp(before, after, n1 * sizeof(float)) == 0);
    free(before);
    free(after);
    const char *bad = "{\"size\": [1, 1]}";
    reply r = request("POST", "/api/generate", NULL, bad, strlen(bad), true);
    CHECK_EQ_INT(r.status, 400);
    reply_free(&r);
}

/* ---- layers, nodes, explain, LOD, extended strokes, water ---- */

/* The test recipe with rules and a graph: an ocean at 10 m (the derived sea level) published to
 * the output, biome "s" within 4 m of it, a comment and a spare landform that are not evaluated. */
static const char *const water_recipe =
    "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 11, \"default_landform\": "
    "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 40}}, \"default_biome\": \"g\", "
    "\"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}, \"s\": {\"color\": [0.9, 0.8, 0.5, 1]}}, "
    "\"rules\": [{\"id\": \"shore\", \"biome\": \"s\", \"priority\": 1, \"water_distance\": [0, "
    "4]}], \"graph\": {\"format_version\": 1, \"output\": \"output\", \"nodes\": ["
    "{\"id\": \"note\", \"type\": \"comment\", \"params\": {\"text\": \"sea\"}}, "
    "{\"id\": \"spare\", \"type\": \"landform\"}, {\"id\": \"land\", \"type\": \"landform\"}, "
    "{\"id\": \"sea\", \"type\": \"water_body\", \"params\": {\"kind\": \"ocean\", \"level\": 10}, "
    "\"inputs\": {\"field\": {\"node\": \"land\"}}}, {\"id\": \"biomes\", \"type\": "
    "\"biome_rules\", "
    "\"inputs\": {\"field\": {\"node\": \"sea\", \"pin\": \"field\"}, \"water\": {\"node\": "
    "\"sea\", "
    "\"pin\": \"water\"}}}, {\"id\": \"output\", \"type\": \"terrain_output\", \"inputs\": "
    "{\"field\": {\"node\": \"biomes\"}, \"water\": {\"node\": \"sea\", \"pin\": \"water\"}}}]}}";

/* Replace the session by recipe (POST /api/generate with it): no strokes (a history step). */
static int reset_to(const char *recipe)
{
    reply r = request("POST", "/api/generate", NULL, recipe, strlen(recipe), true);
    const int status = r.status;
    reply_free(&r);
    return status;
}

static json_t *get_json(const char *method, const char *target, const char *body, int *status)
{
    reply r = request(method, target, NULL, body, body ? strlen(body) : 0, true);
    *status = r.status;
    json_t *v = r.body ? json_loadb(r.body, r.size, 0, NULL) : NULL;
    reply_free(&r);
    return v;
}

static int post_layer(const char *body)
{
    reply r = request("POST", "/api/layer", NULL, body, strlen(body), true);
    const int status = r.status;
    reply_free(&r);
    return status;
}

static void test_layers(void)
{
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    reply r = request("GET", "/api/layers", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.body &&
          strcmp(r.body, "{\"layers\":[{\"id\":\"generation\",\"name\":\"generation\",\"group\":"
                         "\"generation\",\"enabled\":true,\"strokes\":0},{\"id\":\"biomes\","
                         "\"name\":\"biomes\",\"group\":\"biomes\",\"enabled\":true,\"strokes\":"
                         "0},{\"id\":\"sculpt\",\"name\":\"sculpt\",\"group\":\"sculpt\","
                         "\"enabled\":true,\"strokes\":0},{\"id\":\"protection\",\"name\":"
                         "\"protection\",\"group\":\"protection\",\"enabled\":true,\"strokes\":"
                         "0},{\"id\":\"exclusions\",\"name\":\"exclusions\",\"group\":"
                         "\"exclusions\",\"enabled\":true,\"strokes\":0}]}") == 0);
    reply_free(&r);
    size_t n = 0;
    float *base = get_heights(&n);
    r = post_stroke("{\"type\":\"raise\",\"radius\":20,\"strength\":3,\"points\":[[120,130]]}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    r = post_stroke("{\"type\":\"region\",\"radius\":30,\"strength\":1,\"points\":[[60,60]],"
                    "\"biome\":\"s\"}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    float *edited = get_heights(&n);
    uint8_t *painted = get_biomes();

    /* Sculpt off: the generated heights again, the stroke kept; on: the edit back, bit for bit. */
    int status = 0;
    json_t *o =
        get_json("POST", "/api/layer", "{\"name\": \"sculpt\", \"enabled\": false}", &status);
    CHECK_EQ_INT(status, 200);
    json_t *sculpt = json_array_get(json_object_get(o, "layers"), 2);
    CHECK(json_is_false(json_object_get(sculpt, "enabled")));
    CHECK_EQ_INT(json_integer_value(json_object_get(sculpt, "strokes")), 1);
    CHECK_EQ_INT(json_integer_value(
                     json_object_get(json_array_get(json_object_get(o, "layers"), 1), "strokes")),
                 1);
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(o, "cells"), 0)), 128);
    CHECK(json_is_true(json_object_get(o, "can_undo"))); /* the switch is a history step */
    json_decref(o);
    CHECK(same_heights(base));
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "{\"enabled\":false,\"id\":\"sculpt\"}");
    reply_free(&r);
    /* Undo switches it back (the session regenerated from the recipe before), redo off again;
     * the strokes before the switch stay undoable. */
    r = request("POST", "/api/undo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"regenerated\":true");
    reply_free(&r);
    CHECK(same_heights(edited));
    CHECK_EQ_INT(status_of("POST", "/api/redo", NULL, true), 200);
    CHECK(same_heights(base));
    /* The state it has: nothing happens, not even a regeneration (the history stays). */
    r = post_stroke("{\"type\":\"lower\",\"radius\":8,\"points\":[[20,20]]}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    o = get_json("POST", "/api/layer", "{\"name\": \"sculpt\", \"enabled\": false}", &status);
    CHECK_EQ_INT(status, 200);
    CHECK(json_is_true(json_object_get(o, "can_undo")));
    json_decref(o);
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    CHECK(same_heights(base));
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": true}"), 200);
    CHECK(same_heights(edited));
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK(r.body && !strstr(r.body, "\"layers\"")); /* the five defaults again */
    reply_free(&r);

    /* Biomes off: the painted region no longer paints; heights unchanged. */
    CHECK_EQ_INT(post_layer("{\"name\": \"biomes\", \"enabled\": false}"), 200);
    CHECK(same_heights(edited));
    uint8_t *unpainted = get_biomes();
    CHECK(memcmp(unpainted, painted, 129 * 129) != 0);
    CHECK_EQ_INT(post_layer("{\"name\": \"biomes\", \"enabled\": true}"), 200);
    uint8_t *repainted = get_biomes();
    CHECK(memcmp(repainted, painted, 129 * 129) == 0);

    /* Refusals: unknown layer 404, every other malformed body 400; nothing changes. */
    CHECK_EQ_INT(post_layer("{\"name\": \"Sculpt\", \"enabled\": false}"), 404);
    CHECK_EQ_INT(post_layer("{\"name\": \"\", \"enabled\": false}"), 404);
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\"}"), 400);
    CHECK_EQ_INT(post_layer("{\"enabled\": false}"), 400);
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": 0}"), 400);
    CHECK_EQ_INT(post_layer("{\"name\": 2, \"enabled\": false}"), 400);
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": false, \"x\": 1}"), 400);
    CHECK_EQ_INT(post_layer("[\"sculpt\", false]"), 400);
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\""), 400);
    CHECK_EQ_INT(status_of("POST", "/api/layer", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/layer", NULL, true), 405);
    CHECK_EQ_INT(status_of("POST", "/api/layers", NULL, true), 405);
    CHECK(same_heights(edited));

    /* Saved disabled: the recipe's layers say so, and generate gives the session's heights. */
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": false}"), 200);
    CHECK_EQ_INT(status_of("POST", "/api/save", NULL, true), 200);
    size_t size = 0;
    char *saved = (char *)trn_test_read_file(recipe_path, &size);
    CHECK_CONTAINS(saved, "\"layers\"");
    CHECK_CONTAINS(saved, "\"enabled\": false");
    free(saved);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o '%s/layer.r32' -q", &out, &err, recipe_path, root), 0);
    free(out), free(err);
    char r32[700];
    snprintf(r32, sizeof r32, "%s/layer.r32", root);
    uint8_t *generated = trn_test_read_file(r32, &size);
    bool equal = generated && size == 129 * 129 * sizeof(float);
    for (size_t j = 0; j < 129 && equal; j++)
        equal = memcmp(generated + (128 - j) * 129 * 4, &base[j * 129], 129 * 4) == 0;
    CHECK(equal);
    free(generated);

    /* A recipe's own layers: switched by display name as well as id. */
    char layered[2048];
    snprintf(layered, sizeof layered,
             "%.*s, \"layers\": [{\"id\": \"generation\"}, {\"id\": \"hand\", \"name\": \"Hand\", "
             "\"group\": \"sculpt\"}], \"edits\": [{\"type\": \"raise\", \"layer\": \"hand\", "
             "\"radius\": 20, \"points\": [[50, 50]]}]}",
             (int)(strlen(recipe_text) - 2), recipe_text);
    CHECK_EQ_INT(reset_to(layered), 200);
    o = get_json("POST", "/api/layer", "{\"name\": \"Hand\", \"enabled\": false}", &status);
    CHECK_EQ_INT(status, 200);
    CHECK_EQ_INT(json_array_size(json_object_get(o, "layers")), 2);
    json_t *hand = json_array_get(json_object_get(o, "layers"), 1);
    CHECK(json_is_false(json_object_get(hand, "enabled")));
    CHECK(strcmp(json_string_value(json_object_get(hand, "id")), "hand") == 0);
    CHECK(strcmp(json_string_value(json_object_get(hand, "name")), "Hand") == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(hand, "strokes")), 1);
    json_decref(o);
    CHECK(same_heights(base));
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": false}"), 404);
    CHECK_EQ_INT(post_layer("{\"name\": \"hand\", \"enabled\": true}"), 200);
    CHECK(!same_heights(base));
    free(base);
    free(edited);
    free(painted);
    free(unpainted);
    free(repainted);
}

static void test_nodes(void)
{
    CHECK_EQ_INT(reset_to(water_recipe), 200);
    int status = 0;
    json_t *o = get_json("GET", "/api/nodes", NULL, &status);
    CHECK_EQ_INT(status, 200);
    json_t *nodes = json_object_get(o, "nodes");
    CHECK_EQ_INT(json_array_size(nodes), 6);
    static const char *const ids[6] = {"note", "spare", "land", "sea", "biomes", "output"};
    double total = 0.0;
    for (size_t k = 0; k < 6 && json_array_size(nodes) == 6; k++) {
        json_t *n = json_array_get(nodes, k);
        CHECK(strcmp(json_string_value(json_object_get(n, "id")), ids[k]) == 0);
        /* The comment and the unconnected landform are not evaluated; the sea is new to the
         * cache, the landform may be there from an earlier generation of the same land. */
        const char *got = json_string_value(json_object_get(n, "status"));
        CHECK(got &&
              (k < 2 || k == 3 ? strcmp(got, k < 2 ? "skipped" : "evaluated") == 0
                               : strcmp(got, "evaluated") == 0 || strcmp(got, "cached") == 0));
        total += json_number_value(json_object_get(n, "cpu_ms"));
        CHECK(json_number_value(json_object_get(n, "cpu_ms")) >= 0.0);
    }
    CHECK(fabs(json_number_value(json_object_get(o, "total_cpu_ms")) - total) < 1e-9);
    CHECK(strcmp(json_string_value(json_object_get(o, "quality")), "final") == 0);
    json_t *sea = json_array_get(nodes, 3);
    CHECK(strcmp(json_string_value(json_object_get(sea, "type")), "water_body") == 0);
    char *pins = json_dumps(json_object_get(sea, "outputs"), JSON_COMPACT);
    CHECK(pins && strcmp(pins, "[\"field\",\"water\"]") == 0);
    free(pins);
    json_decref(o);
    /* Generating the same recipe again takes every evaluated node from the cache. */
    CHECK_EQ_INT(reset_to(water_recipe), 200);
    o = get_json("GET", "/api/nodes", NULL, &status);
    nodes = json_object_get(o, "nodes");
    for (size_t k = 2; k < 6 && json_array_size(nodes) == 6; k++) {
        json_t *n = json_array_get(nodes, k);
        CHECK(strcmp(json_string_value(json_object_get(n, "status")), "cached") == 0);
        CHECK(json_number_value(json_object_get(n, "cached_cpu_ms")) >= 0.0);
    }
    CHECK_EQ_INT(json_array_size(json_object_get(o, "nodes")), 6);
    json_decref(o);
    CHECK_EQ_INT(status_of("POST", "/api/nodes", NULL, true), 405);
}

/* Preview and Final: ?quality= regenerates at that quality (erosion with fewer droplets), the
 * nodes report it, and going back to final gives the final heights bit for bit. */
static void test_quality(void)
{
    static const char eroded[] =
        "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 3, \"default_landform\": "
        "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 30}}, \"default_biome\": "
        "\"g\", \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}, \"graph\": "
        "{\"format_version\": 1, \"output\": \"out\", \"nodes\": [{\"id\": \"land\", \"type\": "
        "\"landform\"}, {\"id\": \"wear\", \"type\": \"erosion\", \"inputs\": {\"field\": "
        "{\"node\": \"land\"}}}, {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": "
        "{\"field\": {\"node\": \"wear\", \"pin\": \"field\"}}}]}}";
    CHECK_EQ_INT(reset_to(eroded), 200);
    size_t n1 = 0, n2 = 0, n3 = 0;
    float *final_h = get_heights(&n1);
    reply r = request("POST", "/api/generate?quality=preview", NULL, eroded, strlen(eroded), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    int status = 0;
    json_t *o = get_json("GET", "/api/nodes", NULL, &status);
    CHECK(o && strcmp(json_string_value(json_object_get(o, "quality")), "preview") == 0);
    json_decref(o);
    float *preview_h = get_heights(&n2);
    CHECK(n1 == n2 && final_h && preview_h && memcmp(final_h, preview_h, n1 * sizeof(float)) != 0);
    /* Without the parameter the quality stays. */
    CHECK_EQ_INT(reset_to(eroded), 200);
    o = get_json("GET", "/api/nodes", NULL, &status);
    CHECK(o && strcmp(json_string_value(json_object_get(o, "quality")), "preview") == 0);
    json_decref(o);
    r = request("POST", "/api/generate?quality=final", NULL, eroded, strlen(eroded), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    float *again = get_heights(&n3);
    CHECK(n1 == n3 && again && memcmp(final_h, again, n1 * sizeof(float)) == 0);
    r = request("POST", "/api/generate?quality=draft", NULL, eroded, strlen(eroded), true);
    CHECK_EQ_INT(r.status, 400);
    CHECK(r.body && strstr(r.body, "quality: expected preview or final, found \\\"draft\\\""));
    reply_free(&r);
    free(final_h);
    free(preview_h);
    free(again);
}

static int explain_status(const char *query)
{
    char target[256];
    snprintf(target, sizeof target, "/api/explain%s", query);
    return status_of("GET", target, NULL, true);
}

static void test_explain(void)
{
    CHECK_EQ_INT(reset_to(water_recipe), 200);
    /* The terrain is 0..256 both ways: its edges are on it, a hair beyond is not. */
    CHECK_EQ_INT(explain_status("?x=0&z=0"), 200);
    CHECK_EQ_INT(explain_status("?x=256&z=256"), 200);
    CHECK_EQ_INT(explain_status("?x=256.001&z=10"), 400);
    CHECK_EQ_INT(explain_status("?x=10&z=-0.001"), 400);
    CHECK_EQ_INT(explain_status("?x=10"), 400);
    CHECK_EQ_INT(explain_status("?z=10"), 400);
    CHECK_EQ_INT(explain_status("?x=ten&z=10"), 400);
    CHECK_EQ_INT(explain_status("?x=nan&z=10"), 400);
    CHECK_EQ_INT(explain_status("?x=inf&z=10"), 400);
    CHECK_EQ_INT(status_of("POST", "/api/explain?x=1&z=1", NULL, true), 405);
    /* Every sample: biome "s" exactly where the rule matched, and the water's state with it. */
    reply w = request("GET", "/api/water/grid", NULL, NULL, 0, true);
    CHECK_EQ_INT(w.size, 129 * 129 * sizeof(float));
    uint8_t *biomes = get_biomes();
    int status = 0;
    size_t wet_seen = 0, shore_seen = 0;
    for (unsigned j = 0; j <= 128 && w.size == 129 * 129 * 4; j += 8)
        for (unsigned i = 0; i <= 128; i += 8) {
            char target[128];
            snprintf(target, sizeof target, "/api/explain?x=%u&z=%u", 2 * i, 2 * j);
            json_t *o = get_json("GET", target, NULL, &status);
            CHECK_EQ_INT(status, 200);
            json_t *cell = json_object_get(o, "cell");
            CHECK_EQ_INT(json_integer_value(json_array_get(cell, 0)), i);
            CHECK_EQ_INT(json_integer_value(json_array_get(cell, 1)), j);
            const char *biome = json_string_value(json_object_get(o, "biome"));
            const bool shore = biomes[j * 129 + i] == 1;
            CHECK(biome && strcmp(biome, shore ? "s" : "g") == 0);
            CHECK(strcmp(json_string_value(json_object_get(o, "source")),
                         shore ? "rule" : "default") == 0);
            json_t *rule = json_object_get(o, "rule");
            CHECK(shore ? strcmp(json_string_value(rule), "shore") == 0 : json_is_null(rule));
            /* Every rule's test, even when one matched. */
            json_t *rules = json_object_get(o, "rules");
            CHECK_EQ_INT(json_array_size(rules), 1);
            json_t *r0 = json_array_get(rules, 0);
            CHECK(json_is_true(json_object_get(r0, "active")));
            CHECK(json_is_boolean(json_object_get(r0, "matched")) &&
                  json_is_true(json_object_get(r0, "matched")) == shore);
            json_t *cx = json_object_get(o, "context");
            CHECK(json_is_number(json_object_get(cx, "height")));
            CHECK(json_is_number(json_object_get(cx, "slope")));
            CHECK(json_is_number(json_object_get(cx, "moisture")));
            float surface;
            memcpy(&surface, w.body + ((size_t)j * 129 + i) * 4, 4);
            const char *state =
                json_string_value(json_object_get(json_object_get(o, "water"), "state"));
            CHECK(state && strcmp(state, isnan(surface) ? "dry" : "wet") == 0);
            wet_seen += !isnan(surface);
            shore_seen += shore;
            json_decref(o);
        }
    CHECK(wet_seen > 0 && wet_seen < 17 * 17);
    CHECK(shore_seen > 0);
    free(biomes);
    reply_free(&w);
    /* A painted region wins over the rules, and says so. */
    reply r = post_stroke("{\"type\":\"region\",\"radius\":10,\"strength\":1,\"points\":[[200,"
                          "200]],\"biome\":\"s\"}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    json_t *o = get_json("GET", "/api/explain?x=200&z=200", NULL, &status);
    CHECK(strcmp(json_string_value(json_object_get(o, "source")), "region") == 0);
    CHECK(strcmp(json_string_value(json_object_get(o, "biome")), "s") == 0);
    json_decref(o);
}

/* The error /api/lod gives chunk k at level l (levels a chunk). */
static float lod_at(const reply *r, size_t k, size_t l, size_t levels)
{
    float v;
    memcpy(&v, r->body + (k * levels + l) * sizeof v, sizeof v);
    return v;
}

/* /api/lod against the mesh the library builds from the same heights, chunk by chunk: a grid of
 * cells_x x cells_z cells (2 units each) in chunks of chunk_cells. */
static void check_lod_is_mesh(const reply *r, const float *heights, uint32_t cells_x,
                              uint32_t cells_z, uint32_t chunk_cells, uint32_t levels)
{
    trn_field f = {cells_x, cells_z, 2.0 * cells_x, 2.0 * cells_z, (float *)(uintptr_t)heights,
                   0.0,     0.0};
    trn_mesh_options mo;
    trn_mesh_options_default(&mo);
    mo.chunk_cells = chunk_cells;
    trn_mesh *mesh = NULL;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &mo, &mesh, NULL, NULL, NULL), TRN_OK);
    const size_t chunks = (size_t)((cells_x + chunk_cells - 1) / chunk_cells) *
                          ((cells_z + chunk_cells - 1) / chunk_cells);
    CHECK(mesh && mesh->level_count == levels && (size_t)mesh->chunks_x * mesh->chunks_z == chunks);
    CHECK_EQ_INT(r->size, chunks * levels * sizeof(float));
    size_t differ = 0, nonzero = 0;
    for (size_t k = 0; mesh && k < chunks && r->size == chunks * levels * 4; k++)
        for (size_t l = 0; l < levels; l++) {
            differ += lod_at(r, k, l, levels) != (float)mesh->chunks[k].levels[l].error;
            nonzero += lod_at(r, k, l, levels) > 0.0f;
        }
    CHECK_EQ_INT(differ, 0);
    CHECK(nonzero > 0);
    trn_mesh_free(mesh);
}

static void test_lod(void)
{
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    reply r = request("GET", "/api/lod", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "X-Terrane-Lod-Levels: 6");
    CHECK_CONTAINS(r.head, "X-Terrane-Chunks: 4,4");
    CHECK_CONTAINS(r.head, "X-Terrane-Chunk-Cells: 32");
    CHECK_EQ_INT(r.size, 16 * 6 * sizeof(float));
    size_t n = 0;
    float *heights = get_heights(&n);
    check_lod_is_mesh(&r, heights, 128, 128, 32, 6);
    for (size_t k = 0; k < 16 && r.size == 384; k++)
        for (size_t l = 0; l < 6; l++)
            CHECK(l == 0 ? lod_at(&r, k, l, 6) == 0.0f : lod_at(&r, k, l, 6) > 0.0f);
    reply_free(&r);
    free(heights);
    /* An edit's chunks carry their new errors, and /api/lod agrees after it. */
    r = post_stroke("{\"type\":\"raise\",\"radius\":12,\"strength\":9,\"points\":[[100,100]]}");
    CHECK_EQ_INT(r.status, 200);
    json_t *o = r.body ? json_loadb(r.body, r.size, 0, NULL) : NULL;
    reply_free(&r);
    CHECK(json_is_false(json_object_get(o, "water_changed")));
    reply all = request("GET", "/api/lod", NULL, NULL, 0, true);
    heights = get_heights(&n);
    check_lod_is_mesh(&all, heights, 128, 128, 32, 6);
    json_t *chunks = json_object_get(o, "chunks");
    CHECK(json_array_size(chunks) >= 1);
    for (size_t c = 0; c < json_array_size(chunks) && all.size == 384; c++) {
        json_t *ch = json_array_get(chunks, c);
        const size_t k = (size_t)(json_integer_value(json_object_get(ch, "cz")) * 4 +
                                  json_integer_value(json_object_get(ch, "cx")));
        json_t *lod = json_object_get(ch, "lod");
        CHECK_EQ_INT(json_array_size(lod), 6);
        for (size_t l = 0; l < 6; l++)
            CHECK((float)json_number_value(json_array_get(lod, l)) == lod_at(&all, k, l, 6));
    }
    json_decref(o);
    reply_free(&all);
    free(heights);
    CHECK_EQ_INT(status_of("POST", "/api/lod", NULL, true), 405);
    /* Chunks that do not divide the grid, a chunk size that is no power of two: 100 x 70 cells
     * in chunks of 24 (5 x 3 chunks, the last 4 and 22 cells), floor(log2(24)) + 1 = 5 levels. */
    char odd[1024];
    snprintf(odd, sizeof odd,
             "{\"size\": [200, 140], \"resolution\": [100, 70], \"chunk_cells\": 24, %s",
             strstr(recipe_text, "\"seed\""));
    CHECK_EQ_INT(reset_to(odd), 200);
    r = request("GET", "/api/lod", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.head, "X-Terrane-Lod-Levels: 5");
    CHECK_CONTAINS(r.head, "X-Terrane-Chunks: 5,3");
    CHECK_CONTAINS(r.head, "X-Terrane-Chunk-Cells: 24");
    reply hr = request("GET", "/api/heights", NULL, NULL, 0, true);
    CHECK_EQ_INT(hr.size, 101 * 71 * sizeof(float));
    if (hr.size == 101 * 71 * sizeof(float))
        check_lod_is_mesh(&r, (const float *)(const void *)hr.body, 100, 70, 24, 5);
    reply_free(&hr);
    reply_free(&r);
}

/* The chunks an edit reply names, as a bit set over the 16 chunks. */
static unsigned reply_chunks(const char *body)
{
    unsigned set = 0, cx, cz;
    for (const char *p = body; p && (p = strstr(p, "{\"cx\":"));) {
        if (sscanf(p, "{\"cx\":%u,\"cz\":%u", &cx, &cz) == 2 && cx < 4 && cz < 4)
            set |= 1u << (cz * 4 + cx);
        p++;
    }
    return set;
}

static reply post_extend(const char *stroke, const char *query)
{
    char target[64];
    snprintf(target, sizeof target, "/api/stroke%s", query);
    return request("POST", target, NULL, stroke, strlen(stroke), true);
}

static int extend_status(const char *stroke, const char *query)
{
    reply r = post_extend(stroke, query);
    const int status = r.status;
    reply_free(&r);
    return status;
}

static void test_extend(void)
{
    const char *first = "{\"type\":\"raise\",\"radius\":10,\"strength\":2,\"points\":[[40,40]]}";
    const char *longer = "{\"type\":\"raise\",\"radius\":10,\"strength\":2,\"points\":[[40,40],"
                         "[90,40],[150,40]]}";
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    size_t n = 0;
    float *base = get_heights(&n);
    /* Nothing to extend after a generation. */
    reply r = post_extend(longer, "?extend=1");
    CHECK_EQ_INT(r.status, 409);
    reply_free(&r);
    r = post_extend(first, "?extend=0");
    CHECK_EQ_INT(r.status, 200);
    const unsigned first_chunks = reply_chunks(r.body);
    CHECK_EQ_INT(first_chunks, 1u); /* chunk (0, 0) */
    reply_free(&r);
    CHECK_EQ_INT(extend_status(first, "?extend=2"), 400);
    /* A refused extension leaves the stroke it would have replaced. */
    float *one = get_heights(&n);
    r = post_extend("{\"type\":\"raise\",\"radius\":-1,\"points\":[[1,1]]}", "?extend=1");
    CHECK_EQ_INT(r.status, 400);
    reply_free(&r);
    CHECK(same_heights(one));
    /* The longer stroke replaces the first: both edits' chunks come back. */
    r = post_extend(longer, "?extend=1");
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_INT(reply_chunks(r.body), 1u | 2u | 4u);
    CHECK_CONTAINS(r.body, "\"can_undo\":true,\"can_redo\":false");
    reply_free(&r);
    /* A shorter one again: it changes chunk (0, 0) only, but (1, 0) and (2, 0) change back. */
    r = post_extend(first, "?extend=1");
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_INT(reply_chunks(r.body), 1u | 2u | 4u);
    reply_free(&r);
    CHECK(same_heights(one));
    r = post_extend(longer, "?extend=1");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    float *extended = get_heights(&n);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"edits\":[{\"points\":[[40,40],[90,40],[150,40]],");
    reply_free(&r);
    /* One history entry: one undo gives the generated heights. */
    CHECK_EQ_INT(status_of("POST", "/api/undo", NULL, true), 200);
    CHECK(same_heights(base));
    /* Undone: nothing to extend, also after a redo. */
    CHECK_EQ_INT(extend_status(longer, "?extend=1"), 409);
    CHECK_EQ_INT(status_of("POST", "/api/redo", NULL, true), 200);
    CHECK(same_heights(extended));
    CHECK_EQ_INT(extend_status(longer, "?extend=1"), 409);
    /* The same stroke applied once gives the same heights bit for bit. */
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    r = post_stroke(longer);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    CHECK(same_heights(extended));
    free(base);
    free(one);
    free(extended);
}

static void test_water_grid(void)
{
    /* No published water: no bodies, every sample dry. */
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    reply r = request("GET", "/api/water/bodies", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.body && strcmp(r.body, "{\"bodies\":[]}") == 0);
    reply_free(&r);
    r = request("GET", "/api/water/grid", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.size, 129 * 129 * 4);
    size_t finite = 0;
    for (size_t k = 0; k < 129 * 129 && r.size == 129 * 129 * 4; k++) {
        float v;
        memcpy(&v, r.body + 4 * k, 4);
        finite += !isnan(v);
    }
    CHECK_EQ_INT(finite, 0);
    reply_free(&r);
    r = request("GET", "/api/water/index", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.size, 129 * 129);
    CHECK_CONTAINS(r.head, "X-Terrane-Index-Bytes: 1");
    CHECK(r.size == 129 * 129 && r.body[0] == (char)255 && r.body[129 * 129 - 1] == (char)255);
    reply_free(&r);

    /* An ocean at 10 m: wet exactly where the ground is below it, its surface 10 there. */
    CHECK_EQ_INT(reset_to(water_recipe), 200);
    int status = 0;
    json_t *o = get_json("GET", "/api/water/bodies", NULL, &status);
    CHECK_EQ_INT(status, 200);
    json_t *b = json_array_get(json_object_get(o, "bodies"), 0);
    CHECK_EQ_INT(json_array_size(json_object_get(o, "bodies")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "index")), 0);
    CHECK(strcmp(json_string_value(json_object_get(b, "name")), "sea") == 0);
    CHECK(strcmp(json_string_value(json_object_get(b, "kind")), "ocean") == 0);
    CHECK(json_number_value(json_object_get(b, "level")) == 10.0);
    char *colors = json_dumps(json_object_get(b, "shallow_color"), JSON_COMPACT);
    CHECK(colors &&
          strcmp(colors, "[0.10000000000000001,0.45000000000000001,0.5,0.34999999999999998]") == 0);
    free(colors);
    CHECK_EQ_INT(json_array_size(json_object_get(b, "deep_color")), 4);
    CHECK(json_number_value(json_object_get(b, "absorption_distance")) == 4.0);
    const json_int_t wet_samples = json_integer_value(json_object_get(b, "wet_samples"));
    json_decref(o);
    size_t n = 0;
    float *h = get_heights(&n);
    r = request("GET", "/api/water/grid", NULL, NULL, 0, true);
    reply idx = request("GET", "/api/water/index", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.head, "X-Terrane-Samples: 129,129");
    CHECK_CONTAINS(idx.head, "X-Terrane-Index-Bytes: 1");
    size_t wet = 0, wrong = 0;
    for (size_t k = 0; k < 129 * 129 && r.size == 129 * 129 * 4 && idx.size == 129 * 129; k++) {
        float v;
        memcpy(&v, r.body + 4 * k, 4);
        const bool is_wet = !isnan(v);
        wet += is_wet;
        wrong += is_wet != (h[k] < 10.0f) || (is_wet && v != 10.0f) ||
                 (uint8_t)idx.body[k] != (is_wet ? 0u : 255u);
    }
    CHECK(wet > 0);
    CHECK_EQ_INT(wet, (size_t)wet_samples);
    CHECK_EQ_INT(wrong, 0);
    reply_free(&r);
    reply_free(&idx);
    free(h);
    CHECK_EQ_INT(status_of("POST", "/api/water/grid", NULL, true), 405);
    CHECK_EQ_INT(status_of("GET", "/api/water/other", NULL, true), 404);
    /* Back to the file on disk for the tests after. */
    CHECK_EQ_INT(status_of("POST", "/api/generate", NULL, true), 200);
}

/* More bodies than one byte can name (300 lakes of a few samples each, chained): the index is
 * two bytes a sample, every wet sample names its own body (none reads as dry or wraps onto
 * another), dry is 0xFFFF. */
static void test_water_index_many_bodies(void)
{
    enum { lakes = 300, cols = 20 };
    const size_t cap = 400 * lakes + 2048;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text) return;
    size_t n = (size_t)snprintf(
        text, cap,
        "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 11, \"default_landform\": "
        "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 40}}, \"default_biome\": "
        "\"g\", \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}, \"graph\": "
        "{\"format_version\": 1, \"output\": \"output\", \"nodes\": [{\"id\": \"land\", "
        "\"type\": \"landform\"}");
    for (int k = 0; k < lakes && n < cap; k++) {
        char from[16];
        snprintf(from, sizeof from, k ? "l%d" : "land", k - 1);
        n += (size_t)snprintf(text + n, cap - n,
                              ", {\"id\": \"l%d\", \"type\": \"water_body\", \"params\": "
                              "{\"level\": 1000, \"center\": [%d, %d], \"radius\": 3}, "
                              "\"inputs\": {\"field\": {\"node\": \"%s\", \"pin\": \"field\"}%s%s%s}}",
                              k, 8 + 12 * (k % cols), 8 + 12 * (k / cols), from,
                              k ? ", \"water\": {\"node\": \"" : "", k ? from : "",
                              k ? "\", \"pin\": \"water\"}" : "");
    }
    if (n < cap)
        n += (size_t)snprintf(text + n, cap - n,
                          ", {\"id\": \"output\", \"type\": \"terrain_output\", \"inputs\": "
                          "{\"field\": {\"node\": \"l%d\", \"pin\": \"field\"}, \"water\": "
                          "{\"node\": \"l%d\", \"pin\": \"water\"}}}]}}",
                          lakes - 1, lakes - 1);
    CHECK(n < cap);
    CHECK_EQ_INT(reset_to(text), 200);
    free(text);

    int status = 0;
    json_t *o = get_json("GET", "/api/water/bodies", NULL, &status);
    const json_t *bodies = json_object_get(o, "bodies");
    CHECK_EQ_INT(json_array_size(bodies), lakes);
    json_int_t expected[lakes] = {0};
    for (size_t k = 0; k < json_array_size(bodies) && k < lakes; k++)
        expected[k] = json_integer_value(json_object_get(json_array_get(bodies, k), "wet_samples"));
    json_decref(o);
    CHECK(expected[0] > 0 && expected[255] > 0 && expected[lakes - 1] > 0);

    reply grid = request("GET", "/api/water/grid", NULL, NULL, 0, true);
    reply idx = request("GET", "/api/water/index", NULL, NULL, 0, true);
    CHECK_EQ_INT(idx.status, 200);
    CHECK_CONTAINS(idx.head, "X-Terrane-Index-Bytes: 2");
    CHECK_EQ_INT(idx.size, 129 * 129 * 2);
    json_int_t counted[lakes] = {0};
    size_t wrong = 0;
    for (size_t k = 0; k < 129 * 129 && grid.size == 129 * 129 * 4 && idx.size == 129 * 129 * 2;
         k++) {
        float v;
        memcpy(&v, grid.body + 4 * k, 4);
        const unsigned body = (unsigned)(uint8_t)idx.body[2 * k] |
                              (unsigned)(uint8_t)idx.body[2 * k + 1] << 8;
        if (isnan(v))
            wrong += body != 0xFFFFu;
        else if (body < lakes)
            counted[body]++;
        else
            wrong++;
    }
    CHECK_EQ_INT(wrong, 0);
    for (int k = 0; k < lakes; k++) CHECK_EQ_INT(counted[k], expected[k]);
    reply_free(&grid);
    reply_free(&idx);
    CHECK_EQ_INT(status_of("POST", "/api/generate", NULL, true), 200);
}

/* A graph with errors: refused with every diagnostic located, unless --allow-errors. */
static void test_graph_errors(void)
{
    char bad[800];
    snprintf(bad, sizeof bad, "%s/bad.json", project);
    const char *text =
        "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 11, \"default_landform\": "
        "\"hills\",\n \"landforms\": {\"hills\": {\"height_variation\": 40}}, \"default_biome\": "
        "\"g\",\n \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}},\n \"graph\": "
        "{\"format_version\": 1, \"output\": \"output\", \"nodes\": [\n"
        "  {\"id\": \"land\", \"type\": \"landform\", \"params\": {\"bogus\": 1}},\n"
        "  {\"id\": \"output\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"land\"}, \"mask\": {\"node\": \"land\"}}}]}}\n";
    CHECK(trn_test_write_file(bad, text, strlen(text)));
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("studio '%s' --port 0", &out, &err, bad), 1);
    char where[1200];
    snprintf(where, sizeof where,
             "%s:5:49: error: node 'land' (landform): unknown key 'bogus' in nodes[0].params "
             "(expected one of: landform)",
             bad);
    CHECK_CONTAINS(err, where);
    snprintf(where, sizeof where,
             "%s:6:92: error: node 'output' (terrain_output): no input pin "
             "'mask'",
             bad);
    CHECK_CONTAINS(err, where);
    CHECK_CONTAINS(err, "the graph has 2 errors");
    CHECK(out && !strstr(out, "http://"));
    free(out), free(err);
    if (!serve_with(bad, "--allow-errors")) {
        CHECK(!"terrane studio --allow-errors starts");
        return;
    }
    reply r = request("GET", "/api/check", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"errors\":2");
    CHECK_CONTAINS(r.body, "\"line\":5,\"column\":49");
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/heights", NULL, true), 200);
    CHECK_EQ_INT(status_of("POST", "/api/save", NULL, true), 409);
    /* Nor is it autosaved: its recipe lacks the file's graph. */
    r = post_stroke("{\"type\":\"raise\",\"radius\":9,\"points\":[[60,60]]}");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    pause_ms(1600);
    char recovery[900];
    snprintf(recovery, sizeof recovery, "%s.recovery", bad);
    CHECK(!trn_test_exists(recovery));
    /* Fixed on disk and generated: saving works again. */
    CHECK(trn_test_write_file(bad, recipe_text, strlen(recipe_text)));
    CHECK_EQ_INT(status_of("POST", "/api/generate", NULL, true), 200);
    CHECK_EQ_INT(status_of("POST", "/api/save", NULL, true), 200);
    CHECK(stop_server());
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int open_idle(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void test_slow_clients(void)
{
    /* 24 connections that never finish their headers (one trickles a byte now and then) do not
     * lock the page out: past 8 waiting, the oldest is closed, and a request with the token is
     * served at once. */
    int idle[24];
    pause_ms(500);
    for (int k = 0; k < 24; k++) {
        idle[k] = open_idle();
        if (idle[k] >= 0 && k % 3 == 0) send(idle[k], "GET / HTTP/1.1\r\nHo", 19, MSG_NOSIGNAL);
    }
    pause_ms(300);
    CHECK_EQ_INT(status_of("GET", "/api/state", NULL, true), 200);
    CHECK_EQ_INT(status_of("GET", "/app.js", NULL, false), 200);
    /* At most 8 of them are still open. */
    int open_count = 0;
    for (int k = 0; k < 24; k++) {
        char c;
        struct timeval tv = {0, 200000};
        setsockopt(idle[k], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        const ssize_t got = recv(idle[k], &c, 1, 0);
        open_count += got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    CHECK(open_count <= 8);
    for (int k = 0; k < 24; k++)
        close(idle[k]);
    /* The page's files need no token: 70 requests for them (more than the 64 connections)
     * whose headers are complete but whose bodies trickle would hold every connection busy.
     * Each is refused at its headers and closed; the page with the token is served. */
    enum { bodies = 70 };
    int trickle[bodies];
    int refused = 0;
    for (int k = 0; k < bodies; k++) {
        trickle[k] = open_idle();
        char head[256];
        snprintf(head, sizeof head,
                 "%s /%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 100000\r\n\r\nx",
                 k % 2 ? "POST" : "GET", k % 3 ? "app.js" : "style.css", port);
        if (trickle[k] >= 0) send(trickle[k], head, strlen(head), MSG_NOSIGNAL);
    }
    CHECK_EQ_INT(status_of("GET", "/api/state", NULL, true), 200);
    CHECK_EQ_INT(status_of("GET", "/app.js", NULL, false), 200);
    for (int k = 0; k < bodies; k++) {
        /* The refusal, then the end of the connection (recv 0), within 5 s (once one was
         * not, 0.2 s: the test has failed, it need not wait for each). */
        char buf[2048];
        size_t len = 0;
        ssize_t got = 0;
        struct timeval tv = {refused == k ? 5 : 0, refused == k ? 0 : 200000};
        setsockopt(trickle[k], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        while (len + 1 < sizeof buf && (got = recv(trickle[k], buf + len, sizeof buf - 1 - len, 0)) > 0)
            len += (size_t)got;
        buf[len] = '\0';
        /* Closed: refused at its headers, or (past the 8 waiting for their headers to be
         * read) shut before they were, without a word. Never held open. */
        const bool was_refused = got == 0 && (len == 0 || strncmp(buf, "HTTP/1.1 40", 11) == 0);
        if (!was_refused)
            fprintf(stderr, "connection %d: got %zd, errno %d, %zu bytes: %.80s\n", k, got, errno,
                    len, buf);
        refused += was_refused;
        close(trickle[k]);
    }
    CHECK_EQ_INT(refused, bodies);
    /* One slow client alone, trickling a header byte every second, is closed once its request
     * has taken 10 s. */
    int slow = open_idle();
    bool closed = false;
    for (int t = 0; t < 14 && !closed; t++) {
        closed = send(slow, "G", 1, MSG_NOSIGNAL) < 0;
        char c;
        struct timeval tv = {1, 0};
        setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        closed = closed || recv(slow, &c, 1, 0) == 0;
    }
    CHECK(closed);
    close(slow);
    /* A request without the token is answered and its connection closed at once (the client
     * asked to keep it alive). */
    char head[256];
    snprintf(head, sizeof head, "GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    reply r = send_raw(head, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_EQ_INT(r.status, 401);
    CHECK(t1.tv_sec - t0.tv_sec < 3);
    reply_free(&r);
}

static void test_stop(void)
{
    /* Ctrl-C stops the server cleanly (exit 0). */
    CHECK(stop_server());
    CHECK_EQ_INT(status_of("GET", "/app.js", NULL, false), 0);
}

/* A project folder: its one Terrain asset source is edited, and Save keeps the document's id. */
static void test_project(void)
{
    char dir[800], asset[900], other[900];
    snprintf(dir, sizeof dir, "%s/assets", root);
    snprintf(asset, sizeof asset, "%s/land.terrain.json", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format_version\": 1, \"id\": \"asset://terrain/land\", "
             "\"recipe\": %s}\n",
             recipe_text);
    CHECK(trn_test_write_file(asset, text, strlen(text)));
    if (!serve(dir)) {
        CHECK(!"terrane studio serves a project folder");
        return;
    }
    const char *stroke = "{\"type\": \"lower\", \"radius\": 9, \"center\": [100, 60]}";
    reply r = request("POST", "/api/stroke", NULL, stroke, strlen(stroke), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    size_t count = 0;
    float *heights = get_heights(&count);
    CHECK_EQ_INT(status_of("POST", "/api/save", NULL, true), 200);
    uint8_t *saved = trn_test_read_file(asset, &(size_t){0});
    CHECK_CONTAINS((const char *)saved, "\"id\": \"asset://terrain/land\"");
    CHECK_CONTAINS((const char *)saved, "\"lower\"");
    free(saved);
    CHECK(stop_server());
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/asset.r32' -q", &out, &err, asset, root),
                 0);
    free(out), free(err);
    snprintf(other, sizeof other, "%s/asset.r32", root);
    size_t size = 0;
    uint8_t *generated = trn_test_read_file(other, &size);
    bool equal = generated && size == count * sizeof(float) && count == 129 * 129;
    for (size_t j = 0; j < 129 && equal; j++)
        equal = memcmp(generated + (128 - j) * 129 * 4, &heights[j * 129], 129 * 4) == 0;
    CHECK(equal);
    free(generated);
    free(heights);
    /* Two sources: the folder does not say which to edit. */
    snprintf(other, sizeof other, "%s/second.terrain.json", dir);
    CHECK(trn_test_write_file(other, text, strlen(text)));
    out = err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("studio '%s' --port 0", &out, &err, dir), 1);
    CHECK_CONTAINS(err, "2 Terrain asset sources");
    free(out), free(err);
}

/* GET /api/state as JSON (NULL on failure). */
static json_t *get_state(void)
{
    reply r = request("GET", "/api/state", NULL, NULL, 0, true);
    json_error_t je;
    json_t *o = r.status == 200 ? json_loads(r.body, 0, &je) : NULL;
    reply_free(&r);
    return o;
}

static bool state_is(const char *key, bool want)
{
    json_t *o = get_state();
    const bool ok = o && json_is_boolean(json_object_get(o, key)) &&
                    json_is_true(json_object_get(o, key)) == want;
    json_decref(o);
    return ok;
}

static int post(const char *target, const char *body)
{
    reply r = request("POST", target, NULL, body, body ? strlen(body) : 0, true);
    const int st = r.status;
    reply_free(&r);
    return st;
}

/* A recipe as people write it: keys in their order, a default spelled out, one stroke per line. */
static const char *const laid_out =
    "{\n"
    "  \"seed\": 11,\n"
    "  \"size\": [256, 256],\n"
    "  \"resolution\": [128, 128],\n"
    "  \"chunk_cells\": 32,\n"
    "  \"default_landform\": \"hills\",\n"
    "  \"landforms\": {\n"
    "    \"hills\": {\"height_variation\": 40, \"octaves\": 6}\n"
    "  },\n"
    "  \"default_biome\": \"g\",\n"
    "  \"biomes\": {\n"
    "    \"s\": {\"color\": [0.9, 0.8, 0.5, 1]},\n"
    "    \"g\": {\"color\": [0.2, 0.6, 0.2, 1]}\n"
    "  },\n"
    "  \"edits\": [\n"
    "    {\"type\": \"raise\", \"radius\": 12, \"strength\": 1, \"points\": [[40, 40]]}\n"
    "  ]\n"
    "}\n";

/* True when after is before with one run of bytes inserted (nothing removed or changed). */
static bool only_inserted(const char *before, const char *after)
{
    const size_t a = strlen(before), b = strlen(after);
    size_t pre = 0, suf = 0;
    while (pre < a && pre < b && before[pre] == after[pre])
        pre++;
    while (suf < a - pre && suf < b - pre && before[a - 1 - suf] == after[b - 1 - suf])
        suf++;
    return pre + suf == a && b > a;
}

static void write_laid_out(const char *dir, char *path, size_t size)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, size, "%s/land.json", dir);
    CHECK(trn_test_write_file(path, laid_out, strlen(laid_out)));
}

static void test_unsaved_and_minimal_save(void)
{
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/saving", root);
    write_laid_out(dir, path, sizeof path);
    if (!serve(path)) {
        CHECK(!"terrane studio serves the laid-out recipe");
        return;
    }
    CHECK(state_is("dirty", false));
    /* A stroke makes the session unsaved; its undo makes it saved again; redo unsaved. */
    CHECK_EQ_INT(post("/api/stroke",
                      "{\"type\": \"lower\", \"radius\": 9, \"points\": [[100, 60], [110, 60]]}"),
                 200);
    CHECK(state_is("dirty", true));
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    CHECK(state_is("dirty", false));
    CHECK_EQ_INT(post("/api/redo", NULL), 200);
    CHECK(state_is("dirty", true));
    /* A stroke wholly outside the terrain is no history step. */
    const char *outside =
        "{\"type\": \"raise\", \"radius\": 9, \"points\": [[-50, 60], [300, 300]]}";
    reply r = request("POST", "/api/stroke", NULL, outside, strlen(outside), true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"ignored\"");
    CHECK_CONTAINS(r.body, "\"chunks\":[]");
    reply_free(&r);
    CHECK_EQ_INT(post("/api/undo", NULL), 200); /* undoes the lower stroke, not the outside one */
    CHECK(state_is("can_undo", false));
    CHECK_EQ_INT(post("/api/redo", NULL), 200);
    /* The edit reply's layers count the strokes. */
    const char *third = "{\"type\": \"raise\", \"radius\": 9, \"points\": [[150, 150]]}";
    r = request("POST", "/api/stroke", NULL, third, strlen(third), true);
    CHECK_CONTAINS(r.body,
                   "\"name\":\"sculpt\",\"group\":\"sculpt\",\"enabled\":true,\"strokes\":3");
    reply_free(&r);
    /* Save adds the two strokes and nothing else: the file's order, layout and the default it
     * spells out stay, byte for byte. */
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    CHECK(state_is("dirty", false));
    char *saved = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK(saved && only_inserted(laid_out, saved));
    CHECK_CONTAINS(
        saved, "    {\"type\": \"lower\", \"radius\": 9, \"points\": [[100, 60], [110, 60]]},\n");
    CHECK_CONTAINS(saved, "\"chunk_cells\": 32");
    /* A layer switched off: the file gains a "layers" member after its last one, nothing else;
     * switched on again, Save gives back the text before, byte for byte. */
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": false}"), 200);
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    char *layered = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK(layered && saved && only_inserted(saved, layered));
    CHECK_CONTAINS(layered, "\"layers\": [");
    free(layered);
    CHECK_EQ_INT(post_layer("{\"name\": \"sculpt\", \"enabled\": true}"), 200);
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    char *back = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK(back && saved && strcmp(back, saved) == 0);
    free(back);
    free(saved);
    CHECK(stop_server());
    /* The saved file generates what it did in the studio (a read-back check in the server). */
}

/* Generate and layer switches are steps of the one history: the strokes before them stay
 * undoable (regenerated from the recipe before), and Generate from disk is clean. */
static void test_history_across_generations(void)
{
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/history", root);
    write_laid_out(dir, path, sizeof path);
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe");
        return;
    }
    size_t n = 0;
    float *loaded = get_heights(&n);
    CHECK_EQ_INT(
        post("/api/stroke",
             "{\"type\": \"lower\", \"radius\": 20, \"strength\": 4, \"points\": [[100, 60]]}"),
        200);
    float *stroked = get_heights(&n);
    CHECK_EQ_INT(post("/api/generate", NULL), 200); /* the file: the stroke goes */
    CHECK(state_is("dirty", false) && state_is("can_undo", true));
    CHECK(same_heights(loaded));
    reply r = request("POST", "/api/undo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"regenerated\":true");
    CHECK_CONTAINS(r.body, "\"dirty\":true");
    reply_free(&r);
    CHECK(same_heights(stroked)); /* the stroke is back, bit for bit */
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    CHECK(same_heights(loaded));
    CHECK(state_is("dirty", false) && state_is("can_undo", false));
    CHECK_EQ_INT(post("/api/redo", NULL), 200);
    CHECK(same_heights(stroked));
    CHECK_EQ_INT(post("/api/redo", NULL), 200);
    CHECK(same_heights(loaded));
    CHECK(state_is("can_redo", false) && state_is("dirty", false));
    free(loaded);
    free(stroked);
    CHECK(stop_server());
}

static void test_disk_changes(void)
{
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/disk", root);
    write_laid_out(dir, path, sizeof path);
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe");
        return;
    }
    CHECK_EQ_INT(
        post("/api/stroke", "{\"type\": \"lower\", \"radius\": 9, \"points\": [[100, 60]]}"), 200);
    /* Touched without a change: no conflict. */
    pause_ms(20);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "touch '%s'", path);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK(state_is("disk_changed", false));
    /* The seed edited on disk: noticed, and Save refuses to write 11 back over 8. */
    char *text = strdup(laid_out);
    memcpy(strstr(text, "11,"), "8, ", 3);
    CHECK(trn_test_write_file(path, text, strlen(text)));
    CHECK(state_is("disk_changed", true));
    reply r = request("POST", "/api/save", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 409);
    CHECK_CONTAINS(r.body, "changed on disk since the studio loaded it");
    CHECK_CONTAINS(r.body, "\"conflict\":true");
    reply_free(&r);
    char *now = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK(now && strcmp(now, text) == 0);
    free(now);
    /* A broken edit: the state and the graph check say where. */
    char *broken = strdup(laid_out);
    memcpy(strstr(broken, "\"seed\": 11,"), "\"seed\": 11,,", 12);
    CHECK(trn_test_write_file(path, broken, strlen(broken)));
    json_t *st = get_state();
    const json_t *de = json_object_get(st, "disk_error");
    CHECK_EQ_INT(json_integer_value(json_object_get(de, "line")), 2);
    CHECK(json_integer_value(json_object_get(de, "column")) > 10);
    json_decref(st);
    r = request("GET", "/api/check", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"line\":2");
    CHECK_CONTAINS(r.body, "\"errors\":1");
    reply_free(&r);
    /* Generate of the broken file: refused with its line and column; the session stays. */
    r = request("POST", "/api/generate", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 400);
    CHECK_CONTAINS(r.body, "\"line\":2");
    reply_free(&r);
    CHECK(state_is("dirty", true));
    /* Fixed on disk (seed 8): Save anyway writes the session over it (seed 11 and the stroke). */
    CHECK(trn_test_write_file(path, text, strlen(text)));
    CHECK_EQ_INT(post("/api/save?force=1", NULL), 200);
    now = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK_CONTAINS(now, "\"seed\": 11,");
    CHECK_CONTAINS(now, "\"lower\"");
    free(now);
    CHECK(state_is("disk_changed", false));
    /* Generate loads the file as it is now: clean, its seed. */
    CHECK(trn_test_write_file(path, text, strlen(text)));
    CHECK_EQ_INT(post("/api/generate", NULL), 200);
    CHECK(state_is("dirty", false));
    CHECK(state_is("disk_changed", false));
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"seed\":8");
    reply_free(&r);
    /* The file regridded on disk, its stroke kept: Generate loads it as it is (no keep-or-clear
     * question: the file says where its strokes are), and undo goes back to the old grid. */
    char *regridded = replaced(text, "\"resolution\": [128, 128]", "\"resolution\": [64, 64]");
    CHECK(trn_test_write_file(path, regridded, strlen(regridded)));
    r = request("POST", "/api/generate", NULL, NULL, 0, true);
    if (r.status != 200) fprintf(stderr, "regridded generate: %d %s\n", r.status, r.body);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"resolution\":[64,64]");
    CHECK_CONTAINS(r.body, "\"raise\"");
    reply_free(&r);
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"resolution\":[128,128]");
    reply_free(&r);
    free(regridded);
    free(text);
    free(broken);
    CHECK(stop_server());
}

static void test_recovery(void)
{
    char dir[800], path[900], recovery[1000];
    snprintf(dir, sizeof dir, "%s/recovery", root);
    write_laid_out(dir, path, sizeof path);
    snprintf(recovery, sizeof recovery, "%s.recovery", path);
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe");
        return;
    }
    CHECK_EQ_INT(
        post("/api/stroke", "{\"type\": \"lower\", \"radius\": 9, \"points\": [[100, 60]]}"), 200);
    /* Within about a second the unsaved work is beside the recipe; the recipe is untouched. */
    bool there = false;
    for (int k = 0; k < 40 && !there; k++) {
        pause_ms(100);
        there = trn_test_exists(recovery);
    }
    CHECK(there);
    char *file = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK(file && strcmp(file, laid_out) == 0);
    free(file);
    char *rec = (char *)trn_test_read_file(recovery, &(size_t){0});
    CHECK(rec && strstr(rec, "\"lower\""));
    free(rec);
    /* Stopped without saving: the next start offers it; restoring brings the stroke back. */
    CHECK(stop_server());
    CHECK(trn_test_exists(recovery));
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe again");
        return;
    }
    json_t *st = get_state();
    CHECK(json_is_string(json_object_get(st, "recovery")));
    CHECK(!json_is_true(json_object_get(st, "dirty")));
    json_decref(st);
    CHECK_EQ_INT(post("/api/recovery", "{\"restore\": true}"), 200);
    CHECK(state_is("dirty", true));
    reply r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"lower\"");
    reply_free(&r);
    /* Saving makes the recovery file go. */
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    CHECK(!trn_test_exists(recovery));
    CHECK_EQ_INT(post("/api/recovery", "{\"restore\": true}"), 404);
    CHECK(stop_server());
}

static void test_symlinks(void)
{
    char dir[800], path[900], link[1000], outside[1000], cmd[3200];
    snprintf(dir, sizeof dir, "%s/linked", root);
    write_laid_out(dir, path, sizeof path);
    /* A link inside the project: Save writes through it, the link stays a link. */
    snprintf(link, sizeof link, "%s/alias.json", dir);
    snprintf(cmd, sizeof cmd, "ln -s land.json '%s'", link);
    CHECK_EQ_INT(system(cmd), 0);
    if (!serve(link)) {
        CHECK(!"terrane studio opens a link inside the project");
        return;
    }
    CHECK_EQ_INT(
        post("/api/stroke", "{\"type\": \"lower\", \"radius\": 9, \"points\": [[100, 60]]}"), 200);
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    CHECK(stop_server());
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    char *saved = (char *)trn_test_read_file(path, &(size_t){0});
    CHECK(saved && strstr(saved, "\"lower\""));
    free(saved);
    /* A link to a file outside the project folder is refused at open. */
    snprintf(outside, sizeof outside, "%s/inner", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s ../land.json '%s/out.json'", outside,
             outside);
    CHECK_EQ_INT(system(cmd), 0);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("studio '%s/out.json' --port 0", &out, &err, outside), 1);
    CHECK_CONTAINS(err, "outside the project folder");
    free(out), free(err);
}

static void test_open_without_token_on_command_line(void)
{
    /* --open hands xdg-open a private file that redirects: the token is on no command line. */
    char bin[800], script[900], log[900], cmd[2000], body[3000];
    snprintf(bin, sizeof bin, "%s/fakebin", root);
    snprintf(script, sizeof script, "%s/xdg-open", bin);
    snprintf(log, sizeof log, "%s/xdg-open.log", root);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", bin);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(body, sizeof body,
             "#!/bin/sh\necho \"ARGS $*\" >>'%s'\nstat -c 'MODE %%a' \"$1\" >>'%s'\n"
             "cat \"$1\" >>'%s'\n",
             log, log, log);
    CHECK(trn_test_write_file(script, body, strlen(body)));
    CHECK_EQ_INT(chmod(script, 0755), 0);
    const char *old_path = getenv("PATH");
    char *saved_path = strdup(old_path ? old_path : "/usr/bin:/bin");
    char path_env[4096];
    snprintf(path_env, sizeof path_env, "%s:%s", bin, saved_path);
    setenv("PATH", path_env, 1);
    const bool up = serve_with(recipe_path, "--open");
    setenv("PATH", saved_path, 1);
    free(saved_path);
    CHECK(up);
    char *text = NULL;
    for (int k = 0; k < 50 && !(text && strstr(text, "</a>")); k++) {
        pause_ms(100);
        free(text);
        text = (char *)trn_test_read_file(log, &(size_t){0});
    }
    CHECK(text && strstr(text, "ARGS /"));
    const char *args_end = text ? strchr(text, '\n') : NULL;
    CHECK(args_end && !memmem(text, (size_t)(args_end - text), token, strlen(token)));
    CHECK_CONTAINS(text, "MODE 600");
    CHECK_CONTAINS(text, token);
    free(text);
    CHECK(stop_server());
}

/* Two pages: a change made by one reaches the other's event stream as "others". */
static void test_sync_events(void)
{
    if (!serve(recipe_path)) {
        CHECK(!"terrane studio serves the recipe");
        return;
    }
    int fd = open_idle();
    char head[512], buf[8192];
    snprintf(head, sizeof head,
             "GET /api/events?token=%s&client=pageB HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", token,
             port);
    send(fd, head, strlen(head), MSG_NOSIGNAL);
    CHECK(read_until(fd, "text/event-stream", buf, sizeof buf));
    const char *lower = "{\"type\": \"lower\", \"radius\": 9, \"points\": [[100, 60]]}";
    reply r =
        request("POST", "/api/stroke", "X-Terrane-Client: pageA\r\n", lower, strlen(lower), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    CHECK(read_until(fd, "\"others\":true}", buf, sizeof buf));
    CHECK_CONTAINS(buf, "event: state");
    CHECK_CONTAINS(buf, "\"revision\":1");
    /* Its own change is not "others" to page B. */
    r = request("POST", "/api/undo", NULL, NULL, 0, true);
    reply_free(&r);
    r = request("POST", "/api/redo", "X-Terrane-Client: pageB\r\n", NULL, 0, true);
    reply_free(&r);
    CHECK(read_until(fd, "\"revision\":3", buf, sizeof buf));
    close(fd);
    CHECK(stop_server());
}

/* The shared history keeps the newest 256 steps (each with its recipe): the oldest go. */
static void test_history_limit(void)
{
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/limit", root);
    write_laid_out(dir, path, sizeof path);
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe");
        return;
    }
    bool all = true;
    for (int k = 0; k < 258 && all; k++) {
        char body[160];
        snprintf(body, sizeof body,
                 "{\"type\": \"raise\", \"radius\": 3, \"strength\": 0.5, \"points\": "
                 "[[%d, %d]]}",
                 10 + (k % 23) * 10, 10 + (k / 23) * 20);
        all = post("/api/stroke", body) == 200;
    }
    CHECK(all);
    int undone = 0;
    while (undone < 300 && post("/api/undo", NULL) == 200)
        undone++;
    CHECK_EQ_INT(undone, 256);
    /* Back at the oldest kept step: the file's stroke and the first two remain. */
    reply r = request("GET", "/api/layers", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body,
                   "\"name\":\"sculpt\",\"group\":\"sculpt\",\"enabled\":true,\"strokes\":3");
    reply_free(&r);
    CHECK(state_is("can_undo", false) && state_is("can_redo", true));
    CHECK(stop_server());
}

/* The shipped project (a scene with a Terrain3D recipe) opens, and Save edits the scene in place.
 */
static void test_example_project(void)
{
    char dir[800], cmd[2000], scene[900];
    snprintf(dir, sizeof dir, "%s/example-project", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s/examples/project' '%s'", dir,
             TRN_SOURCE_DIR, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(scene, sizeof scene, "%s/world.scene.json", dir);
    char *before = (char *)trn_test_read_file(scene, &(size_t){0});
    if (!serve(dir)) {
        CHECK(!"terrane studio opens examples/project");
        free(before);
        return;
    }
    reply r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"seed\":11");
    reply_free(&r);
    CHECK_EQ_INT(
        post("/api/stroke", "{\"type\": \"lower\", \"radius\": 20, \"points\": [[300, 300]]}"),
        200);
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    char *after = (char *)trn_test_read_file(scene, &(size_t){0});
    CHECK(before && after && only_inserted(before, after));
    CHECK_CONTAINS(after, "\"lower\"");
    free(before);
    free(after);
    CHECK(stop_server());
    /* The other shipped project folders: terrain_3d's scene places two Terrain assets by
     * reference (the first, landscape, opens); terrain_graph_3d has no scene and its one Terrain
     * asset source a folder down. Save edits that source in place. */
    static const struct {
        const char *folder, *source, *seed;
    } examples[] = {{"terrain_3d", "terrain/landscape.terrain.json", "\"seed\":5"},
                    {"terrain_graph_3d", "terrain/landscape.terrain.json", "\"seed\":31"}};
    for (size_t k = 0; k < sizeof examples / sizeof examples[0]; k++) {
        char source[1000];
        snprintf(dir, sizeof dir, "%s/example-%s", root, examples[k].folder);
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s/examples/%s' '%s'", dir,
                 TRN_SOURCE_DIR, examples[k].folder, dir);
        CHECK_EQ_INT(system(cmd), 0);
        snprintf(source, sizeof source, "%s/%s", dir, examples[k].source);
        char *text = (char *)trn_test_read_file(source, &(size_t){0});
        if (!serve(dir)) {
            fprintf(stderr, "FAIL terrane studio opens examples/%s\n", examples[k].folder);
            CHECK(!"terrane studio opens the example folder");
            free(text);
            continue;
        }
        r = request("GET", "/api/recipe", NULL, NULL, 0, true);
        CHECK_EQ_INT(r.status, 200);
        CHECK_CONTAINS(r.body, examples[k].seed);
        reply_free(&r);
        CHECK_EQ_INT(post("/api/stroke",
                          "{\"type\": \"lower\", \"radius\": 20, \"points\": [[300, 300]]}"),
                     200);
        CHECK_EQ_INT(post("/api/save", NULL), 200);
        char *saved = (char *)trn_test_read_file(source, &(size_t){0});
        CHECK(text && saved && only_inserted(text, saved));
        CHECK_CONTAINS(saved, "\"lower\"");
        free(text);
        free(saved);
        CHECK(stop_server());
    }
}

/* Mapped materials: /api/materials gives the material set's mapping, its layers (role bindings,
 * then biome materials) and each sample's layer, the biome's own material first; a recipe
 * whose set has no mapping gets none. */
static void test_mapped_materials(void)
{
    char dir[800], cmd[2000], asset[900];
    snprintf(dir, sizeof dir, "%s/graph-project", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s/examples/terrain_graph_3d' '%s'", dir,
             TRN_SOURCE_DIR, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(asset, sizeof asset, "%s/terrain/landscape.terrain.json", dir);
    if (!serve(asset)) {
        CHECK(!"terrane studio opens examples/terrain_graph_3d");
        return;
    }
    reply r = request("GET", "/api/materials", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    json_error_t je;
    json_t *doc = json_loads(r.body ? r.body : "", 0, &je);
    reply_free(&r);
    const json_t *m = json_object_get(doc, "mapping");
    CHECK(json_is_true(json_object_get(m, "triplanar")));
    CHECK(json_number_value(json_object_get(m, "height_blend_contrast")) == 0.2);
    const json_t *layers = json_object_get(doc, "layers");
    CHECK_EQ_INT((int)json_array_size(layers), 10);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(layers, 9), "material")),
                 "asset://materials/glacier") == 0);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(layers, 9), "source")),
                 "biome") == 0);
    /* Every sample has a layer (all nine roles are bound), decoded from base64. */
    const char *b64 = json_string_value(json_object_get(doc, "samples"));
    CHECK(b64 && strlen(b64) == (129u * 129u + 2u) / 3u * 4u);
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t counts[256] = {0}, n = 0;
    for (size_t k = 0; b64 && b64[k] && b64[k + 1]; k += 4) {
        unsigned v = 0;
        for (int q = 0; q < 4; q++) {
            const char *at = b64[k + q] == '=' ? NULL : strchr(digits, b64[k + q]);
            v = v << 6 | (at ? (unsigned)(at - digits) : 0u);
        }
        for (int q = 0; q < 3 && n < 129u * 129u; q++, n++) counts[(v >> (16 - 8 * q)) & 255u]++;
    }
    CHECK_EQ_INT((int)counts[255], 0);
    CHECK(counts[9] > 0);                       /* the snow biome's glacier */
    CHECK(counts[2] > 0 && counts[0] + counts[1] > 0); /* rock, and soil or grass */
    /* No image maps in the example: every layer says so, and a map is a 404 naming the file. */
    CHECK(json_is_false(json_object_get(json_object_get(json_array_get(layers, 0), "maps"), "albedo")));
    CHECK(json_number_value(json_object_get(json_array_get(layers, 0), "texture_scale")) == 1.0);
    json_decref(doc);
    r = request("GET", "/api/material_map?layer=0&map=albedo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 404);
    CHECK_CONTAINS(r.body, "materials/soil.albedo.png");
    CHECK_CONTAINS(r.body, "no Material document materials/soil.asset.json");
    reply_free(&r);
    CHECK(stop_server());

    /* Image maps: MATERIAL.albedo.png / .height.png in the palette's project (the folder above
     * the recipe's here), served as they are; one linked outside the project is neither offered
     * nor served, a file that is not a PNG is refused, and the arguments are checked. */
    static const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 1, 2, 3};
    char file[1000], outside[900];
    snprintf(file, sizeof file, "%s/materials/soil.albedo.png", dir);
    CHECK(trn_test_write_file(file, png, sizeof png));
    snprintf(file, sizeof file, "%s/materials/rock.height.png", dir);
    CHECK(trn_test_write_file(file, png, sizeof png));
    snprintf(file, sizeof file, "%s/materials/cliff.albedo.png", dir);
    CHECK(trn_test_write_file(file, "not a png", 9));
    snprintf(outside, sizeof outside, "%s/outside.albedo.png", root);
    CHECK(trn_test_write_file(outside, png, sizeof png));
    snprintf(file, sizeof file, "%s/materials/grass.albedo.png", dir);
    CHECK(symlink(outside, file) == 0);
    if (!serve(asset)) {
        CHECK(!"terrane studio opens examples/terrain_graph_3d with image maps");
        return;
    }
    r = request("GET", "/api/materials", NULL, NULL, 0, true);
    doc = json_loads(r.body ? r.body : "", 0, &je);
    reply_free(&r);
    layers = json_object_get(doc, "layers");
    const json_t *soil = json_object_get(json_array_get(layers, 0), "maps"),
                 *grass = json_object_get(json_array_get(layers, 1), "maps"),
                 *rock = json_object_get(json_array_get(layers, 2), "maps");
    CHECK(json_is_true(json_object_get(soil, "albedo")) &&
          json_is_false(json_object_get(soil, "height")));
    CHECK(json_is_false(json_object_get(grass, "albedo")));
    CHECK(json_is_false(json_object_get(rock, "albedo")) &&
          json_is_true(json_object_get(rock, "height")));
    json_decref(doc);
    r = request("GET", "/api/material_map?layer=0&map=albedo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.size == sizeof png && r.body && memcmp(r.body, png, sizeof png) == 0);
    CHECK_CONTAINS(r.head, "image/png");
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=2&map=height", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=1&map=albedo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 404); /* the link outside the project */
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=3&map=albedo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 415);
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=0&map=diffuse", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 400);
    CHECK_CONTAINS(r.body, "expected albedo, normal, roughness, height or emissive");
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=0&map=normal", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 404); /* the older file names give albedo and height only */
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=10&map=albedo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 400);
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=0&map=albedo", NULL, NULL, 0, false);
    CHECK_EQ_INT(r.status, 401); /* the token, as every route */
    reply_free(&r);
    CHECK(stop_server());

    /* Material documents: the soil's maps come from its document (which wins over the older
     * file names beside it), with its texture scale; the rock's document fails and its error,
     * at its line and column, is the layer's note and no map is served; the sand names no
     * normal map. The older file names give a note saying how to move them into a document. */
    char text[600];
    snprintf(file, sizeof file, "%s/materials/soil.asset.json", dir);
    snprintf(text, sizeof text, "{\"type\": \"Material\", \"source\": \"soil.material.json\"}");
    CHECK(trn_test_write_file(file, text, strlen(text)));
    snprintf(file, sizeof file, "%s/materials/soil.material.json", dir);
    snprintf(text, sizeof text,
             "{\"format_version\": 1, \"name\": \"Soil\", \"texture_scale\": 4,\n \"maps\": "
             "{\"normal\": \"maps/soil_n.png\", \"emissive\": \"maps/soil_e.png\"}}");
    CHECK(trn_test_write_file(file, text, strlen(text)));
    snprintf(file, sizeof file, "%s/materials/maps", dir);
    CHECK(mkdir(file, 0755) == 0);
    snprintf(file, sizeof file, "%s/materials/maps/soil_n.png", dir);
    static const uint8_t png2[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 9, 9};
    CHECK(trn_test_write_file(file, png2, sizeof png2));
    snprintf(file, sizeof file, "%s/materials/maps/soil_e.png", dir);
    CHECK(trn_test_write_file(file, png, sizeof png));
    snprintf(file, sizeof file, "%s/materials/rock.asset.json", dir);
    snprintf(text, sizeof text, "{\"type\": \"Material\", \"source\": \"rock.material.json\"}");
    CHECK(trn_test_write_file(file, text, strlen(text)));
    snprintf(file, sizeof file, "%s/materials/rock.material.json", dir);
    snprintf(text, sizeof text,
             "{\"format_version\": 1, \"name\": \"Rock\",\n  \"maps\": {\"albedo\": \"rock_a.png\"}}");
    CHECK(trn_test_write_file(file, text, strlen(text)));
    if (!serve(asset)) {
        CHECK(!"terrane studio opens examples/terrain_graph_3d with Material documents");
        return;
    }
    r = request("GET", "/api/materials", NULL, NULL, 0, true);
    doc = json_loads(r.body ? r.body : "", 0, &je);
    reply_free(&r);
    layers = json_object_get(doc, "layers");
    const json_t *soil_l = json_array_get(layers, 0), *rock_l = json_array_get(layers, 2),
                 *grass_l = json_array_get(layers, 1);
    soil = json_object_get(soil_l, "maps");
    CHECK(json_is_true(json_object_get(soil, "normal")) &&
          json_is_true(json_object_get(soil, "emissive")) &&
          json_is_false(json_object_get(soil, "albedo")) &&
          json_is_false(json_object_get(soil, "roughness")));
    CHECK(json_number_value(json_object_get(soil_l, "texture_scale")) == 4.0);
    CHECK(strcmp(json_string_value(json_object_get(soil_l, "maps_from")), "material") == 0);
    CHECK(strcmp(json_string_value(json_object_get(soil_l, "document")),
                 "materials/soil.material.json") == 0);
    CHECK(json_is_null(json_object_get(soil_l, "note")));
    CHECK(json_is_null(json_object_get(rock_l, "maps_from")));
    CHECK(json_is_false(json_object_get(json_object_get(rock_l, "maps"), "height")));
    const char *rock_note = json_string_value(json_object_get(rock_l, "note"));
    CHECK(rock_note && strstr(rock_note, "rock.material.json:2:22: maps.albedo: the albedo map "
                                         "rock_a.png is missing"));
    CHECK(json_is_null(json_object_get(grass_l, "maps_from"))); /* the link outside */
    const json_t *notes = json_object_get(doc, "notes");
    CHECK_EQ_INT((int)json_array_size(notes), 2); /* the rock's error, the cliff's file names */
    json_decref(doc);
    r = request("GET", "/api/material_map?layer=0&map=normal", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.size == sizeof png2 && r.body && memcmp(r.body, png2, sizeof png2) == 0);
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=0&map=albedo", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 404); /* the document names none: soil.albedo.png beside it is not used */
    CHECK_CONTAINS(r.body, "its Material document materials/soil.material.json names none");
    reply_free(&r);
    r = request("GET", "/api/material_map?layer=2&map=height", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 404); /* the rock's document fails: rock.height.png is not used either */
    CHECK_CONTAINS(r.body, "rock.material.json:2:22");
    reply_free(&r);
    /* with the rock's document gone, its older file name is back, with the advice */
    snprintf(file, sizeof file, "%s/materials/rock.asset.json", dir);
    CHECK(remove(file) == 0);
    r = request("GET", "/api/materials", NULL, NULL, 0, true);
    doc = json_loads(r.body ? r.body : "", 0, &je);
    reply_free(&r);
    rock_l = json_array_get(json_object_get(doc, "layers"), 2);
    CHECK(strcmp(json_string_value(json_object_get(rock_l, "maps_from")), "file names") == 0);
    rock_note = json_string_value(json_object_get(rock_l, "note"));
    CHECK(rock_note && strstr(rock_note, "asset://materials/rock: image maps found by file name "
                                         "(materials/rock.albedo.png, .height.png); describe them "
                                         "in a Material document instead"));
    json_decref(doc);
    r = request("GET", "/api/material_map?layer=2&map=height", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    CHECK(stop_server());

    /* No mapping: nothing to draw layer by layer. */
    char plain[800];
    snprintf(plain, sizeof plain, "%s/plain.json", root);
    CHECK(trn_test_write_file(plain, recipe_text, strlen(recipe_text)));
    if (!serve(plain)) {
        CHECK(!"terrane studio opens a recipe");
        return;
    }
    r = request("GET", "/api/materials", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"mapping\":null");
    reply_free(&r);
    CHECK(stop_server());
}

/* ---- Editing the generator: the graph and the recipe's sections, presets, exports ---- */

/* A recipe with a graph as people lay it out: one node a line, "graph" between other members. */
static const char *const graph_laid_out =
    "{\n"
    "  \"size\": [256, 256],\n"
    "  \"resolution\": [64, 64],\n"
    "  \"seed\": 4,\n"
    "  \"default_landform\": \"hills\",\n"
    "  \"landforms\": {\"hills\": {\"height_variation\": 40}},\n"
    "  \"graph\": {\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"ridges\", \"type\": \"noise_terrain\", \"params\": {\"height_variation\": "
    "90}},\n"
    "      {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 5}},\n"
    "      {\"id\": \"biomes\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": "
    "\"ridges\"}}},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"biomes\"}}}\n"
    "    ]\n"
    "  },\n"
    "  \"default_biome\": \"g\",\n"
    "  \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}\n"
    "}\n";

/* The heights whatever the grid. */
static float *get_heights_any(size_t *count)
{
    reply r = request("GET", "/api/heights", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    *count = r.size / sizeof(float);
    float *h = malloc(r.size ? r.size : 1);
    memcpy(h, r.body, r.size);
    reply_free(&r);
    return h;
}

/* text with the first occurrence of what replaced by with (malloc'd). */
static char *replaced(const char *text, const char *what, const char *with)
{
    const char *at = strstr(text, what);
    if (!at) return NULL;
    const size_t n = strlen(text) - strlen(what) + strlen(with);
    char *out = malloc(n + 1);
    snprintf(out, n + 1, "%.*s%s%s", (int)(at - text), text, with, at + strlen(what));
    return out;
}

static bool file_is(const char *path, const char *want)
{
    char *text = (char *)trn_test_read_file(path, &(size_t){0});
    const bool same = text && want && strcmp(text, want) == 0;
    if (!same) fprintf(stderr, "file %s:\n%s\nwanted:\n%s\n", path, text ? text : "(none)", want);
    free(text);
    return same;
}

static void test_generator_edits(void)
{
    char dir[800], path[900], cmd[1700];
    snprintf(dir, sizeof dir, "%s/generator", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/graph.json", dir);
    CHECK(trn_test_write_file(path, graph_laid_out, strlen(graph_laid_out)));
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe with a graph");
        return;
    }
    /* The node types with their parameters' ranges: what the page's forms are made from. */
    reply r = request("GET", "/api/types", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"name\":\"roughness\",\"type\":\"number\"");
    CHECK_CONTAINS(r.body, "\"max\":1.0");
    reply_free(&r);
    /* A heightfield into a mask input: refused with the finding at its node; nothing changes. */
    char *mismatch = replaced(
        graph_laid_out, "\n    ]",
        ",\n      {\"id\": \"blend\", \"type\": \"height_blend\", \"inputs\": {\"a\": {\"node\": "
        "\"ridges\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": \"floor\"}}}\n    ]");
    r = request("POST", "/api/edit", NULL, mismatch, strlen(mismatch), true);
    CHECK_EQ_INT(r.status, 422);
    CHECK_CONTAINS(r.body, "\"check\":\"kind-mismatch\",\"node\":\"blend\",\"pin\":\"mask\"");
    CHECK_CONTAINS(r.body, "takes a mask");
    reply_free(&r);
    free(mismatch);
    CHECK(state_is("dirty", false) && state_is("can_undo", false));
    /* A range the recipe grammar refuses: 400 with where. */
    char *bad = replaced(graph_laid_out, "\"seed\": 4", "\"seed\": -4");
    r = request("POST", "/api/edit", NULL, bad, strlen(bad), true);
    CHECK_EQ_INT(r.status, 400);
    CHECK_CONTAINS(r.body, "seed");
    reply_free(&r);
    free(bad);
    /* One parameter: one undoable, unsaved step; Save changes that number and nothing else. */
    size_t count = 0;
    float *before = get_heights_any(&count);
    char *param = replaced(graph_laid_out, "\"height_variation\": 90", "\"height_variation\": 45");
    r = request("POST", "/api/edit", NULL, param, strlen(param), true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "\"dirty\":true");
    reply_free(&r);
    size_t count2 = 0;
    float *after = get_heights_any(&count2);
    bool changed = count == count2 && count > 0;
    if (changed) changed = memcmp(before, after, count * sizeof *before) != 0;
    CHECK(changed);
    free(before);
    free(after);
    CHECK(state_is("can_undo", true));
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    CHECK(file_is(path, param));
    /* A node removed, one added, a link rewired, a landform control and a biome colour: each
     * edited in place; the rest of the file byte for byte. */
    char *step = replaced(param,
                          "      {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": "
                          "{\"height\": 5}},\n",
                          "");
    char *step2 = replaced(step, "}}}\n    ]",
                           "}}},\n      {\"id\": \"note\", \"type\": \"comment\", \"params\": "
                           "{\"text\": \"hi\"}}\n    ]");
    char *step3 = replaced(step2, "{\"hills\": {\"height_variation\": 40}}",
                           "{\"hills\": {\"height_variation\": 40, \"roughness\": 0.25}}");
    char *step4 = replaced(step3, "[0.2, 0.6, 0.2, 1]", "[0.5, 0.6, 0.2, 1]");
    r = request("POST", "/api/edit", NULL, step4, strlen(step4), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    /* The new node is written as the canonical recipe spells it (keys in order). */
    char *want =
        replaced(step4, "{\"id\": \"note\", \"type\": \"comment\", \"params\": {\"text\": \"hi\"}}",
                 "{\"id\": \"note\", \"params\": {\"text\": \"hi\"}, \"type\": \"comment\"}");
    CHECK(file_is(path, want));
    free(step);
    free(step2);
    free(step3);
    free(step4);
    /* Undo goes back to the saved parameter edit: unsaved again. */
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    CHECK(state_is("dirty", true));
    /* Export writes the recipe file: unsaved edits are refused first. */
    const char *png = "{\"format\": \"png\", \"path\": \"exports/h.png\"}";
    r = request("POST", "/api/export", NULL, png, strlen(png), true);
    CHECK_EQ_INT(r.status, 409);
    CHECK_CONTAINS(r.body, "\"unsaved\":true");
    reply_free(&r);
    CHECK_EQ_INT(post("/api/save", NULL), 200);
    /* The node that came back is new to the file's text: written as the recipe spells it. */
    char *restored = replaced(
        param, "{\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 5}}",
        "{\"id\": \"floor\", \"params\": {\"height\": 5}, \"type\": \"flat_terrain\"}");
    CHECK(file_is(path, restored));
    free(restored);
    r = request("POST", "/api/export", NULL, png, strlen(png), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    char out[1000];
    snprintf(out, sizeof out, "%s/exports/h.png", dir);
    size_t size = 0;
    uint8_t *bytes = trn_test_read_file(out, &size);
    CHECK(bytes && size > 8 && memcmp(bytes, "\x89PNG", 4) == 0);
    free(bytes);
    const char *tif = "{\"format\": \"geotiff\", \"path\": \"exports/h.tif\"}";
    r = request("POST", "/api/export", NULL, tif, strlen(tif), true);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    snprintf(out, sizeof out, "%s/exports/h.tif", dir);
    bytes = trn_test_read_file(out, &size);
    CHECK(bytes && size > 8 && memcmp(bytes, "II*", 3) == 0);
    free(bytes);
    /* Every other entry of the Export menu writes its file or folder inside the project. */
    static const struct {
        const char *format, *path, *find;
    } more[] = {
        {"r16", "exports/h.r16", "-name h.r16 -size 8450c"}, /* 65 x 65 samples, 2 bytes each */
        {"r32", "exports/h.r32", "-name h.r32 -size 16900c"},
        {"ter", "exports/h.ter", "-name h.ter"},
        {"gltf", "exports/h.glb", "-name h.glb"},
        {"beamng", "exports/levels/graph", "-path '*levels/graph/*.ter'"},
        {"unity", "exports/unity", "-path '*exports/unity/graph.raw'"},
        {"cook", "exports/cooked", "-path '*exports/cooked/*'"},
    };
    for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
        char req[200], find[1800];
        snprintf(req, sizeof req, "{\"format\": \"%s\", \"path\": \"%s\"}", more[k].format,
                 more[k].path);
        r = request("POST", "/api/export", NULL, req, strlen(req), true);
        if (r.status != 200)
            fprintf(stderr, "FAIL export %s: %d %s\n", more[k].format, r.status,
                    r.body ? r.body : "");
        CHECK_EQ_INT(r.status, 200);
        reply_free(&r);
        snprintf(find, sizeof find, "find '%s/exports' -type f %s | grep -q .", dir, more[k].find);
        if (system(find) != 0) fprintf(stderr, "FAIL export %s wrote nothing\n", more[k].format);
        CHECK_EQ_INT(system(find), 0);
    }
    snprintf(out, sizeof out, "%s/exports/h.glb", dir);
    bytes = trn_test_read_file(out, &size);
    CHECK(bytes && size > 12 && memcmp(bytes, "glTF", 4) == 0);
    free(bytes);
    const char *outside = "{\"format\": \"png\", \"path\": \"../h.png\"}";
    CHECK_EQ_INT(post("/api/export", outside), 400);
    const char *absolute = "{\"format\": \"png\", \"path\": \"/tmp/h.png\"}";
    CHECK_EQ_INT(post("/api/export", absolute), 400);
    const char *unknown = "{\"format\": \"bmp\", \"path\": \"h.bmp\"}";
    CHECK_EQ_INT(post("/api/export", unknown), 400);
    /* A failing verb's message comes back. */
    const char *noext = "{\"format\": \"png\", \"path\": \"exports/h.bmp\"}";
    r = request("POST", "/api/export", NULL, noext, strlen(noext), true);
    CHECK_EQ_INT(r.status, 400);
    CHECK_CONTAINS(r.body, "terrane generate");
    reply_free(&r);
    /* Presets: listed; one applied is one undoable step with the preset's id. */
    r = request("GET", "/api/presets", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    CHECK_CONTAINS(r.body, "builtin://terrain/rolling-hills");
    reply_free(&r);
    /* A built-in preset's picture: a shaded PNG of it on a small grid; the same bytes again. */
    r = request("GET", "/api/preset/picture?id=builtin://terrain/coastal-island", NULL, NULL, 0,
                true);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.size > 100 && memcmp(r.body, "\x89PNG", 4) == 0);
    reply again = request("GET", "/api/preset/picture?id=builtin://terrain/coastal-island", NULL,
                          NULL, 0, true);
    CHECK(again.size == r.size && memcmp(again.body, r.body, r.size) == 0);
    reply_free(&again);
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/preset/picture?id=asset://presets/x", NULL, true), 404);
    CHECK_EQ_INT(post("/api/preset", "{\"id\": \"builtin://terrain/nowhere\"}"), 404);
    CHECK_EQ_INT(post("/api/preset", "{\"id\": \"builtin://terrain/basin\", \"edits\": \"x\"}"),
                 400);
    CHECK_EQ_INT(
        post("/api/preset", "{\"id\": \"builtin://terrain/rolling-hills\", \"edits\": \"clear\"}"),
        200);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"preset_id\":\"builtin://terrain/rolling-hills\"");
    reply_free(&r);
    /* A rule's mask on the preset's terrain: a byte a sample, 255 where it wins, 128 where it
     * matches and loses, 0 elsewhere. */
    r = request("GET", "/api/rule_mask?rule=banks", NULL, NULL, 0, true);
    CHECK_EQ_INT(r.status, 200);
    unsigned mcx = 0, mcz = 0;
    const char *cells_at = r.head ? strstr(r.head, "X-Terrane-Cells: ") : NULL;
    CHECK(cells_at && sscanf(cells_at, "X-Terrane-Cells: %u,%u", &mcx, &mcz) == 2);
    CHECK_EQ_INT(r.size, (size_t)(mcx + 1) * (mcz + 1));
    size_t odd = 0, wins = 0;
    for (size_t k = 0; k < r.size; k++) {
        const unsigned char v = (unsigned char)r.body[k];
        odd += v != 0 && v != 128 && v != 255;
        wins += v == 255;
    }
    CHECK_EQ_INT(odd, 0);
    CHECK(wins > 0);
    reply_free(&r);
    CHECK_EQ_INT(status_of("GET", "/api/rule_mask?rule=nowhere", NULL, true), 404);
    CHECK(state_is("dirty", true));
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    CHECK(state_is("dirty", false));
    /* The keep-or-clear choice: a preset applied keeping the edits keeps the stroke made
     * before it (on the preset's grid); clearing them drops it. Undo goes back across the grid
     * change with the stroke. */
    CHECK_EQ_INT(
        post("/api/stroke", "{\"type\": \"raise\", \"radius\": 9, \"points\": [[100, 100]]}"),
        200);
    const char *keep = "{\"id\": \"builtin://terrain/rolling-hills\", \"edits\": \"keep\"}";
    r = request("POST", "/api/preset", NULL, keep, strlen(keep), true);
    if (r.status != 200) fprintf(stderr, "preset keep: %d %s\n", r.status, r.body ? r.body : "");
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"preset_id\":\"builtin://terrain/rolling-hills\"");
    CHECK_CONTAINS(r.body, "\"raise\"");
    reply_free(&r);
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"resolution\":[64,64]");
    CHECK_CONTAINS(r.body, "\"raise\"");
    CHECK(r.body && !strstr(r.body, "preset_id"));
    reply_free(&r);
    CHECK_EQ_INT(
        post("/api/preset", "{\"id\": \"builtin://terrain/rolling-hills\", \"edits\": \"clear\"}"),
        200);
    r = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK_CONTAINS(r.body, "\"preset_id\":\"builtin://terrain/rolling-hills\"");
    CHECK(r.body && !strstr(r.body, "\"raise\""));
    reply_free(&r);
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    CHECK_EQ_INT(post("/api/undo", NULL), 200);
    CHECK(state_is("dirty", false));
    free(param);
    free(want);
    CHECK(stop_server());
}

/* A header's number ("Name: value") in a reply's head; NAN when absent. */
static double header_number(const reply *r, const char *name)
{
    const char *at = r->head ? strstr(r->head, name) : NULL;
    return at ? strtod(at + strlen(name) + 2, NULL) : NAN;
}

/* Heights quantised to 16 bits: two bytes a sample, each within half a step of the float32
 * height (h = offset + scale * q), whole and by chunk; another encoding is refused. */
static void test_heights_u16(void)
{
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    size_t n = 0;
    float *exact = get_heights(&n);
    for (int chunked = 0; chunked < 2; chunked++) {
        reply r = request("GET", chunked ? "/api/heights?encoding=u16&chunk=1,2" : "/api/heights?encoding=u16",
                          NULL, NULL, 0, true);
        CHECK_EQ_INT(r.status, 200);
        CHECK_CONTAINS(r.head, "X-Terrane-Encoding: u16");
        const double offset = header_number(&r, "X-Terrane-Height-Offset");
        const double scale = header_number(&r, "X-Terrane-Height-Scale");
        unsigned i0 = 0, j0 = 0, nx = 0, nz = 0;
        const char *at = strstr(r.head, "X-Terrane-Origin: ");
        CHECK(at && sscanf(at, "X-Terrane-Origin: %u,%u", &i0, &j0) == 2);
        at = strstr(r.head, "X-Terrane-Samples: ");
        CHECK(at && sscanf(at, "X-Terrane-Samples: %u,%u", &nx, &nz) == 2);
        CHECK_EQ_INT(r.size, (size_t)nx * nz * 2);
        CHECK(isfinite(offset) && scale > 0.0);
        double worst = 0.0, lo = INFINITY, hi = -INFINITY;
        unsigned qmax = 0;
        for (unsigned j = 0; j < nz && r.size == (size_t)nx * nz * 2 && n == 129 * 129; j++)
            for (unsigned i = 0; i < nx; i++) {
                const size_t k = (size_t)j * nx + i;
                const unsigned q = (unsigned)(uint8_t)r.body[2 * k] | (unsigned)(uint8_t)r.body[2 * k + 1] << 8;
                const double h = (double)exact[(size_t)(j0 + j) * 129 + i0 + i];
                const double e = fabs(offset + scale * q - h);
                if (e > worst) worst = e;
                if (h < lo) lo = h;
                if (h > hi) hi = h;
                if (q > qmax) qmax = q;
            }
        CHECK(worst <= scale / 2 * (1 + 1e-9));
        CHECK(offset == lo && qmax == 65534 && fabs(scale * 65534 - (hi - lo)) < 1e-9 * (hi - lo + 1));
        reply_free(&r);
    }
    free(exact);
    CHECK_EQ_INT(status_of("GET", "/api/heights?encoding=u8", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/biomes?encoding=u16", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/heights?encoding=f32", NULL, true), 200);
}

/* Every S-th sample (?stride=S, the page's first frame): samples min(k S, cells) of the heights
 * (float32 exactly, u16 within half a step) and the biomes, S lowered to the chunk size; refused
 * with a chunk or out of range. */
static void test_heights_stride(void)
{
    CHECK_EQ_INT(reset_to(recipe_text), 200);
    size_t n = 0;
    float *exact = get_heights(&n);
    reply b = request("GET", "/api/biomes", NULL, NULL, 0, true);
    CHECK_EQ_INT(b.status, 200);
    CHECK(n == 129 * 129 && b.size == 129 * 129);
    /* 7 does not divide 128: the last row and column are sample 128; 64 is lowered to 32. */
    const unsigned asked[3] = {7, 64, 1}, got[3] = {7, 32, 1}, side[3] = {20, 5, 129};
    for (int t = 0; t < 3 && n == 129 * 129 && b.size == 129 * 129; t++) {
        for (int kind = 0; kind < 3; kind++) { /* float32, u16, biomes */
            char target[96];
            snprintf(target, sizeof target, "/api/%s?stride=%u%s", kind == 2 ? "biomes" : "heights",
                     asked[t], kind == 1 ? "&encoding=u16" : "");
            reply r = request("GET", target, NULL, NULL, 0, true);
            CHECK_EQ_INT(r.status, 200);
            char want[64];
            snprintf(want, sizeof want, "X-Terrane-Samples: %u,%u", side[t], side[t]);
            CHECK_CONTAINS(r.head, want);
            if (got[t] > 1) {
                snprintf(want, sizeof want, "X-Terrane-Stride: %u", got[t]);
                CHECK_CONTAINS(r.head, want);
            }
            const size_t bytes = kind == 0 ? 4 : kind == 1 ? 2 : 1;
            CHECK_EQ_INT(r.size, (size_t)side[t] * side[t] * bytes);
            const double offset = header_number(&r, "X-Terrane-Height-Offset");
            const double scale = header_number(&r, "X-Terrane-Height-Scale");
            size_t wrong = 0;
            for (unsigned j = 0; j < side[t] && r.size == (size_t)side[t] * side[t] * bytes; j++)
                for (unsigned i = 0; i < side[t]; i++) {
                    const size_t at = (size_t)(j * got[t] < 128 ? j * got[t] : 128) * 129 +
                                      (i * got[t] < 128 ? i * got[t] : 128);
                    const size_t k = (size_t)j * side[t] + i;
                    if (kind == 0) {
                        float h;
                        memcpy(&h, r.body + 4 * k, 4);
                        wrong += h != exact[at];
                    } else if (kind == 1) {
                        const unsigned q = (unsigned)(uint8_t)r.body[2 * k] |
                                           (unsigned)(uint8_t)r.body[2 * k + 1] << 8;
                        wrong += !(fabs(offset + scale * q - (double)exact[at]) <= scale / 2 * (1 + 1e-9));
                    } else {
                        wrong += r.body[k] != b.body[at];
                    }
                }
            CHECK_EQ_INT(wrong, 0);
            reply_free(&r);
        }
    }
    reply_free(&b);
    free(exact);
    CHECK_EQ_INT(status_of("GET", "/api/heights?stride=0", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/heights?stride=8x", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/heights?stride=4097", NULL, true), 400);
    CHECK_EQ_INT(status_of("GET", "/api/heights?stride=8&chunk=0,0", NULL, true), 400);
}

/* A PNG's width and colour type from its header (0 when it is not one). */
static uint32_t png_width(const reply *r, int *color_type)
{
    const unsigned char *b = (const unsigned char *)r->body;
    if (!b || r->size < 26 || memcmp(b + 1, "PNG", 3) != 0) return 0;
    *color_type = b[25];
    return (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
}

/* Draft previews (a parameter being dragged): POST /api/preview with the edited recipe gives the
 * node's output on a coarse grid without applying anything; project presets have pictures: the
 * session's recipe with the preset applied, following the session. */
static void test_draft_previews_and_project_pictures(void)
{
    char dir[600], path[700], cmd[4000];
    snprintf(dir, sizeof dir, "%s/drafts", root);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && mkdir -p '%s/presets' && cp '%s/examples/project/presets/'* "
             "'%s/presets/'",
             dir, dir, TRN_SOURCE_DIR, dir);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/graph.json", dir);
    CHECK(trn_test_write_file(path, graph_laid_out, strlen(graph_laid_out)));
    if (!serve(path)) {
        CHECK(!"terrane studio serves the recipe with a graph and a project preset");
        return;
    }
    int st = 0;
    json_t *state = get_json("GET", "/api/state", NULL, &st);
    const json_int_t revision = json_integer_value(json_object_get(state, "revision"));
    json_decref(state);
    /* A finer grid and a dragged parameter: drawn on at most 128 cells a side. */
    char *fine = replaced(graph_laid_out, "[64, 64]", "[512, 512]");
    char *dragged = fine ? replaced(fine, "\"height_variation\": 90", "\"height_variation\": 300")
                         : NULL;
    char *other = fine ? replaced(fine, "\"height_variation\": 90", "\"height_variation\": 20")
                       : NULL;
    CHECK(dragged && other);
    const char *json_type = "Content-Type: application/json\r\n";
    reply a = request("POST", "/api/preview?node=ridges&pin=field", json_type, dragged,
                      dragged ? strlen(dragged) : 0, true);
    CHECK_EQ_INT(a.status, 200);
    CHECK(a.head && strstr(a.head, "X-Terrane-Preview: draft") &&
          strstr(a.head, "X-Terrane-Cells: 128,128"));
    int type = -1;
    CHECK_EQ_INT(png_width(&a, &type), 129);
    reply again = request("POST", "/api/preview?node=ridges&pin=field", json_type, dragged,
                          dragged ? strlen(dragged) : 0, true);
    CHECK(again.status == 200 && again.size == a.size && memcmp(again.body, a.body, a.size) == 0);
    reply b = request("POST", "/api/preview?node=ridges", json_type, other,
                      other ? strlen(other) : 0, true);
    CHECK_EQ_INT(b.status, 200);
    CHECK(b.size != a.size || memcmp(a.body, b.body, a.size) != 0); /* the parameter shows */
    reply_free(&a);
    reply_free(&again);
    reply_free(&b);
    /* Nothing applied: the same revision, the file's parameter in the session. */
    state = get_json("GET", "/api/state", NULL, &st);
    CHECK(json_integer_value(json_object_get(state, "revision")) == revision &&
          json_is_false(json_object_get(state, "dirty")));
    json_decref(state);
    reply rec = request("GET", "/api/recipe", NULL, NULL, 0, true);
    CHECK(rec.body && strstr(rec.body, "\"height_variation\":90") &&
          strstr(rec.body, "\"resolution\":[64,64]"));
    reply_free(&rec);
    CHECK_EQ_INT(status_of("GET", "/api/preview?node=ridges", NULL, true), 200);
    reply bad = request("POST", "/api/preview?node=nowhere", json_type, dragged,
                        dragged ? strlen(dragged) : 0, true);
    CHECK_EQ_INT(bad.status, 404);
    reply_free(&bad);
    bad = request("POST", "/api/preview?node=ridges", json_type, "{", 1, true);
    CHECK_EQ_INT(bad.status, 400);
    reply_free(&bad);
    bad = request("POST", "/api/preview", json_type, dragged, dragged ? strlen(dragged) : 0, true);
    CHECK_EQ_INT(bad.status, 400);
    reply_free(&bad);
    /* The project's preset: listed, with a picture in its biomes' colours. */
    json_t *list = get_json("GET", "/api/presets", NULL, &st);
    const char *id = NULL;
    json_t *p;
    size_t k;
    json_array_foreach(json_object_get(list, "presets"), k, p)
        if (json_is_false(json_object_get(p, "builtin")))
            id = json_string_value(json_object_get(p, "id"));
    CHECK(id != NULL);
    char target[600];
    snprintf(target, sizeof target, "/api/preset/picture?id=%s", id ? id : "none");
    reply pic = request("GET", target, NULL, NULL, 0, true);
    CHECK_EQ_INT(pic.status, 200);
    type = -1;
    CHECK_EQ_INT(png_width(&pic, &type), 129);
    CHECK_EQ_INT(type, 2); /* RGB */
    reply pic2 = request("GET", target, NULL, NULL, 0, true);
    CHECK(pic2.status == 200 && pic2.size == pic.size && memcmp(pic.body, pic2.body, pic.size) == 0);
    reply_free(&pic2);
    /* It follows the session: another seed, another picture. */
    char *reseeded = replaced(graph_laid_out, "\"seed\": 4", "\"seed\": 9");
    CHECK_EQ_INT(reset_to(reseeded), 200);
    pic2 = request("GET", target, NULL, NULL, 0, true);
    CHECK(pic2.status == 200 && (pic2.size != pic.size || memcmp(pic.body, pic2.body, pic.size)));
    reply_free(&pic2);
    reply_free(&pic);
    json_decref(list);
    free(reseeded);
    free(fine);
    free(dragged);
    free(other);
    CHECK(stop_server());
}

/* A rule's mask as the server's reference: each sample's context on the recipe's generated
 * terrain, the rule's test and the winning rule (what the studio computed under its lock). */
static uint8_t *expected_rule_mask(const char *recipe_json, const char *rule_id, size_t *size)
{
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_generated g;
    memset(&g, 0, sizeof g);
    trn_error e;
    if (trn_recipe_parse(recipe_json, strlen(recipe_json), "mask.json", &r, NULL, &e) ||
        trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e)) {
        fprintf(stderr, "expected_rule_mask: %s\n", e.message);
        trn_recipe_dispose(&r);
        return NULL;
    }
    int which = -1;
    for (uint32_t k = 0; k < r.rule_count; k++)
        if (!strcmp(r.rules[k].id, rule_id)) which = (int)k;
    const uint32_t nx = g.field.cells_x + 1u, nz = g.field.cells_z + 1u;
    uint8_t *mask = which >= 0 ? malloc((size_t)nx * nz) : NULL;
    for (uint32_t j = 0; mask && j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            trn_sample_context ctx;
            trn_generated_context(&g, &r, i, j, &ctx);
            trn_rule_test t;
            trn_rule_test_sample(&r.rules[which], &ctx, &t);
            mask[(size_t)j * nx + i] =
                !t.matched ? 0u : trn_rules_pick(r.rules, r.rule_count, &ctx) == which ? 255u : 128u;
        }
    *size = (size_t)nx * nz;
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
    return mask;
}

/* The rule mask is computed outside the session lock: while one is held up (the test gate
 * TERRANE_TEST_RULE_MASK_GATE: the computation waits until that file exists, at most 30 s),
 * other requests are served at once and a stroke goes through; the held mask is the terrain's
 * at its request (a copy), the next one the stroked terrain's, each equal to the reference. */
static void test_rule_mask_outside_lock(void)
{
    static const char *const masked =
        "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 4, \"default_landform\": "
        "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 40}}, \"sea_level\": 12, "
        "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}, \"r\": "
        "{\"color\": [0.5, 0.5, 0.5, 1]}, \"s\": {\"color\": [0.9, 0.8, 0.5, 1]}}, \"rules\": "
        "[{\"id\": \"high\", \"biome\": \"r\", \"priority\": 1, \"elevation\": [18, 1000]}, "
        "{\"id\": \"steep\", \"biome\": \"s\", \"priority\": 5, \"slope\": [12, 90]}, {\"id\": "
        "\"shore\", \"biome\": \"s\", \"water_distance\": [0, 20]}]}\n";
    char dir[600], path[700], gate[700];
    snprintf(dir, sizeof dir, "%s/maskproject", root);
    snprintf(path, sizeof path, "%s/mask.json", dir);
    snprintf(gate, sizeof gate, "%s/gate", dir);
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(trn_test_write_file(path, masked, strlen(masked)));
    const pid_t main_server = server_pid;
    const unsigned main_port = port;
    char main_token[64];
    snprintf(main_token, sizeof main_token, "%s", token);
    setenv("TERRANE_TEST_RULE_MASK_GATE", gate, 1);
    const bool served = serve(path);
    unsetenv("TERRANE_TEST_RULE_MASK_GATE");
    CHECK(served);
    if (served) {
        size_t want_size = 0, stroked_size = 0;
        uint8_t *want = expected_rule_mask(masked, "high", &want_size);
        CHECK(want != NULL);
        /* The mask request, held at the gate; its reply is read later. */
        int fd = open_idle();
        char head[512];
        snprintf(head, sizeof head,
                 "GET /api/rule_mask?rule=high HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Terrane-Token: "
                 "%s\r\nConnection: close\r\n\r\n",
                 port, token);
        CHECK(fd >= 0 && send(fd, head, strlen(head), MSG_NOSIGNAL) == (ssize_t)strlen(head));
        pause_ms(300);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK_EQ_INT(status_of("GET", "/api/state", NULL, true), 200);
        reply r = post_stroke("{\"type\": \"raise\", \"radius\": 60, \"strength\": 25, \"points\": "
                              "[[128, 128]]}");
        CHECK_EQ_INT(r.status, 200);
        reply_free(&r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        fprintf(stderr, "state and a stroke while a rule mask was held: %.2f s\n", waited);
        CHECK(waited < 10.0); /* under the lock they would wait for the gate's 30 s */
        CHECK(trn_test_write_file(gate, "", 0));
        /* The held reply: the terrain before the stroke. */
        size_t cap = 1 << 20, len = 0;
        char *buf = malloc(cap);
        for (ssize_t got; fd >= 0 && buf && (got = recv(fd, buf + len, cap - len, 0)) > 0;) {
            len += (size_t)got;
            if (len == cap) {
                char *grown = realloc(buf, cap * 2);
                if (!grown) break;
                buf = grown;
                cap *= 2;
            }
        }
        if (fd >= 0) close(fd);
        const char *end = buf ? memmem(buf, len, "\r\n\r\n", 4) : NULL;
        CHECK(end && strncmp(buf, "HTTP/1.1 200", 12) == 0);
        const size_t body = end ? len - (size_t)(end + 4 - buf) : 0;
        CHECK_EQ_INT(body, want_size);
        CHECK(want && end && body == want_size && memcmp(end + 4, want, want_size) == 0);
        /* The next mask: the stroked terrain (the session's recipe, as the reference's input). */
        reply canon = request("GET", "/api/recipe", NULL, NULL, 0, true);
        uint8_t *stroked = canon.body ? expected_rule_mask(canon.body, "high", &stroked_size) : NULL;
        reply_free(&canon);
        r = request("GET", "/api/rule_mask?rule=high", NULL, NULL, 0, true);
        CHECK_EQ_INT(r.status, 200);
        CHECK(stroked && r.size == stroked_size && memcmp(r.body, stroked, stroked_size) == 0);
        CHECK(stroked && want && memcmp(stroked, want, want_size) != 0); /* the stroke shows */
        reply_free(&r);
        /* The other rules too (a slope band; a water distance band from the sea level). */
        for (int k = 0; k < 2; k++) {
            const char *id = k ? "shore" : "steep";
            size_t n = 0;
            canon = request("GET", "/api/recipe", NULL, NULL, 0, true);
            uint8_t *ref = canon.body ? expected_rule_mask(canon.body, id, &n) : NULL;
            reply_free(&canon);
            char target[80];
            snprintf(target, sizeof target, "/api/rule_mask?rule=%s", id);
            r = request("GET", target, NULL, NULL, 0, true);
            CHECK(ref && r.status == 200 && r.size == n && memcmp(r.body, ref, n) == 0);
            size_t matches = 0, wins = 0;
            for (size_t q = 0; ref && q < n; q++) {
                matches += ref[q] != 0;
                wins += ref[q] == 255;
            }
            fprintf(stderr, "rule %s: matches %zu samples, wins %zu\n", id, matches, wins);
            CHECK(matches > 0);
            reply_free(&r);
            free(ref);
        }
        free(buf);
        free(want);
        free(stroked);
        CHECK(stop_server());
    }
    server_pid = main_server;
    port = main_port;
    snprintf(token, sizeof token, "%s", main_token);
}

static void test_usage(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("studio", &out, &err), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("studio '%s' --port 65536", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "--port must be 0..65535");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("studio '%s' --port -1", &out, &err, recipe_path), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("studio '%s' --max-work 0", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "--max-work takes a whole number of work units from 1");
    free(out), free(err);
    /* The budget applies to the session's generation: 1,000 units cannot make 128^2. */
    CHECK_EQ_INT(trn_test_run_clif("studio '%s' --max-work 1000 --port 0", &out, &err, recipe_path), 1);
    CHECK_CONTAINS(err, "exceeds the work budget of 1000");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("--format json studio '%s'", &out, &err, recipe_path), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("studio '%s/missing.json' --port 0", &out, &err, root), 1);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("studio --help", &out, &err), 0);
    CHECK_CONTAINS(out, "usage: terrane studio PROJECT_OR_RECIPE");
    free(out), free(err);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!start_server()) {
        fprintf(stderr, "terrane studio did not start\n");
        if (server_pid > 0) kill(server_pid, SIGKILL);
        return 1;
    }
    RUN(test_url);
    RUN(test_page);
    RUN(test_host_and_origin);
    RUN(test_token);
    RUN(test_traversal);
    RUN(test_body_limit);
    RUN(test_edit_and_save);
    RUN(test_page_tools);
    RUN(test_generate);
    RUN(test_heights_u16);
    RUN(test_heights_stride);
    RUN(test_layers);
    RUN(test_nodes);
    RUN(test_quality);
    RUN(test_explain);
    RUN(test_lod);
    RUN(test_extend);
    RUN(test_water_grid);
    RUN(test_water_index_many_bodies);
    RUN(test_slow_clients);
    RUN(test_events); /* its stream lives on a second after close: after the limit's test */
    RUN(test_stop);
    RUN(test_project);
    RUN(test_graph_errors);
    RUN(test_unsaved_and_minimal_save);
    RUN(test_history_across_generations);
    RUN(test_disk_changes);
    RUN(test_recovery);
    RUN(test_symlinks);
    RUN(test_mapped_materials);
    RUN(test_open_without_token_on_command_line);
    RUN(test_sync_events);
    RUN(test_history_limit);
    RUN(test_example_project);
    RUN(test_generator_edits);
    RUN(test_rule_mask_outside_lock);
    RUN(test_draft_previews_and_project_pictures);
    RUN(test_usage);
    if (server_pid > 0) {
        kill(server_pid, SIGKILL);
        waitpid(server_pid, NULL, 0);
    }
    return trn_test_finish();
}
