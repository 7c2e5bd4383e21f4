#include "scenario/max_min.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>

namespace contend::emulator::detail {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();
constexpr double kTolerance = 1e-9;  // relative, where shares found at different times are compared

// Progressive filling: every unfrozen stream's rate rises together until a port is full (its
// streams freeze there) or a stream reaches its cap. The ports wait in a heap by their share
// (what is left of them over their unfrozen streams), each rise taken from its top.
class MaxMin {
 public:
  // With `hold`, the streams from before are held at their shares from the start (resume()).
  MaxMin(std::vector<Stream>& streams, const std::vector<double>& capacity, SharingSpace& space, bool hold)
      : streams_(streams),
        capacity_(capacity),
        room_(space.room),
        active_(space.active),
        first_(space.first),
        on_(space.on),
        mark_(space.mark),
        round_(space.round),
        load_(space.load),
        most_(space.most),
        shared_(space.shared) {
    const std::size_t ports = capacity.size();
    room_.assign(capacity.begin(), capacity.end());
    active_.assign(ports, 0);
    first_.assign(ports + 1, 0);
    mark_.resize(ports, 0);  // older rounds' marks stay below round_
    load_.resize(ports);
    most_.resize(ports);
    shared_.assign(streams.size(), 0);
    for (Stream& st : streams) {
      const bool held = hold && st.before_bps >= 0;
      for (std::size_t p : *st.ports) {
        ++first_[p + 1];
        if (held) {
          room_[p] -= std::isfinite(st.before_bps) ? st.before_bps : 0;
        } else {
          ++active_[p];
        }
      }
      if (held) {
        ++space.held;
        st.rate_bps = st.before_bps;
        st.bottleneck = st.before_bottleneck;
        st.frozen = true;
      }
    }
    for (std::size_t p = 0; p < ports; ++p) {
      first_[p + 1] += first_[p];
    }
    on_.resize(first_[ports]);
    space.filled.assign(first_.begin(), first_.end() - 1);
    for (std::size_t i = 0; i < streams.size(); ++i) {
      for (std::size_t p : *streams[i].ports) {
        on_[space.filled[p]++] = i;
      }
    }
  }

  void afresh() {
    std::vector<std::size_t> all(streams_.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      all[i] = i;
    }
    fill(all);
  }

  // The streams from before held at their shares (by the constructor), the new ones shared over
  // what they leave; then every stream that no longer holds shared again with them, until every
  // stream holds.
  void resume(const Change& change) {
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (!streams_[i].frozen) {
        again.push_back(i);
        shared_[i] = 1;
      }
    }
    for (;;) {
      fill(again);
      const std::vector<std::size_t> more = unheld(again, change.gone_ports);
      if (more.empty()) {
        return;
      }
      for (std::size_t i : again) {
        thaw(streams_[i]);
      }
      for (std::size_t i : more) {
        thaw(streams_[i]);
        shared_[i] = 1;
        again.push_back(i);
      }
    }
  }

 private:
  // What port p leaves each unfrozen stream (never below 0: what others hold may sum a rounding
  // over its capacity).
  double share(std::size_t p) const { return std::max(room_[p], 0.0) / active_[p]; }

  // The unfrozen streams of `set` shared over the room their ports have left.
  void fill(const std::vector<std::size_t>& set) {
    std::vector<std::size_t> by_cap(set);
    std::sort(by_cap.begin(), by_cap.end(),
              [&](std::size_t a, std::size_t b) { return streams_[a].cap_bps < streams_[b].cap_bps; });
    ++round_;
    std::vector<std::pair<double, std::size_t>> heap;
    for (std::size_t i : set) {
      for (std::size_t p : *streams_[i].ports) {
        if (mark_[p] != round_) {
          mark_[p] = round_;
          heap.emplace_back(share(p), p);
        }
      }
    }
    ports_ = Heap(std::greater<>{}, std::move(heap));
    std::size_t next_cap = 0;
    for (std::size_t left = set.size(); left > 0;) {
      const double port_level = fullest_port();
      while (next_cap < by_cap.size() && streams_[by_cap[next_cap]].frozen) {
        ++next_cap;
      }
      const double cap_level = next_cap < by_cap.size() ? streams_[by_cap[next_cap]].cap_bps : kUnlimited;
      const double level = std::min(port_level, cap_level);
      if (!std::isfinite(level)) {
        for (std::size_t i : set) {
          freeze(streams_[i], level);  // only unshaped ports and unpaced streams left
        }
        return;
      }
      if (port_level <= level * (1 + 1e-12)) {
        left -= freeze_port(ports_.top().second, level);
        ports_.pop();
      } else {
        freeze(streams_[by_cap[next_cap]], level);  // held by its pacing
        --left;
      }
    }
  }

  // The least share of a port that still has unfrozen streams. A port's share only grows as its
  // streams freeze (each at a level at most its share), so its key in the heap is a bound from
  // below: a stale top is put back at its share, and a top whose key is its share is the least.
  double fullest_port() {
    while (!ports_.empty()) {
      const auto [key, p] = ports_.top();
      if (active_[p] > 0 && key == share(p)) {
        return key;
      }
      ports_.pop();
      if (active_[p] > 0) {
        ports_.push({share(p), p});
      }
    }
    return kUnlimited;
  }

  // Port p's unfrozen streams frozen at `level`, each with its bottleneck; how many.
  std::size_t freeze_port(std::size_t p, double level) {
    std::size_t frozen = 0;
    for (std::size_t k = first_[p]; k < first_[p + 1]; ++k) {
      Stream& st = streams_[on_[k]];
      if (!st.frozen) {
        st.bottleneck = bottleneck_of(st, level);
        freeze(st, level);
        ++frozen;
      }
    }
    return frozen;
  }

  // The lowest-numbered port of `st` that is full at `level`.
  std::size_t bottleneck_of(const Stream& st, double level) const {
    std::size_t out = kNoPort;
    for (std::size_t q : *st.ports) {
      if (active_[q] > 0 && share(q) <= level * (1 + 1e-12)) {
        out = std::min(out, q);
      }
    }
    return out;
  }

  void freeze(Stream& st, double level) {
    if (st.frozen) {
      return;
    }
    st.rate_bps = level;
    st.frozen = true;
    for (std::size_t p : *st.ports) {
      room_[p] -= std::isfinite(level) ? level : 0;  // an unlimited stream crosses unshaped ports alone
      --active_[p];
    }
  }

  void thaw(Stream& st) {
    for (std::size_t p : *st.ports) {
      room_[p] += std::isfinite(st.rate_bps) ? st.rate_bps : 0;
      ++active_[p];
    }
    st.rate_bps = 0;
    st.frozen = false;
    st.bottleneck = kNoPort;
  }

  // The streams, not among those just shared (`again`), that must be shared again with them: those
  // that give a stream of `again` less than themselves at a full port, and those whose bottleneck's
  // load changed (a port of `again` or `gone`) that no longer hold (a stream held by a port whose
  // load did not change still is).
  std::vector<std::size_t> unheld(const std::vector<std::size_t>& again, const std::vector<std::size_t>& gone) {
    ++round_;
    std::vector<std::size_t> out;
    const auto add = [&](std::size_t i) {
      if (shared_[i] == 0) {
        shared_[i] = 2;  // joining
        out.push_back(i);
      }
    };
    for (std::size_t i : again) {
      Stream& st = streams_[i];
      if (holds(st)) {
        continue;
      }
      for (std::size_t q : *st.ports) {
        for (std::size_t k = first_[q]; full(q) && k < first_[q + 1]; ++k) {
          if (streams_[on_[k]].rate_bps * (1 - kTolerance) > st.rate_bps) {
            add(on_[k]);
          }
        }
      }
    }
    std::vector<std::size_t> changed(gone);
    for (std::size_t i : again) {
      changed.insert(changed.end(), streams_[i].ports->begin(), streams_[i].ports->end());
    }
    for (std::size_t q : changed) {
      for (std::size_t k = first_[q]; k < first_[q + 1]; ++k) {
        Stream& st = streams_[on_[k]];
        if (shared_[on_[k]] == 0 && st.bottleneck == q && !holds(st)) {
          add(on_[k]);
        }
      }
    }
    return out;
  }

  // Whether `st` holds at its rate: unshaped, at its cap, or crossing a full port on which no
  // stream has more (its bottleneck, the lowest-numbered of several, then kept).
  bool holds(Stream& st) {
    if (!std::isfinite(st.rate_bps) || st.rate_bps >= st.cap_bps * (1 - kTolerance)) {
      return true;
    }
    std::size_t found = kNoPort;
    for (std::size_t q : *st.ports) {
      if (full(q) && st.rate_bps >= most_[q] * (1 - kTolerance)) {
        found = std::min(found, q);
      }
    }
    st.bottleneck = found;
    return found != kNoPort;
  }

  // Whether port q carries its capacity (its load and largest share counted once a round).
  bool full(std::size_t q) {
    count(q);
    return std::isfinite(capacity_[q]) && load_[q] >= capacity_[q] * (1 - kTolerance);
  }

  void count(std::size_t q) {
    if (mark_[q] == round_) {
      return;
    }
    mark_[q] = round_;
    load_[q] = 0;
    most_[q] = 0;
    for (std::size_t k = first_[q]; k < first_[q + 1]; ++k) {
      load_[q] += streams_[on_[k]].rate_bps;
      most_[q] = std::max(most_[q], streams_[on_[k]].rate_bps);
    }
  }

  using Heap =
      std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>>;

  std::vector<Stream>& streams_;
  const std::vector<double>& capacity_;
  std::vector<double>& room_;
  std::vector<int>& active_;         // unfrozen streams by port
  std::vector<std::size_t>& first_;  // port p's streams are on_[first_[p]] to on_[first_[p + 1]]
  std::vector<std::size_t>& on_;     // every stream, by port
  Heap ports_;                       // ports with unfrozen streams, keyed by their share when last put in
  std::vector<long>& mark_;          // by port: the round that last saw it
  long& round_;
  std::vector<double>& load_;  // by port, as count() found them
  std::vector<double>& most_;
  std::vector<char>& shared_;  // by stream: 1 shared again, 2 joining them
};

}  // namespace

void share_max_min(std::vector<Stream>& streams, const std::vector<double>& capacity, const Change& change,
                   SharingSpace& space) {
  const bool resume = !change.afresh &&
                      std::any_of(streams.begin(), streams.end(), [](const Stream& st) { return st.before_bps >= 0; });
  MaxMin m(streams, capacity, space, resume);
  if (resume) {
    m.resume(change);
  } else {
    m.afresh();
  }
}

}  // namespace contend::emulator::detail
