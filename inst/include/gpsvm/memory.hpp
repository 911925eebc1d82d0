// Refusing an allocation the machine cannot hold before it is tried.  A
// dense fit on 50000 observations asks for n x n matrices of 20 GB each: the
// allocation fails with std::bad_alloc after a long wait (or the system
// starts swapping), and the error says nothing of the size.  The places
// that allocate matrices whose size grows with the data (kernel matrices,
// designs, cross-kernel blocks) call require_memory() first, which
// compares the bytes with what the system says is available and throws
// MemoryShortage naming both.
//
// "Available" is the least of what the system reports: on Linux
// MemAvailable of /proc/meminfo and the room left under a cgroup (v2)
// memory limit; on any POSIX system the address-space limit (ulimit -v),
// less what the process holds (on Linux); on macOS the physical memory.  Where nothing is known (Windows) nothing
// is refused here, and an allocation that fails is still turned into a
// clear error by the caller (R's glue).
// Pure C++17 + POSIX where available: no R headers.
#ifndef GPSVM_MEMORY_HPP
#define GPSVM_MEMORY_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif
#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

namespace gpsvm {

class MemoryShortage : public std::runtime_error {
 public:
  explicit MemoryShortage(const std::string& what) : std::runtime_error(what) {}
};

namespace memory_detail {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

// The first number after `key` in a file of "key value" lines, or -1.
inline double field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream rest(line.substr(key.size()));
    double value = -1.0;
    rest >> value;
    return value;
  }
  return -1.0;
}

// The single number in a file, or -1 (also for "max", an unlimited cgroup).
inline double single_value(const char* path) {
  std::ifstream in(path);
  double value = -1.0;
  if (!(in >> value)) return -1.0;
  return value;
}

}  // namespace memory_detail

// Bytes this process can still allocate, as far as the system says;
// infinity when it says nothing.
inline double available_memory() {
  namespace md = memory_detail;
  double available = md::kUnknown;
#if defined(__linux__)
  const double kb = md::field("/proc/meminfo", "MemAvailable:");
  if (kb >= 0.0) available = std::min(available, 1024.0 * kb);
  const double limit = md::single_value("/sys/fs/cgroup/memory.max");
  const double used = md::single_value("/sys/fs/cgroup/memory.current");
  if (limit > 0.0 && used >= 0.0) available = std::min(available, std::max(0.0, limit - used));
#endif
#if defined(__APPLE__)
  std::uint64_t physical = 0;
  std::size_t length = sizeof physical;
  if (sysctlbyname("hw.memsize", &physical, &length, nullptr, 0) == 0 && physical > 0)
    available = std::min(available, static_cast<double>(physical));
#endif
#if defined(__unix__) || defined(__APPLE__)
  struct rlimit address_space;
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    double room = static_cast<double>(address_space.rlim_cur);
#if defined(__linux__)
    const double used_kb = md::field("/proc/self/status", "VmSize:");  // what the process holds
    if (used_kb >= 0.0) room = std::max(0.0, room - 1024.0 * used_kb);
#endif
    available = std::min(available, room);
  }
#endif
  return available;
}

// "20.0 GB", "512 MB": a size as the messages give it.
inline std::string format_bytes(double bytes) {
  char buffer[48];
  if (bytes >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.1f GB", bytes / 1e9);
  else
    std::snprintf(buffer, sizeof buffer, "%.0f MB", bytes / 1e6);
  return buffer;
}

// Throws MemoryShortage when `bytes` (for `what`, e.g. "the 50000 x 50000
// kernel matrix and the factors beside it") exceed the memory available.
// Below kCheckedBytes nothing is asked: reading the system's figures costs
// tens of microseconds, and such blocks are what a fit allocates often.
constexpr double kCheckedBytes = 256.0 * 1048576.0;

inline void require_memory(double bytes, const std::string& what) {
  if (bytes <= kCheckedBytes) return;
  const double available = available_memory();
  if (bytes <= available) return;  // (false for NaN)
  throw MemoryShortage(what + " need about " + format_bytes(bytes) +
                       " of memory, more than the " + format_bytes(available) + " available");
}

// require_memory() for `count` matrices of rows x cols doubles, `what`
// naming them ("a 50000 x 50000 kernel matrix"); the message gives the
// count and the size.
inline void require_matrices(double rows, double cols, double count, const std::string& what) {
  const double each = 8.0 * rows * cols;
  if (count * each <= kCheckedBytes) return;
  require_memory(count * each,
                 what + (count > 1.0 ? " and the work beside it (" + std::to_string(
                                           static_cast<long long>(count)) +
                                           " matrices of " + format_bytes(each) + ")"
                                     : ""));
}

}  // namespace gpsvm

#endif  // GPSVM_MEMORY_HPP
