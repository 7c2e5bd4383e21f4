// junit.xml: a test suite of the experiment, a test case per cell. A comparison's case fails on a
// failing verdict and is skipped when unresolved; a history's fails when the cell's latest change
// point is a loss. The document keeps to the Jenkins xUnit plugin's JUnit schema (junit-4.xsd),
// which GitLab, GitHub's test reporters and Jenkins read.

#include <cstdio>
#include <sstream>

#include "regression/reports/registry.h"

namespace contend::runner::ci_reports {
namespace {

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        out += static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c;
    }
  }
  return out;
}

struct Case {
  std::string classname;
  std::string name;
  std::string failure;  // message; empty: passed
  std::string detail;
  std::string skipped;  // why; empty: not skipped
};

std::string numbers_of(const Verdict& v, const std::string& unit) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "reference median %.6g, now %.6g %s; ratio %.4f [%.4f, %.4f] at %.1f%%; p %.4f; n %zu+%zu",
                stats_of(v.reference).median, stats_of(v.now).median, unit.c_str(), v.shift.ratio, v.shift.low,
                v.shift.high, 100 * v.shift.confidence, v.shift.p, v.reference.size(), v.now.size());
  return buf;
}

std::vector<Case> verdict_cases(const CiReportInput& in) {
  std::vector<Case> out;
  const std::string unit = in.options.quantity == Quantity::kThroughput ? in.now->unit : "x " + in.now->baseline;
  for (const Verdict& v : *in.verdicts) {
    Case c{in.now->experiment + "." + v.scenario, v.schedule, "", numbers_of(v, unit), ""};
    if (v.fails) {
      c.failure = std::string(change_name(v.change)) + ": " + v.why;
    } else if (v.change == Change::kUnresolved) {
      c.skipped = "unresolved: " + v.why + " (" + c.detail + ")";
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> history_cases(const CiReportInput& in) {
  std::vector<Case> out;
  const History& h = *in.history;
  for (const CellSeries& s : h.cells) {
    Case c{in.now->experiment + "." + s.scenario, s.schedule, "", "", ""};
    std::ostringstream detail;
    detail << s.values.size() << " runs; change points:";
    for (const ChangePoint& p : s.changes) {
      char buf[256];
      std::snprintf(buf, sizeof buf, " run %zu (commit %s) %.6g -> %.6g (%+.1f%%, p %.3f);", s.runs[p.index] + 1,
                    h.runs[s.runs[p.index]].commit.c_str(), p.before, p.after, 100 * (p.after / p.before - 1), p.p);
      detail << buf;
    }
    c.detail = s.changes.empty() ? detail.str() + " none" : detail.str();
    if (ends_in_loss(s)) {
      const ChangePoint& p = s.changes.back();
      char buf[256];
      std::snprintf(buf, sizeof buf, "a loss of %.1f%% since commit %s, still there at the last run",
                    100 * (1 - p.after / p.before), h.runs[s.runs[p.index]].commit.c_str());
      c.failure = buf;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::string junit(const CiReportInput& in) {
  const std::vector<Case> cases = in.history != nullptr ? history_cases(in) : verdict_cases(in);
  int failures = 0;
  int skipped = 0;
  for (const Case& c : cases) {
    failures += c.failure.empty() ? 0 : 1;
    skipped += c.skipped.empty() ? 0 : 1;
  }
  std::ostringstream x;
  const std::string n = std::to_string(cases.size());
  const std::string suite = escaped(in.now->experiment);
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<testsuites name=\"contend regression\" tests=\"" << n << "\" failures=\"" << failures << "\" errors=\"0\">\n"
    << "  <testsuite name=\"" << suite << "\" tests=\"" << n << "\" failures=\"" << failures
    << "\" errors=\"0\" skipped=\"" << skipped << "\">\n    <properties>\n";
  const std::pair<const char*, std::string> props[] = {{"quantity", quantity_name(in.options.quantity)},
                                                       {"tolerance", std::to_string(in.options.tolerance)},
                                                       {"reference", in.reference},
                                                       {"mode", in.now->mode}};
  for (const auto& [name, value] : props) {
    x << "      <property name=\"" << name << "\" value=\"" << escaped(value) << "\"/>\n";
  }
  x << "    </properties>\n";
  for (const Case& c : cases) {
    x << "    <testcase classname=\"" << escaped(c.classname) << "\" name=\"" << escaped(c.name) << "\">\n";
    if (!c.skipped.empty()) {
      x << "      <skipped>" << escaped(c.skipped) << "</skipped>\n";
    }
    if (!c.failure.empty()) {
      x << "      <failure type=\"regression\" message=\"" << escaped(c.failure) << "\">" << escaped(c.detail)
        << "</failure>\n";
    }
    x << "      <system-out>" << escaped(c.detail) << "</system-out>\n    </testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

}  // namespace contend::runner::ci_reports
