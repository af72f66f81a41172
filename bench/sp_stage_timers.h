/* Stream power's stage timers for a profiling build: cmake -DCMAKE_C_FLAGS="-include $PWD/bench/sp_stage_timers.h" (x86-64, TSC ticks / 1e9 per stage and grid size, printed at exit). */
static double sp_prof_t[8][9];
static unsigned long sp_prof_size[8];
static long sp_prof_steps[8];
static unsigned long long sp_prof_last;
static int sp_prof_stage = -1, sp_prof_b;
static double sp_prof_maxchunk[8], sp_prof_maxtree[8]; static double sp_prof_ntrees[8];
static inline void sp_prof_mark(int k, unsigned long n) {
    unsigned long long t = __builtin_ia32_rdtsc();
    if (sp_prof_stage >= 0) sp_prof_t[sp_prof_b][sp_prof_stage] += (double)(t - sp_prof_last) * 1e-9;
    if (k == 0) { int b = 0; while (b < 7 && sp_prof_size[b] && sp_prof_size[b] != n) b++; sp_prof_size[b] = n; sp_prof_b = b; }
    sp_prof_stage = k == 7 ? -1 : k; sp_prof_last = t; if (k == 7) sp_prof_steps[sp_prof_b]++; }
__attribute__((destructor)) static void sp_prof_dump(void) {
    for (int b = 0; b < 8; b++) { if (!sp_prof_steps[b]) continue; double tot = 0;
        __builtin_printf("sp n=%lu steps %ld:", sp_prof_size[b], sp_prof_steps[b]);
        for (int k = 0; k < 7; k++) { __builtin_printf(" %d:%.4f", k, sp_prof_t[b][k]); tot += sp_prof_t[b][k]; }
        __builtin_printf(" total %.4f maxchunk %.3f maxtree %.3f trees %.0f\n", tot, sp_prof_maxchunk[b]/(double)sp_prof_steps[b], sp_prof_maxtree[b]/(double)sp_prof_steps[b], sp_prof_ntrees[b]/(double)sp_prof_steps[b]); } }
#define SP_MARK(k) do { sp_prof_mark(k, s->n); if (k == 4) { size_t mc = 0, mt = 0; \
  for (size_t c = 0; c < s->nchunk; c++) if (s->chunk_at[c + 1] - s->chunk_at[c] > mc) mc = s->chunk_at[c + 1] - s->chunk_at[c]; \
  for (size_t c = 0; c < s->ntrees; c++) if ((size_t)s->tree_at[c + 1] - s->tree_at[c] > mt) mt = (size_t)s->tree_at[c + 1] - s->tree_at[c]; \
  sp_prof_maxchunk[sp_prof_b] += (double)mc / (double)s->n; sp_prof_maxtree[sp_prof_b] += (double)mt / (double)s->n; sp_prof_ntrees[sp_prof_b] += (double)s->ntrees; } } while (0)
