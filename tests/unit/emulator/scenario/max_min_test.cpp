// Max-min fair shares resumed after streams come and go are the shares found afresh: random ports
// and streams, changed step by step, each step's shares compared with progressive filling's.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "scenario/max_min.h"

namespace {

using contend::emulator::detail::Change;
using contend::emulator::detail::share_max_min;
using contend::emulator::detail::Stream;

constexpr double kUnshaped = std::numeric_limits<double>::infinity();

struct Drawn {
  std::vector<std::size_t> path;
  double cap_bps;
};

Drawn draw(std::mt19937& rng, std::size_t ports) {
  std::uniform_int_distribution<std::size_t> port(0, ports - 1);
  std::uniform_int_distribution<int> length(1, 4);
  Drawn d{{}, std::bernoulli_distribution(0.2)(rng) ? std::uniform_real_distribution<double>(0.1, 4)(rng) : kUnshaped};
  for (int n = length(rng); n > 0; --n) {
    const std::size_t p = port(rng);
    if (std::find(d.path.begin(), d.path.end(), p) == d.path.end()) {
      d.path.push_back(p);
    }
  }
  return d;
}

std::vector<Stream> streams_of(const std::vector<Drawn>& drawn) {
  std::vector<Stream> out;
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    out.push_back({i, &drawn[i].path, drawn[i].cap_bps});
  }
  return out;
}

}  // namespace

TEST_CASE("max-min shares resumed after streams came and went equal the shares found afresh", "[fabric][max-min]") {
  contend::emulator::detail::SharingSpace space;  // one for every call, as a replay's
  for (unsigned seed = 1; seed <= 200; ++seed) {
    contend::emulator::detail::SharingSpace fresh;
    std::mt19937 rng(seed);
    const std::size_t ports = 2 + seed % 12;
    std::vector<double> capacity;
    for (std::size_t p = 0; p < ports; ++p) {
      capacity.push_back(std::bernoulli_distribution(0.1)(rng) ? kUnshaped
                                                               : std::uniform_real_distribution<double>(1, 10)(rng));
    }
    std::vector<Drawn> drawn;
    for (std::size_t n = 1 + seed % 20; n > 0; --n) {
      drawn.push_back(draw(rng, ports));
    }
    std::vector<Stream> before = streams_of(drawn);
    share_max_min(before, capacity, Change{}, space);
    for (int step = 0; step < 10; ++step) {
      // Some streams go (their ports named), some come; the others keep their shares from before.
      std::vector<Drawn> next;
      std::vector<double> kept_bps;
      std::vector<std::size_t> kept_bottleneck;
      Change change{false, {}};
      for (std::size_t i = 0; i < drawn.size(); ++i) {
        if (std::bernoulli_distribution(0.2)(rng)) {
          change.gone_ports.insert(change.gone_ports.end(), drawn[i].path.begin(), drawn[i].path.end());
          continue;
        }
        next.push_back(drawn[i]);
        kept_bps.push_back(before[i].rate_bps);
        kept_bottleneck.push_back(before[i].bottleneck);
      }
      for (int n = std::uniform_int_distribution<int>(0, 3)(rng); n > 0; --n) {
        next.push_back(draw(rng, ports));
      }
      drawn = std::move(next);
      std::vector<Stream> resumed = streams_of(drawn);
      for (std::size_t i = 0; i < kept_bps.size(); ++i) {
        resumed[i].before_bps = kept_bps[i];
        resumed[i].before_bottleneck = kept_bottleneck[i];
      }
      std::vector<Stream> afresh = streams_of(drawn);
      share_max_min(resumed, capacity, change, space);
      share_max_min(afresh, capacity, Change{}, fresh);
      for (std::size_t i = 0; i < drawn.size(); ++i) {
        INFO("seed " << seed << ", step " << step << ", stream " << i);
        if (std::isfinite(afresh[i].rate_bps)) {
          CHECK(resumed[i].rate_bps == Approx(afresh[i].rate_bps).epsilon(1e-9));
        } else {
          CHECK(std::isinf(resumed[i].rate_bps));
        }
        if (afresh[i].rate_bps < drawn[i].cap_bps * (1 - 1e-9)) {
          CHECK(resumed[i].bottleneck == afresh[i].bottleneck);  // at its cap, a full port's tie may name either
        }
      }
      before = std::move(resumed);
    }
  }
}
