#pragma once
// Private: one background flow of a FlowEngine, its sink and source threads and what they count
// (flow.cpp). Its counters are atomics that stats() reads; the rest is the engine's, under its
// lock.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "contend/common/fd.h"
#include "contend/emulator/flows/flow_engine.h"

namespace contend::emulator {

// Seconds on the monotonic clock: flows' start and stop times.
double flow_clock_s();

class Ready;  // a thread's start-up result (flow.cpp)

struct FlowEngine::Flow {
  FlowSpec spec;
  FlowEndpoints ends;
  int port = 0;
  double connect_timeout_s = 0;
  std::atomic<bool> stop_source{false};  // the source stops first, so the sink sees all it sent
  std::atomic<bool> stop_sink{false};
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> sent{0};
  double started_s = 0;
  double stopped_s = 0;
  bool running = false;
  std::mutex error_mutex;
  std::string error;      // under error_mutex
  std::string send_path;  // under error_mutex: how the source sends (UDP: batches, GSO or why not)
  std::thread sink;
  std::thread source;

  // Keeps the first error: why the flow stopped early.
  void set_error(const std::string& e);
  void set_send_path(const std::string& path);
  // Stops the flow; returns when its source stopped sending (the end of its active time).
  double join();
  // Runs `body` (run_sink or run_source) on `thread` and waits until it is ready; on failure
  // stops the flow and returns why. The thread owns `ready`: destroying it here while the thread
  // is still inside set_value would be a race. An exception in the body becomes the flow's error
  // (and the start's, when it came before the body was ready): none leaves the thread.
  Result<void> launch(std::thread& thread, void (Flow::*body)(Ready&));
  // Sink: accepts the streams (TCP) or binds (UDP) and counts what arrives.
  void run_sink(Ready& ready);
  // One stream of the source: a socket bound to the source address (when there is one), with its
  // congestion control and pacing, connected to the sink; retried until connect_timeout_s while
  // the sink is not up yet (hosts mode: another host's clock).
  Result<Fd> connect_stream(const std::string& what);
  // Source: connects the streams and sends until stopped.
  void run_source(Ready& ready);
  // Bulk streams: each writable socket gets the next write.
  void tcp_loop(std::vector<Fd>& socks);
  // Paced datagrams: batches (sendmmsg, UDP GSO where the kernel has it) released by a token
  // bucket (flow_pacer.h), round-robin over the streams.
  void udp_loop(std::vector<Fd>& socks);
};

}  // namespace contend::emulator
