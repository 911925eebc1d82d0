// A minimal test harness for the C++ core: test cases register themselves
// with TEST_CASE, checks record a pass or a failure (with file, line and the
// values involved) and go on, so one run reports every failure.  An exception
// that escapes a case counts as one failed check.  main.cpp runs the cases.
#ifndef GPSVM_TESTS_CHECK_HPP
#define GPSVM_TESTS_CHECK_HPP

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace gpsvm_test {

struct TestCase {
  const char* name;
  void (*body)();
};

inline std::vector<TestCase>& registry() {
  static std::vector<TestCase> cases;
  return cases;
}

struct Registrar {
  Registrar(const char* name, void (*body)()) { registry().push_back({name, body}); }
};

struct Tally {
  long passed = 0;
  long failed = 0;
};

inline Tally& tally() {
  static Tally t;
  return t;
}

// The case being run, for failure messages.
inline const char*& current_case() {
  static const char* name = "";
  return name;
}

inline bool record(bool ok, const char* file, int line, const std::string& what) {
  if (ok) {
    ++tally().passed;
  } else {
    ++tally().failed;
    std::printf("FAILED %s (%s:%d)\n  %s\n", current_case(), file, line, what.c_str());
  }
  return ok;
}

// GPSVM_TEST_MARGIN=f in the environment prints every passing CHECK_NEAR
// whose error uses more than the fraction f of its tolerance: how close the
// code runs to each tolerance.
inline double margin_threshold() {
  static const double f = [] {
    const char* s = std::getenv("GPSVM_TEST_MARGIN");
    return s ? std::atof(s) : -1.0;
  }();
  return f;
}

inline std::string show(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// |actual - expected| <= tol; both infinite with the same sign also passes.
inline bool near(double actual, double expected, double tol) {
  if (std::isnan(actual) || std::isnan(expected)) return false;
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::fabs(actual - expected) <= tol;
}

inline void report_margin(double actual, double expected, double tol, const char* file, int line,
                          const std::string& note) {
  const double f = margin_threshold();
  if (f < 0.0 || !(tol > 0.0) || !std::isfinite(actual - expected)) return;
  const double used = std::fabs(actual - expected) / tol;
  if (used > f && used <= 1.0)
    std::printf("margin %.3g of tolerance at %s:%d %s\n", used, file, line, note.c_str());
}

inline std::string near_message(const char* a, const char* b, double actual, double expected,
                                double tol, const std::string& note) {
  std::ostringstream out;
  out << a << " = " << show(actual) << ", " << b << " = " << show(expected) << ", difference "
      << show(actual - expected) << " > " << show(tol);
  if (!note.empty()) out << " [" << note << "]";
  return out.str();
}

// Relative tolerance: |actual - expected| <= rel * |expected| (or <= rel
// when expected is 0).
inline double rel_tol(double expected, double rel) {
  return rel * (expected == 0.0 ? 1.0 : std::fabs(expected));
}

}  // namespace gpsvm_test

#define GPSVM_TEST_CAT2(a, b) a##b
#define GPSVM_TEST_CAT(a, b) GPSVM_TEST_CAT2(a, b)

// TEST_CASE("what it checks") { ... }
#define TEST_CASE(name) GPSVM_TEST_CASE_N(name, __COUNTER__)
#define GPSVM_TEST_CASE_N(name, n)                                         \
  static void GPSVM_TEST_CAT(gpsvm_test_body_, n)();                       \
  static const ::gpsvm_test::Registrar GPSVM_TEST_CAT(gpsvm_test_reg_, n)( \
      name, &GPSVM_TEST_CAT(gpsvm_test_body_, n));                         \
  static void GPSVM_TEST_CAT(gpsvm_test_body_, n)()

#define CHECK(cond) ::gpsvm_test::record(static_cast<bool>(cond), __FILE__, __LINE__, #cond)

// CHECK but with a note (e.g. the loop index or the parameters) in the message.
#define CHECK_MSG(cond, note)                                       \
  ::gpsvm_test::record(static_cast<bool>(cond), __FILE__, __LINE__, \
                       std::string(#cond) + " [" + (note) + "]")

// |a - b| <= tol (absolute).
#define CHECK_NEAR(a, b, tol) CHECK_NEAR_MSG(a, b, tol, std::string())

#define CHECK_NEAR_MSG(a, b, tol, note)                                                           \
  do {                                                                                            \
    const double gpsvm_a_ = (a), gpsvm_b_ = (b), gpsvm_t_ = (tol);                                \
    ::gpsvm_test::report_margin(gpsvm_a_, gpsvm_b_, gpsvm_t_, __FILE__, __LINE__, note);          \
    ::gpsvm_test::record(::gpsvm_test::near(gpsvm_a_, gpsvm_b_, gpsvm_t_), __FILE__, __LINE__,    \
                         ::gpsvm_test::near_message(#a, #b, gpsvm_a_, gpsvm_b_, gpsvm_t_, note)); \
  } while (0)

// |a - b| <= rel |b|.
#define CHECK_REL(a, b, rel) CHECK_REL_MSG(a, b, rel, std::string())

#define CHECK_REL_MSG(a, b, rel, note)                                         \
  do {                                                                         \
    const double gpsvm_b2_ = (b);                                              \
    CHECK_NEAR_MSG(a, gpsvm_b2_, ::gpsvm_test::rel_tol(gpsvm_b2_, rel), note); \
  } while (0)

// The statement throws an exception of the given type (or one derived from it).
#define CHECK_THROWS(statement, type)                                              \
  do {                                                                             \
    bool gpsvm_thrown_ = false;                                                    \
    std::string gpsvm_other_;                                                      \
    try {                                                                          \
      statement;                                                                   \
    } catch (const type&) {                                                        \
      gpsvm_thrown_ = true;                                                        \
    } catch (const std::exception& e) {                                            \
      gpsvm_other_ = std::string(" (threw another exception: ") + e.what() + ")";  \
    }                                                                              \
    ::gpsvm_test::record(gpsvm_thrown_, __FILE__, __LINE__,                        \
                         std::string(#statement " throws " #type) + gpsvm_other_); \
  } while (0)

#endif  // GPSVM_TESTS_CHECK_HPP
