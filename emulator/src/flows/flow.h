#pragma once
// Private: one background flow of a FlowEngine, its sink and source threads and what they count
// (flow.cpp). Its counters are atomics that stats() reads; the rest is the engine's, under its
// lock.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "contend/common/fd.h"
#include "contend/common/socket.h"
#include "contend/emulator/flows/flow_engine.h"
#include "flows/job_iterations.h"

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
  std::shared_ptr<JobIterations> job;  // a closed-loop flow's job (spec.iterate_bytes > 0)
  int job_slot = 0;

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
  // The sink's socket, non-blocking: a TCP listener or a bound UDP socket.
  Result<std::unique_ptr<Socket>> open_sink(const std::string& what);
  // Counts what arrives on `socket` (and, TCP, the streams it accepts) until stop_sink; `watch`
  // adds a socket to the epoll set `ep`.
  void drain(Socket& socket, const Fd& ep, const std::function<bool(Socket&)>& watch);
  // Source: connects the streams and sends until stopped.
  void run_source(Ready& ready);
  // spec.streams sockets (TcpSocket or UdpSocket), each from connect_stream.
  template <typename S>
  Result<std::vector<S>> connect_streams(const std::string& what);
  // One stream of the source, connected to the sink and non-blocking; retried until
  // connect_timeout_s while the sink is not up yet (hosts mode: another host's clock).
  template <typename S>
  Result<S> connect_stream(const std::string& what);
  // A socket bound to the source address (when there is one), TCP with its congestion control
  // and pacing.
  template <typename S>
  Result<S> open_stream(const std::string& what);
  // Bulk streams: each writable socket gets the next write; a closed-loop flow's iterations.
  void tcp_loop(std::vector<TcpSocket>& socks);
  // Writes to the writable streams of `ep` until `bytes` are sent (all: -1) or the source stops;
  // false on a socket's error (the flow's error then) or a stop.
  bool tcp_send(const Fd& ep, std::uint64_t bytes);
  // A closed-loop flow: computes, sends its bytes and waits for the job's iteration to end, over
  // and over until stopped.
  void iterate(const Fd& ep);
  // Sleeps `s` seconds (a job's compute, or its wait for its slot), or until the source stops (false).
  bool pause(double s);
  // Paced datagrams: batches (sendmmsg, UDP GSO where the kernel has it) released by a token
  // bucket (flow_pacer.h), round-robin over the streams.
  void udp_loop(std::vector<UdpSocket>& socks);
};

}  // namespace contend::emulator
