// Stopping the core's long loops from outside.  The core never calls R: a
// caller passes a callback (std::function<void()>, may be empty) that throws
// to stop the computation, e.g. R's glue passes one that checks for Ctrl-C.
// Loops poll it through an InterruptPoll at every step, however short: a
// poll reads a clock (tens of nanoseconds) and calls the callback only when
// kInterruptPeriod has passed since it last did, so a loop answers Ctrl-C
// within about that period plus one step, whatever the cost of a step.
// Pure C++17: no R headers.
#ifndef GPSVM_INTERRUPT_HPP
#define GPSVM_INTERRUPT_HPP

#include <chrono>
#include <functional>
#include <utility>

namespace gpsvm {

constexpr std::chrono::milliseconds kInterruptPeriod{20};

class InterruptPoll {
 public:
  explicit InterruptPoll(std::function<void()> callback) : callback_(std::move(callback)) {}

  // Calls the callback at the first poll and then whenever kInterruptPeriod
  // has passed since the last call.
  void operator()() {
    if (!callback_) return;
    const Clock::time_point now = Clock::now();
    if (called_ && now - last_ < kInterruptPeriod) return;
    called_ = true;
    last_ = now;
    callback_();
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::function<void()> callback_;
  Clock::time_point last_;
  bool called_ = false;
};

}  // namespace gpsvm

#endif  // GPSVM_INTERRUPT_HPP
