#include "contend/common/cpu_times.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>

#include "contend/common/fd.h"

namespace contend {

Result<CpuTimes> parse_cpu_times(std::string_view proc_stat) {
  const std::string_view line = proc_stat.substr(0, proc_stat.find('\n'));
  if (line.substr(0, 4) != "cpu ") {
    return make_error(Errc::kParse, "the first line is not the \"cpu\" total");
  }
  constexpr int kFields = 8;  // user nice system idle iowait irq softirq steal
  CpuTimes out;
  std::size_t at = 4;
  for (int field = 0; field < kFields; ++field) {
    at = line.find_first_not_of(' ', at);
    if (at == std::string_view::npos) {
      return make_error(Errc::kParse,
                        "the \"cpu\" line has " + std::to_string(field) + " counters, fewer than the 8 up to steal");
    }
    std::uint64_t ticks = 0;
    const auto [end, ec] = std::from_chars(line.data() + at, line.data() + line.size(), ticks);
    if (ec != std::errc() || (end != line.data() + line.size() && *end != ' ')) {
      return make_error(Errc::kParse,
                        "counter " + std::to_string(field + 1) + " of the \"cpu\" line is not a count of ticks");
    }
    if (ticks > UINT64_MAX - out.total) {
      return make_error(Errc::kParse, "the \"cpu\" line's counters overflow");
    }
    out.total += ticks;
    if (field == kFields - 1) {
      out.steal = ticks;
    }
    if (field < 3) {  // user nice system
      out.busy += ticks;
    }
    at = static_cast<std::size_t>(end - line.data());
  }
  return out;
}

Result<CpuTimes> read_cpu_times(const std::string& path) {
  auto text = read_file(path, 1 << 20);
  if (!text) {
    return text.error();
  }
  auto times = parse_cpu_times(*text);
  if (!times) {
    return with_context(times.error(), path);
  }
  return times;
}

double steal_share(const CpuTimes& before, const CpuTimes& after) {
  if (after.total <= before.total || after.steal < before.steal) {
    return 0;
  }
  return static_cast<double>(after.steal - before.steal) / static_cast<double>(after.total - before.total);
}

double own_cpu_seconds() {
  double s = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    if (::getrusage(who, &u) == 0) {
      for (const timeval& t : {u.ru_utime, u.ru_stime}) {
        s += static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
      }
    }
  }
  return s;
}

double others_share(const CpuTimes& before, const CpuTimes& after, double own_s, double ticks_per_s) {
  if (after.total <= before.total || after.busy < before.busy || !(ticks_per_s > 0)) {
    return 0;
  }
  const double busy_s = static_cast<double>(after.busy - before.busy) / ticks_per_s;
  const double total_s = static_cast<double>(after.total - before.total) / ticks_per_s;
  return std::clamp((busy_s - own_s) / total_s, 0.0, 1.0);
}

}  // namespace contend
