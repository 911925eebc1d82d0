// Runs the C++ core's test cases (every TEST_CASE linked in), or those whose
// name contains the first argument, and ends with one line
//   cpp-tests: N passed, N failed
// counting cases (a case fails when any of its checks fails or it throws);
// the line before counts the checks.  Each case is announced by a line
// 'cpp-tests: running <name>', which tells whose code a crash came from.
// The exit status is non-zero when anything failed or no case ran.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "check.hpp"

int main(int argc, char** argv) {
  using gpsvm_test::tally;
  // line-buffered, so that a sanitizer report, which ends the process,
  // does not swallow what was printed before it
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  const char* filter = argc > 1 ? argv[1] : nullptr;
  long cases = 0, failed_cases = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const gpsvm_test::TestCase& tc : gpsvm_test::registry()) {
    if (filter && !std::strstr(tc.name, filter)) continue;
    ++cases;
    gpsvm_test::current_case() = tc.name;
    std::printf("cpp-tests: running %s\n", tc.name);
    const long failed_before = tally().failed;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      tc.body();
    } catch (const std::exception& e) {
      gpsvm_test::record(false, __FILE__, __LINE__,
                         std::string("unexpected exception: ") + e.what());
    } catch (...) {
      gpsvm_test::record(false, __FILE__, __LINE__, "unexpected exception of unknown type");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (tally().failed > failed_before) ++failed_cases;
    if (seconds > 1.0) std::printf("slow case (%.1f s): %s\n", seconds, tc.name);
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("cpp-tests: %ld checks passed, %ld failed, in %.1f s\n", tally().passed,
              tally().failed, total);
  std::printf("cpp-tests: %ld passed, %ld failed\n", cases - failed_cases, failed_cases);
  return tally().failed == 0 && cases > 0 ? 0 : 1;
}
