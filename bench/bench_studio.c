/* terrane studio over HTTP from a C client: stroke and extended-stroke round trips on 2049^2
 * (or CELLS + 1 squared: bench_studio CLI STROKES RUNS CELLS),
 * the first /api/heights and /api/lod of a 4097^2 session. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned port;
static char token[64];

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One request (a new connection, as the page's fetch may open); the reply's status, its length
 * (head and body) in *size. */
static int request(const char *method, const char *target, const char *body, size_t *size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) return -1;
    static char head[1 << 14];
    const int n = snprintf(head, sizeof head,
                           "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Terrane-Token: %s\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           method, target, port, token, strlen(body), body);
    if (n < 0 || (size_t)n >= sizeof head || send(fd, head, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return -1;
    }
    static char buf[1 << 20];
    size_t total = 0;
    int status = -1;
    for (ssize_t got; (got = recv(fd, buf, sizeof buf, 0)) > 0;) {
        if (total == 0) sscanf(buf, "HTTP/1.%*d %d", &status);
        total += (size_t)got;
    }
    close(fd);
    *size = total;
    return status;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double load_average(void)
{
    double load = -1.0;
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf", &load) != 1) load = -1.0;
        fclose(la);
    }
    return load;
}

/* A hills recipe of cells^2 cells over 2 * cells units in dir; its path in out. */
static bool write_recipe(const char *dir, unsigned cells, char *out, size_t size)
{
    snprintf(out, size, "%s/land%u.json", dir, cells);
    FILE *f = fopen(out, "w");
    if (!f) return false;
    fprintf(f,
            "{\"size\": [%u, %u], \"resolution\": [%u, %u], \"seed\": 7, "
            "\"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"height_variation\": "
            "300}}, \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, "
            "1]}}}\n",
            2 * cells, 2 * cells, cells, cells);
    return fclose(f) == 0;
}

/* Start terrane studio on recipe; port and token into the globals; the pid, -1 on failure. */
static pid_t start(const char *cli, const char *recipe)
{
    int out[2];
    if (pipe(out) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execl(cli, "terrane", "studio", recipe, "--port", "0", "-q", (char *)NULL);
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
    if (sscanf(line, "http://127.0.0.1:%u/?token=%63s", &port, token) != 2) {
        fprintf(stderr, "terrane studio did not start (%s)\n", cli);
        return -1;
    }
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGINT);
    waitpid(pid, NULL, 0);
}

static void report(const char *what, double *times, int n, size_t bytes)
{
    qsort(times, (size_t)n, sizeof *times, cmp);
    printf("%s over %d: median %.2f ms, best %.2f ms, worst %.2f ms (last reply %zu bytes); "
           "load average %.2f\n",
           what, n, times[n / 2] * 1e3, times[0] * 1e3, times[n - 1] * 1e3, bytes, load_average());
}

/* cells + 1 squared (2049^2 by default): plain strokes, then drags sent as growing strokes
 * (?extend=1), then one undo. */
static int bench_strokes(const char *cli, const char *dir, int strokes, unsigned cells)
{
    char recipe[256];
    if (!write_recipe(dir, cells, recipe, sizeof recipe)) return 1;
    const double t0 = now_s();
    const pid_t pid = start(cli, recipe);
    if (pid < 0) return 1;
    printf("studio up (%u^2 generated) in %.2f s\n", cells + 1, now_s() - t0);
    double *times = malloc((size_t)strokes * sizeof *times);
    size_t bytes = 0;
    for (int k = 0; k < strokes; k++) {
        char body[256];
        /* Radius 24 world units (12 cells), a short drag of three stamps, across the map. */
        const double f = cells / 2048.0; /* the same places, scaled to the map */
        const double x = f * (300.0 + 90.0 * (k % 40)), z = f * (500.0 + 70.0 * (k % 37));
        snprintf(body, sizeof body,
                 "{\"type\": \"%s\", \"radius\": 24, \"strength\": 2, \"points\": [[%g, %g], "
                 "[%g, %g], [%g, %g]]}",
                 k % 2 ? "lower" : "raise", x, z, x + 6, z, x + 12, z);
        const double s = now_s();
        const int status = request("POST", "/api/stroke", body, &bytes);
        times[k] = now_s() - s;
        if (status != 200) {
            fprintf(stderr, "stroke %d: HTTP %d\n", k, status);
            stop(pid);
            return 1;
        }
    }
    report("stroke round trip", times, strokes, bytes);
    /* A drag: the page sends the stroke so far on each mouse move, stamps a quarter radius
     * apart; each extension undoes the stroke and applies the longer one. */
    const int drags = strokes / 10 > 1 ? strokes / 10 : 1, steps = 12;
    double *ext = malloc((size_t)drags * (steps - 1) * sizeof *ext);
    int measured = 0;
    for (int d = 0; d < drags; d++) {
        const double f = cells / 2048.0;
        const double x = f * (400.0 + 300.0 * (d % 10)), z = f * (3000.0 - 200.0 * (d % 12));
        char body[4096];
        size_t used = (size_t)snprintf(body, sizeof body,
                                       "{\"type\": \"raise\", \"radius\": 24, \"strength\": 2, "
                                       "\"points\": [");
        for (int k = 0; k < steps; k++) {
            used += (size_t)snprintf(body + used, sizeof body - used, "%s[%g, %g]", k ? ", " : "",
                                     x + 6.0 * k, z);
            char sent[4200];
            snprintf(sent, sizeof sent, "%s]}", body);
            const double s = now_s();
            const int status =
                request("POST", k ? "/api/stroke?extend=1" : "/api/stroke", sent, &bytes);
            if (k) ext[measured++] = now_s() - s;
            if (status != 200) {
                fprintf(stderr, "drag %d step %d: HTTP %d\n", d, k, status);
                stop(pid);
                return 1;
            }
        }
    }
    report("extend-stroke round trip (2..12 stamps)", ext, measured, bytes);
    const double u0 = now_s();
    size_t undo_bytes = 0;
    request("POST", "/api/undo", "", &undo_bytes);
    printf("undo round trip %.2f ms\n", (now_s() - u0) * 1e3);
    stop(pid);
    free(times);
    free(ext);
    unlink(recipe);
    return 0;
}

/* 4097^2: a fresh server per run; the first GET /api/heights and /api/lod (computed on that
 * request), then each again (the LOD errors cached). */
static int bench_first_frame(const char *cli, const char *dir, int runs)
{
    char recipe[256];
    if (!write_recipe(dir, 4096, recipe, sizeof recipe)) return 1;
    double *heights = malloc((size_t)runs * sizeof *heights), *lod = malloc((size_t)runs * 8);
    double again_heights = 0.0, again_lod = 0.0;
    size_t hb = 0, lb = 0;
    for (int r = 0; r < runs; r++) {
        const double t0 = now_s();
        const pid_t pid = start(cli, recipe);
        if (pid < 0) return 1;
        printf("studio up (4097^2 generated) in %.2f s\n", now_s() - t0);
        double s = now_s();
        int st = request("GET", "/api/heights", "", &hb);
        heights[r] = now_s() - s;
        s = now_s();
        st = st == 200 ? request("GET", "/api/lod", "", &lb) : st;
        lod[r] = now_s() - s;
        s = now_s();
        request("GET", "/api/heights", "", &hb);
        again_heights = now_s() - s;
        s = now_s();
        request("GET", "/api/lod", "", &lb);
        again_lod = now_s() - s;
        stop(pid);
        if (st != 200) {
            fprintf(stderr, "4097^2: HTTP %d\n", st);
            return 1;
        }
    }
    report("4097^2 first GET /api/heights", heights, runs, hb);
    report("4097^2 first GET /api/lod", lod, runs, lb);
    printf("4097^2 again (last run): heights %.1f ms, lod %.2f ms\n", again_heights * 1e3,
           again_lod * 1e3);
    free(heights);
    free(lod);
    unlink(recipe);
    return 0;
}

int main(int argc, char **argv)
{
    const char *cli = argc > 1 ? argv[1] : "./terrane";
    const int strokes = argc > 2 ? atoi(argv[2]) : 40;
    const int runs = argc > 3 ? atoi(argv[3]) : 3;
    /* The strokes' session: CELLS cells a side (default 2048: 2049^2 samples). */
    const unsigned cells = argc > 4 && atoi(argv[4]) >= 64 ? (unsigned)atoi(argv[4]) : 2048u;
    char dir[] = "/tmp/bench-studio-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    int rc = bench_strokes(cli, dir, strokes > 0 ? strokes : 40, cells);
    if (!rc && runs > 0) rc = bench_first_frame(cli, dir, runs);
    rmdir(dir);
    return rc;
}
