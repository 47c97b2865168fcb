// A libFuzzer target run without libFuzzer, so that CI (gcc, no clang)
// fuzzes it for a few seconds on every run (ctest: Fuzz.OnnxShortRun):
//
//   fuzz_onnx_short SECONDS SEED CORPUS_DIR   mutate the seeds for SECONDS
//   fuzz_onnx_short FILE...                   replay inputs (a crash found)
//
// It feeds each seed, then seeded random mutations of them (bytes flipped
// to edge values, cut, duplicated, spliced from another seed): blind
// compared with libFuzzer's coverage guidance (scripts/fuzz_loader.sh), but
// deterministic for one SEED and cheap. A crash or an exception other than
// kiln::Error ends the process (the test fails); the input that did it is
// written to ./fuzz-crash-SEED first, for replay.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int*, char***);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One mutation of `input`; `other` is another seed to splice from.
std::string mutate(std::string input, const std::string& other, std::mt19937_64& rng) {
  auto below = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  static constexpr unsigned char kEdges[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x08, 0x10, 0x12, 0x1a, 0x22};
  for (int edits = 1 + static_cast<int>(below(4)); edits > 0; --edits) {
    switch (below(6)) {
      case 0:  // a byte to an edge value (varint continuation, field tags)
        if (!input.empty()) input[below(input.size())] = static_cast<char>(kEdges[below(sizeof kEdges)]);
        break;
      case 1:  // a random byte
        if (!input.empty()) input[below(input.size())] = static_cast<char>(rng());
        break;
      case 2:  // cut the end off
        input.resize(below(input.size() + 1));
        break;
      case 3: {  // erase a run
        std::size_t at = below(input.size() + 1);
        input.erase(at, below(16));
        break;
      }
      case 4: {  // duplicate a run (repeated fields, nested messages twice)
        std::size_t at = below(input.size() + 1);
        std::string run = input.substr(at, below(64));
        input.insert(below(input.size() + 1), run);
        break;
      }
      default: {  // splice in part of another seed
        std::size_t from = below(other.size() + 1);
        input.insert(below(input.size() + 1), other.substr(from, below(256)));
        break;
      }
    }
  }
  return input;
}

void run_one(const std::string& input, const std::string& crash_name) {
  // Written before the run and removed after: a crash leaves it behind.
  { std::ofstream(crash_name, std::ios::binary) << input; }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  fs::remove(crash_name);
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  if (argc >= 2 && fs::is_regular_file(argv[1])) {
    for (int i = 1; i < argc; ++i) {
      std::string input = read_file(argv[i]);
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
      std::cout << "ran " << argv[i] << "\n";
    }
    return 0;
  }
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " SECONDS SEED CORPUS_DIR | " << argv[0] << " FILE...\n";
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  const std::string seed = argv[2];
  std::vector<std::string> seeds;
  for (const auto& entry : fs::directory_iterator(argv[3]))
    if (entry.is_regular_file()) seeds.push_back(read_file(entry.path()));
  if (seeds.empty()) {
    std::cerr << "no seeds in " << argv[3] << "\n";
    return 2;
  }
  std::mt19937_64 rng(std::strtoull(seed.c_str(), nullptr, 10));
  const std::string crash_name = "fuzz-crash-" + seed;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long runs = 0;
  for (const std::string& s : seeds) run_one(s, crash_name), ++runs;
  while (std::chrono::steady_clock::now() < end) {
    const std::string& base = seeds[rng() % seeds.size()];
    run_one(mutate(base, seeds[rng() % seeds.size()], rng), crash_name);
    ++runs;
  }
  std::cout << "fuzzed " << runs << " inputs from " << seeds.size() << " seeds in " << seconds << " s\n";
  return 0;
}
