// Anchor for bench_drainage: RichDEM's fills, D8 directions, flat routing and accumulation on the
// heights bench_drainage writes (RichDEM is header-only; see bench/richdem_drainage.sh).
#include <richdem/common/Array2D.hpp>
#include <richdem/depressions/Wei2018.hpp>
#include <richdem/depressions/Zhou2016.hpp>
#include <richdem/flats/flat_resolution.hpp>
#include <richdem/flowmet/d8_flowdirs.hpp>
#include <richdem/methods/d8_methods.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace richdem;

static double cpu_s()
{
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double wall_s()
{
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// The heights as a DEM; samples at or below the sea (if any) are no-data, which RichDEM's fills
// treat as outlets, as terrane does.
static Array2D<float> load(const std::vector<float> &h, int n, double sea)
{
  Array2D<float> dem(n, n, 0.0f);
  dem.setNoData(-1e30f);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      const float v = h[(size_t)y * n + x];
      dem(x, y) = (!std::isnan(sea) && v <= sea) ? -1e30f : v;
    }
  return dem;
}

int main(int argc, char **argv)
{
  if (argc < 4) {
    std::fprintf(stderr, "usage: richdem_drainage HEIGHTS.f32 SAMPLES_PER_SIDE SEA|nan [RUNS]\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  const double sea = std::atof(argv[3]);
  const int runs = argc > 4 ? std::atoi(argv[4]) : 3;
  std::vector<float> h((size_t)n * n);
  FILE *f = std::fopen(argv[1], "rb");
  if (!f || std::fread(h.data(), sizeof(float), h.size(), f) != h.size()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  std::fclose(f);
  const char *names[3] = {"Wei2018 fill", "Wei2018 fill + D8 + accumulation (flats unrouted)",
                          "Zhou2016 fill + D8 + Barnes2014 flats + accumulation"};
  for (int v = 0; v < 3; v++) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < runs; r++) {
      Array2D<float> dem = load(h, n, sea);
      const double w0 = wall_s(), c0 = cpu_s();
      if (v < 2)
        PriorityFlood_Wei2018(dem);
      else
        PriorityFlood_Zhou2016(dem);
      if (v > 0) {
        Array2D<d8_flowdir_t> dirs;
        d8_flow_directions(dem, dirs);
        if (v == 2) {
          Array2D<int32_t> mask, labels;
          resolve_flats_barnes(dem, dirs, mask, labels);
          d8_flow_flats(mask, labels, dirs);
        }
        Array2D<uint32_t> area;
        d8_flow_accum(dirs, area);
      }
      wall.push_back(wall_s() - w0);
      cpu.push_back(cpu_s() - c0);
    }
    std::vector<double> ws = wall, cs = cpu;
    std::sort(ws.begin(), ws.end());
    std::sort(cs.begin(), cs.end());
    std::printf("%-55s %dx%d  wall median %6.3f s best %6.3f s  cpu median %6.3f s best %6.3f s\n",
                names[v], n, n, ws[ws.size() / 2], ws[0], cs[cs.size() / 2], cs[0]);
  }
  return 0;
}
