/* terrane studio: a brush stroke's round trip over HTTP on a 2049^2 terrain, from a C client. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
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

/* POST body to target; the reply's status, its body length in *size. */
static int post(const char *target, const char *body, size_t *size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) return -1;
    char head[512];
    const int n = snprintf(head, sizeof head,
                           "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Terrane-Token: %s\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           target, port, token, strlen(body), body);
    if (send(fd, head, (size_t)n, MSG_NOSIGNAL) != n) return -1;
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

int main(int argc, char **argv)
{
    const char *cli = argc > 1 ? argv[1] : "./terrane";
    const int strokes = argc > 2 ? atoi(argv[2]) : 40;
    char dir[] = "/tmp/bench-studio-XXXXXX", recipe[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(recipe, sizeof recipe, "%s/land.json", dir);
    FILE *f = fopen(recipe, "w");
    if (!f) return 1;
    fputs(
        "{\"size\": [4096, 4096], \"resolution\": [2048, 2048], \"seed\": 7, "
        "\"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"height_variation\": "
        "300}}, \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.2, 0.6, 0.2, 1]}}}\n",
        f);
    fclose(f);
    int out[2];
    if (pipe(out) != 0) return 1;
    const double t0 = now_s();
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
    if (sscanf(line, "http://127.0.0.1:%u/?token=%63s", &port, token) != 2) {
        fprintf(stderr, "terrane studio did not start (%s)\n", cli);
        return 1;
    }
    printf("studio up (2049^2 generated) in %.2f s\n", now_s() - t0);
    double *times = malloc((size_t)strokes * sizeof *times);
    size_t bytes = 0;
    for (int k = 0; k < strokes; k++) {
        char body[256];
        /* Radius 24 world units (12 cells), a short drag of three stamps, across the map. */
        const double x = 300.0 + 90.0 * (k % 40), z = 500.0 + 70.0 * (k % 37);
        snprintf(body, sizeof body,
                 "{\"type\": \"%s\", \"radius\": 24, \"strength\": 2, \"points\": [[%g, %g], "
                 "[%g, %g], [%g, %g]]}",
                 k % 2 ? "lower" : "raise", x, z, x + 6, z, x + 12, z);
        const double s = now_s();
        const int status = post("/api/stroke", body, &bytes);
        times[k] = now_s() - s;
        if (status != 200) {
            fprintf(stderr, "stroke %d: HTTP %d\n", k, status);
            return 1;
        }
    }
    qsort(times, (size_t)strokes, sizeof *times, cmp);
    double load[3] = {0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(la);
    }
    printf("stroke round trip over %d strokes: median %.2f ms, best %.2f ms, worst %.2f ms "
           "(last reply %zu bytes); load average %.2f\n",
           strokes, times[strokes / 2] * 1e3, times[0] * 1e3, times[strokes - 1] * 1e3, bytes,
           load[0]);
    const double u0 = now_s();
    size_t undo_bytes = 0;
    post("/api/undo", "", &undo_bytes);
    printf("undo round trip %.2f ms\n", (now_s() - u0) * 1e3);
    kill(pid, SIGINT);
    waitpid(pid, NULL, 0);
    free(times);
    unlink(recipe);
    rmdir(dir);
    return 0;
}
