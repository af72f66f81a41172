/* Idle cores now (/proc/loadavg's runnable count), for thread counts that follow the machine. */
#define _POSIX_C_SOURCE 200809L
#include "core/idle.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* This process's threads that are runnable now (state R in /proc/self/task/TID/stat), the
 * calling one included; 1 where that cannot be read. OpenMP's threads may spin for a while
 * after a parallel region before they sleep (libgomp's default when no wait policy is set):
 * counted as other work they would keep the next region on one thread. */
static long own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], line[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        const size_t got = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[got] = '\0';
        const char *close = strrchr(line, ')'); /* the name may hold spaces and parentheses */
        if (close && close[1] == ' ' && close[2] == 'R') n++;
    }
    closedir(d);
    return n < 1 ? 1 : n;
}

int trn_idle_cores(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* Our own threads first: one that goes to sleep between the two reads can then only make
     * the other work look smaller (a thread too many for a while), never larger (one thread
     * on an idle machine). */
    const long own = own_running();
    FILE *f = fopen("/proc/loadavg", "r");
    long running = -1;
    if (f) {
        double a, b, c;
        if (fscanf(f, "%lf %lf %lf %ld/", &a, &b, &c, &running) != 4) running = -1;
        fclose(f);
    }
    if (cpus < 1 || running < 1) return -1;
    const long others = running - own;
    const long idle = cpus - 1 - (others > 0 ? others : 0); /* one core for this thread */
    return idle > 0 ? (int)idle : 0;
}

int trn_threads_free(int threads, int asked)
{
    if (threads <= 1 || asked > 0) return threads < 1 ? 1 : threads;
    const int idle = trn_idle_cores();
    if (idle < 0) return threads; /* unknown: as asked */
    return threads < 1 + idle ? threads : 1 + idle;
}
