// The CPU emulator's scheduler (kernels/sim/cuda_sim.hpp says what it emulates and checks).
//
// A block's threads are ucontext fibers on the launching thread. The scheduler resumes every
// runnable thread once, in an order shuffled with the device's seed; a thread runs until it
// waits (at __syncthreads or a warp shuffle) or returns. When none can run, the scheduler
// releases a warp whose 32 lanes all wait at a shuffle, else the block when every thread waits
// at the same __syncthreads; anything else is a divergence or a deadlock, reported with where
// each thread waits. Errors inside a thread (a kernel's exception, a misused shuffle) end the
// block: the other suspended threads are resumed once more to unwind their stacks, then the
// error is thrown from the launch.
#include "kernels/sim/cuda_sim.hpp"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define CONVBENCH_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONVBENCH_SIM_ASAN 1
#endif
#endif
#ifdef CONVBENCH_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace convbench::kernels::sim {
namespace {

enum class Wait { none, block_barrier, warp_shuffle, done };

// Thrown inside a suspended thread when its block is abandoned, to unwind its stack.
struct Abandon {};

// One emulated thread: its context, its stack (with a guard page below) and where it waits.
struct Fiber {
  ucontext_t context{};
  char* mapping = nullptr;  // guard page, then the stack
  size_t mapping_bytes = 0;
  uint3 index{};
  Wait wait = Wait::none;
  const char* file = "";  // the __syncthreads it waits at
  int line = 0;
  int64_t shuffles = 0;  // shuffles this lane has taken part in
  std::exception_ptr error;
  void* fake_stack = nullptr;  // AddressSanitizer's, while suspended

  char* stack() const { return mapping + getpagesize(); }
  size_t stack_bytes() const { return mapping_bytes - static_cast<size_t>(getpagesize()); }
};

// A warp's shuffle exchange: two generations of 32 lanes' values (see shuffle_down).
struct WarpSlots {
  unsigned char value[2][32][8] = {};
};

constexpr int kWarp = 32;

}  // namespace

struct Device::State {
  Options options;
  std::mt19937_64 rng;
  Counts counts;
  std::map<std::string, int64_t> by_kernel;
  std::vector<Fiber> fibers;  // the running block's threads, reused block after block
  std::vector<WarpSlots> warps;
  ucontext_t scheduler{};
  const void* scheduler_stack = nullptr;  // AddressSanitizer: the launching thread's stack
  size_t scheduler_stack_bytes = 0;
  void* scheduler_fake_stack = nullptr;
  int running = -1;  // the fiber that runs now
  bool abandoning = false;
  uint3 block{};
  dim3 block_dim, grid_dim;
  const LaunchShape* shape = nullptr;
  const std::function<void()>* thread = nullptr;
  cudaError_t last_error = cudaSuccess;

  ~State() {
    for (Fiber& f : fibers)
      if (f.mapping) munmap(f.mapping, f.mapping_bytes);
  }
};

namespace {

// The emulated GPU of this thread, as a CUDA context is current to a thread: set by Device's
// constructor, cleared by its destructor. The kernels reach it through threadIdx and friends,
// which take no argument on a GPU either.
thread_local Device::State* current_device = nullptr;

Device::State& device() {
  if (!current_device) throw std::logic_error("kernels/sim: a kernel launched without a sim::Device on this thread");
  return *current_device;
}

Fiber& running_fiber() {
  Device::State& s = device();
  if (s.running < 0) throw std::logic_error("kernels/sim: threadIdx or a barrier outside a kernel");
  return s.fibers[static_cast<size_t>(s.running)];
}

std::string where(const Device::State& s) {
  return std::string(s.shape->kernel) + ", block (" + std::to_string(s.block.x) + ", " + std::to_string(s.block.y) +
         ", " + std::to_string(s.block.z) + ")";
}

// From the running fiber back to the scheduler; `finished`: the fiber will not run again.
void yield_to_scheduler(Device::State& s, Fiber& f, bool finished) {
#ifdef CONVBENCH_SIM_ASAN
  __sanitizer_start_switch_fiber(finished ? nullptr : &f.fake_stack, s.scheduler_stack, s.scheduler_stack_bytes);
#endif
  swapcontext(&f.context, &s.scheduler);
  // Resumed.
#ifdef CONVBENCH_SIM_ASAN
  __sanitizer_finish_switch_fiber(f.fake_stack, &s.scheduler_stack, &s.scheduler_stack_bytes);
#else
  (void)finished;
#endif
  if (s.abandoning) throw Abandon{};
}

void fiber_main() {
  Device::State& s = *current_device;
  Fiber& f = s.fibers[static_cast<size_t>(s.running)];
#ifdef CONVBENCH_SIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &s.scheduler_stack, &s.scheduler_stack_bytes);
#endif
  try {
    (*s.thread)();
  } catch (const Abandon&) {
  } catch (...) {
    f.error = std::current_exception();
  }
  f.wait = Wait::done;
#ifdef CONVBENCH_SIM_ASAN
  __sanitizer_start_switch_fiber(nullptr, s.scheduler_stack, s.scheduler_stack_bytes);
#endif
  swapcontext(&f.context, &s.scheduler);  // never resumed
}

void resume(Device::State& s, int index) {
  Fiber& f = s.fibers[static_cast<size_t>(index)];
  s.running = index;
#ifdef CONVBENCH_SIM_ASAN
  __sanitizer_start_switch_fiber(&s.scheduler_fake_stack, f.stack(), f.stack_bytes());
#endif
  swapcontext(&s.scheduler, &f.context);
#ifdef CONVBENCH_SIM_ASAN
  __sanitizer_finish_switch_fiber(s.scheduler_fake_stack, nullptr, nullptr);
#endif
  s.running = -1;
}

void prepare_fibers(Device::State& s, int threads) {
  const size_t page = static_cast<size_t>(getpagesize());
  const size_t bytes = (s.options.stack_bytes + page - 1) / page * page + page;
  while (s.fibers.size() < static_cast<size_t>(threads)) {
    Fiber f;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error("kernels/sim: no memory for a thread's stack");
    f.mapping = static_cast<char*>(m);
    f.mapping_bytes = bytes;
    mprotect(f.mapping, page, PROT_NONE);  // a stack overflow faults instead of writing elsewhere
    getcontext(&f.context);                // once: makecontext below rewrites the rest for every block
    s.fibers.push_back(f);
  }
  for (int t = 0; t < threads; ++t) {
    Fiber& f = s.fibers[static_cast<size_t>(t)];
#ifdef CONVBENCH_SIM_ASAN
    ASAN_UNPOISON_MEMORY_REGION(f.stack(), f.stack_bytes());  // frames a previous thread left
#endif
    const unsigned x = s.block_dim.x, y = s.block_dim.y;
    const unsigned u = static_cast<unsigned>(t);
    f.index = uint3{u % x, u / x % y, u / (x * y)};
    f.wait = Wait::none;
    f.file = "";
    f.line = 0;
    f.shuffles = 0;
    f.error = nullptr;
    f.fake_stack = nullptr;
    f.context.uc_stack.ss_sp = f.stack();
    f.context.uc_stack.ss_size = f.stack_bytes();
    f.context.uc_link = nullptr;
    makecontext(&f.context, fiber_main, 0);
  }
}

// Runs the suspended threads of an abandoned block once more, so that each unwinds its stack.
void abandon_block(Device::State& s, int threads) {
  s.abandoning = true;
  for (int t = 0; t < threads; ++t)
    if (s.fibers[static_cast<size_t>(t)].wait != Wait::done) resume(s, t);
  s.abandoning = false;
}

std::string describe_waits(const Device::State& s, int threads) {
  std::string out;
  int first = 0;
  const auto label = [&](int t) {
    const Fiber& f = s.fibers[static_cast<size_t>(t)];
    switch (f.wait) {
      case Wait::done: return std::string("exited");
      case Wait::block_barrier:
        return "wait at __syncthreads (" + std::string(f.file) + ":" + std::to_string(f.line) + ")";
      case Wait::warp_shuffle: return "wait at their warp's shuffle #" + std::to_string(f.shuffles + 1);
      case Wait::none: break;
    }
    return std::string("run");
  };
  for (int t = 1; t <= threads; ++t) {
    if (t < threads && label(t) == label(first)) continue;
    out += (out.empty() ? "" : "; ") + std::string("threads ") + std::to_string(first) +
           (t - 1 > first ? "-" + std::to_string(t - 1) : "") + " " + label(first);
    first = t;
  }
  return out;
}

// One block to its end. Throws what a thread threw, or the divergence or deadlock found.
void run_block(Device::State& s, int threads) {
  prepare_fibers(s, threads);
  s.warps.assign(static_cast<size_t>((threads + kWarp - 1) / kWarp), WarpSlots{});
  std::vector<int> ready;
  const auto fail = [&](const std::string& what) {
    abandon_block(s, threads);
    throw std::logic_error("kernels/sim: " + where(s) + ": " + what);
  };
  while (true) {
    ready.clear();
    for (int t = 0; t < threads; ++t)
      if (s.fibers[static_cast<size_t>(t)].wait == Wait::none) ready.push_back(t);
    if (!ready.empty()) {
      if (s.options.shuffle) std::shuffle(ready.begin(), ready.end(), s.rng);
      for (int t : ready) {
        resume(s, t);
        if (Fiber& f = s.fibers[static_cast<size_t>(t)]; f.error) {
          const std::exception_ptr error = f.error;
          abandon_block(s, threads);
          std::rethrow_exception(error);
        }
      }
      continue;
    }
    int done = 0, at_barrier = 0;
    for (int t = 0; t < threads; ++t) {
      done += s.fibers[static_cast<size_t>(t)].wait == Wait::done;
      at_barrier += s.fibers[static_cast<size_t>(t)].wait == Wait::block_barrier;
    }
    if (done == threads) return;
    // A warp whose lanes all wait at a shuffle goes on.
    bool released = false;
    for (int w = 0; w * kWarp < threads; ++w) {
      const int begin = w * kWarp, end = std::min(threads, begin + kWarp);
      const Fiber& lead = s.fibers[static_cast<size_t>(begin)];
      bool all = true;
      for (int t = begin; t < end && all; ++t) {
        const Fiber& f = s.fibers[static_cast<size_t>(t)];
        all = f.wait == Wait::warp_shuffle && f.shuffles == lead.shuffles;
      }
      if (!all) continue;
      for (int t = begin; t < end; ++t) s.fibers[static_cast<size_t>(t)].wait = Wait::none;
      released = true;
    }
    if (released) continue;
    if (at_barrier == threads) {
      const Fiber& lead = s.fibers[0];
      for (int t = 1; t < threads; ++t) {
        const Fiber& f = s.fibers[static_cast<size_t>(t)];
        if (f.line != lead.line || std::string(f.file) != lead.file)
          fail("threads wait at different __syncthreads calls (divergent barriers): " + describe_waits(s, threads));
      }
      for (int t = 0; t < threads; ++t) s.fibers[static_cast<size_t>(t)].wait = Wait::none;
      ++s.counts.barriers;
      continue;
    }
    fail("no thread can go on (" +
         std::string(at_barrier > 0 && done > 0 ? "threads exited while others wait at __syncthreads"
                                                : "a warp's lanes do not all reach the same shuffle") +
         "): " + describe_waits(s, threads));
  }
}

}  // namespace

Device::Device() : Device(Options{}) {}

Device::Device(Options options) : state_(std::make_unique<State>()) {
  if (current_device) throw std::logic_error("kernels/sim: a second sim::Device on one thread");
  state_->options = options;
  state_->rng.seed(options.seed);
  current_device = state_.get();
}

Device::~Device() {
  if (current_device == state_.get()) current_device = nullptr;
}

const Device::Counts& Device::counts() const { return state_->counts; }
const std::map<std::string, int64_t>& Device::launches_by_kernel() const { return state_->by_kernel; }

void run(const LaunchShape& shape, const std::function<void()>& thread) {
  Device::State& s = device();
  if (s.running >= 0) throw std::logic_error("kernels/sim: a kernel launched from inside a kernel");
  ++s.counts.launches;
  ++s.by_kernel[shape.kernel];
  s.shape = &shape;
  s.thread = &thread;
  s.block_dim = shape.block;
  s.grid_dim = shape.grid;
  const int threads = static_cast<int>(shape.block.x * shape.block.y * shape.block.z);
  const int64_t blocks = int64_t{shape.grid.x} * shape.grid.y * shape.grid.z;
  std::vector<int64_t> order(static_cast<size_t>(blocks));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (s.options.shuffle) std::shuffle(order.begin(), order.end(), s.rng);
  for (int64_t b : order) {
    const auto u = static_cast<uint64_t>(b);
    s.block = uint3{static_cast<unsigned>(u % shape.grid.x), static_cast<unsigned>(u / shape.grid.x % shape.grid.y),
                    static_cast<unsigned>(u / (uint64_t{shape.grid.x} * shape.grid.y))};
    run_block(s, threads);
    ++s.counts.blocks;
    s.counts.threads += threads;
  }
  s.shape = nullptr;
  s.thread = nullptr;
}

const uint3& thread_index() { return running_fiber().index; }
const uint3& block_index() {
  running_fiber();
  return device().block;
}
const dim3& block_size() {
  running_fiber();
  return device().block_dim;
}
const dim3& grid_size() {
  running_fiber();
  return device().grid_dim;
}

void sync_threads(const char* file, int line) {
  Device::State& s = device();
  Fiber& f = running_fiber();
  f.wait = Wait::block_barrier;
  f.file = file;
  f.line = line;
  yield_to_scheduler(s, f, false);
}

// Two generations of slots, so that a lane that has read its partner's value and runs on to
// the next shuffle writes the other generation: the one its partner may not have read yet is
// left alone, and the next write to it waits for the warp's next release, which every lane
// reaches only after reading.
void shuffle_down(unsigned mask, const void* value, void* out, size_t bytes, unsigned delta, int width) {
  Device::State& s = device();
  Fiber& f = running_fiber();
  const int threads = static_cast<int>(s.block_dim.x * s.block_dim.y * s.block_dim.z);
  const int linear = static_cast<int>(f.index.x + s.block_dim.x * (f.index.y + s.block_dim.y * f.index.z));
  const int warp = linear / kWarp, lane = linear % kWarp;
  if (mask != 0xffffffffu || width != kWarp)
    throw std::logic_error("kernels/sim: " + where(s) + ": a shuffle with mask " + std::to_string(mask) +
                           " and width " + std::to_string(width) + " (the emulator runs full-warp shuffles only)");
  if ((warp + 1) * kWarp > threads)
    throw std::logic_error("kernels/sim: " + where(s) + ": a full-mask shuffle in warp " + std::to_string(warp) +
                           ", which has " + std::to_string(threads - warp * kWarp) + " threads, not 32");
  const int generation = static_cast<int>(f.shuffles % 2);
  WarpSlots& slots = s.warps[static_cast<size_t>(warp)];
  std::memcpy(slots.value[generation][lane], value, bytes);
  f.wait = Wait::warp_shuffle;
  yield_to_scheduler(s, f, false);
  ++f.shuffles;
  if (lane == 0) ++s.counts.shuffles;
  const unsigned source = static_cast<unsigned>(lane) + delta;
  std::memcpy(out, source < static_cast<unsigned>(kWarp) ? slots.value[generation][source] : value, bytes);
}

cudaError_t memset_async(void* data, int value, size_t bytes, cudaStream_t /*stream*/) {
  device();
  if (bytes > 0) std::memset(data, value, bytes);
  return cudaSuccess;
}

cudaError_t get_last_error() {
  Device::State& s = device();
  const cudaError_t e = s.last_error;
  s.last_error = cudaSuccess;
  return e;
}

}  // namespace convbench::kernels::sim
