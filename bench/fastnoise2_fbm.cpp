// FastNoise2's 6-octave fbm (Simplex or Perlin source) over a SIZE x SIZE grid, one thread.
// Built by bench/noise_vs_fastnoise2.sh against FastNoise2's own sources (github.com/Auburn/
// FastNoise2); it is the anchor for bench_noise's fbm, which samples the same grid (x = 0.5 * i
// world units, feature size 256, gain 0.5, lacunarity 2). Prints one line per run: wall and
// thread CPU seconds.
#include <FastNoise/FastNoise.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

int main(int argc, char **argv)
{
    if (argc < 2 || (std::strcmp(argv[1], "simplex") != 0 && std::strcmp(argv[1], "perlin") != 0)) {
        std::fprintf(stderr, "usage: fastnoise2_fbm simplex|perlin [SIZE 4096] [RUNS 1] [avx2]\n");
        return 2;
    }
    // "avx2" caps the kernels at AVX2 (what most desktop CPUs run); else the CPU's best.
    const FastSIMD::FeatureSet level = argc > 4 && std::strcmp(argv[4], "avx2") == 0
                                           ? FastSIMD::FeatureSet::AVX2
                                           : FastSIMD::FeatureSet::Max;
    const bool simplex = std::strcmp(argv[1], "simplex") == 0;
    const int size = argc > 2 ? std::atoi(argv[2]) : 4096;
    const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
    if (size < 16 || size > 32768 || runs < 1) return 2;

    FastNoise::SmartNode<FastNoise::FractalFBm> fbm = FastNoise::New<FastNoise::FractalFBm>(level);
    if (simplex) {
        auto source = FastNoise::New<FastNoise::Simplex>(level);
        source->SetScale(256.0f);
        fbm->SetSource(source);
    } else {
        auto source = FastNoise::New<FastNoise::Perlin>(level);
        source->SetScale(256.0f);
        fbm->SetSource(source);
    }
    fbm->SetOctaveCount(6);
    fbm->SetGain(0.5f);
    fbm->SetLacunarity(2.0f);

    std::vector<float> grid((size_t)size * (size_t)size);
    std::printf("FastNoise2 %s, %s fbm 6 octaves, %d x %d\n",
                FastSIMD::GetFeatureSetString(fbm->GetActiveFeatureSet()),
                simplex ? "Simplex" : "Perlin", size, size);
    // Run -1 warms caches and the vector units and is not reported (as in bench_noise fbm).
    for (int run = -1; run < runs; run++) {
        timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        auto t0 = std::chrono::steady_clock::now();
        fbm->GenUniformGrid2D(grid.data(), 0.0f, 0.0f, size, size, 0.5f, 0.5f, 42);
        auto t1 = std::chrono::steady_clock::now();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        const double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
        if (run < 0) continue;
        double sum = 0.0;
        for (size_t k = 0; k < grid.size(); k += 997)
            sum += grid[k];
        std::printf("wall %.4f s cpu %.4f s (checksum %.4f)\n",
                    std::chrono::duration<double>(t1 - t0).count(), cpu, sum);
    }
    return 0;
}
