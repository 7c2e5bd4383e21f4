#include "compare_command.h"

#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "contend/runner/regression/ci_reports.h"

namespace contend::tools {
namespace {

struct CompareOptions {
  std::string now;
  std::vector<std::string> references;
  VerdictArgs verdict;
};

// A results folder or its summary.json.
Result<runner::Summary> summary_at(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return runner::read_summary(path + "/summary.json");
  }
  return runner::read_summary(path);
}

// The reference runs, each checked against `now`; errors name the file.
Result<std::vector<runner::Summary>> references_of(const CompareOptions& o, const runner::Summary& now,
                                                   runner::VerdictOptions& options) {
  std::vector<runner::Summary> runs;
  for (const std::string& path : o.references) {
    auto s = summary_at(path);
    if (!s) {
      return s.error();
    }
    if (runs.empty()) {
      auto parsed = verdict_options(o.verdict, s->compare_throughput);
      if (!parsed) {
        return parsed.error();
      }
      options = *parsed;
    }
    if (auto ok = runner::check_comparable(now, *s, path, options.quantity == runner::Quantity::kThroughput); !ok) {
      return ok.error();
    }
    runs.push_back(std::move(*s));
  }
  return runs;
}

int compare(const CompareOptions& o) {
  auto now = summary_at(o.now);
  runner::VerdictOptions options;
  auto references = now ? references_of(o, *now, options) : Result<std::vector<runner::Summary>>(now.error());
  if (!references) {
    return fail("compare", references.error().message);
  }
  const std::string name = o.references.size() == 1 ? o.references.front()
                                                    : std::to_string(o.references.size()) + " runs (" +
                                                          o.references.front() + " ... " + o.references.back() + ")";
  return report_verdicts(*now, *references, name, options, o.verdict.reports);
}

}  // namespace

Result<double> parse_fraction(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  const bool percent = end != nullptr && *end == '%' && end[1] == '\0';
  if (percent) {
    v /= 100;
  } else if (text.empty() || end == nullptr || *end != '\0') {
    return make_error(Errc::kInvalidArgument, "expected a percentage like \"5%\" or a fraction, got \"" + text + "\"");
  }
  if (!(v >= 0 && v <= 1)) {
    return make_error(Errc::kInvalidArgument, "expected 0% to 100%, got \"" + text + "\"");
  }
  if (!percent && v == 1) {
    return make_error(Errc::kInvalidArgument, "\"1\" would be 100%: write \"1%\" (or 0.01) for 1%, \"100%\" for 100%");
  }
  return v;
}

void add_tolerance_option(CLI::App* app, VerdictArgs& a) {
  app->add_option("--tolerance", a.tolerance,
                  "The smallest loss that matters (percent or fraction): a cell fails when it is "
                  "significantly slower and its estimated loss is larger")
      ->capture_default_str();
}

CLI::Option* add_by_option(CLI::App* app, VerdictArgs& a, const std::string& name) {
  return app
      ->add_option(name, a.by,
                   "What is compared: `throughput` (runs on one machine) or `speedup` over the baseline schedule, "
                   "repetition by repetition (runs on different machines); default: what the reference's summary "
                   "compares (speedup for contend's pipeline, throughput for a user's job)")
      ->check(CLI::IsMember({"throughput", "speedup"}));
}

void add_reports_option(CLI::App* app, VerdictArgs& a) {
  app->add_option("--reports", a.reports,
                  "Also write junit.xml, summary.md, benchmark.json (github-action-benchmark) and bmf.json "
                  "(Bencher) into this folder (docs/regression.md)");
}

Result<runner::VerdictOptions> verdict_options(const VerdictArgs& a, bool compared_throughput) {
  runner::VerdictOptions o;
  auto tolerance = parse_fraction(a.tolerance);
  if (!tolerance) {
    return with_context(tolerance.error(), "--tolerance");
  }
  o.tolerance = *tolerance;
  const bool throughput = a.by.empty() ? compared_throughput : a.by == "throughput";
  o.quantity = throughput ? runner::Quantity::kThroughput : runner::Quantity::kSpeedup;
  return o;
}

int report_verdicts(const runner::Summary& now, const std::vector<runner::Summary>& references,
                    const std::string& reference_name, const runner::VerdictOptions& o,
                    const std::string& reports_dir) {
  const auto verdicts = runner::verdicts(now, references, o);
  std::printf(
      "\n%s against %s (%s, tolerance %.1f%%):\n%s", now.experiment.c_str(), reference_name.c_str(),
      runner::quantity_name(o.quantity), 100 * o.tolerance,
      runner::verdict_table(verdicts, o.quantity == runner::Quantity::kThroughput ? now.unit : "x " + now.baseline, o)
          .c_str());
  int failing = 0;
  int unresolved = 0;
  for (const runner::Verdict& v : verdicts) {
    failing += v.fails ? 1 : 0;
    unresolved += v.change == runner::Change::kUnresolved ? 1 : 0;
  }
  if (!reports_dir.empty()) {
    const runner::CiReportInput in{&now, &verdicts, nullptr, o, reference_name};
    if (auto ok = runner::write_ci_reports(reports_dir, in); !ok) {
      std::fprintf(stderr, "contend: reports: %s\n", ok.error().message.c_str());
      return 1;
    }
    std::printf("reports: %s/{junit.xml,summary.md,benchmark.json,bmf.json}\n", reports_dir.c_str());
  }
  if (unresolved > 0) {
    std::printf(
        "warning: %d cell(s) unresolved: their repetitions cannot tell a loss of the tolerance (or of their "
        "drift their reference runs allow) from noise\n",
        unresolved);
  }
  std::printf("%s\n", failing > 0 ? (std::to_string(failing) + " regression(s)").c_str() : "no regression");
  return failing > 0 ? 3 : 0;
}

std::function<int()> add_compare_command(CLI::App& sub) {
  auto o = std::make_shared<CompareOptions>();
  sub.add_option("now", o->now, "This run: a results folder or its summary.json")->required();
  sub.add_option(
         "references", o->references,
         "The run it is compared with, a results folder or a summary.json; several (the last few of a "
         "history) pool their repetitions, so that one lucky or unlucky run does not bias the verdict; by speedup, a "
         "cell whose reference runs drift more than --tolerance is allowed their drift (95% prediction interval)")
      ->required();
  add_tolerance_option(&sub, o->verdict);
  add_by_option(&sub, o->verdict, "--by");
  add_reports_option(&sub, o->verdict);
  sub.footer(
      "Per cell: the ratio now/reference (Hodges-Lehmann) with its interval, and the Mann-Whitney U test of the "
      "repetitions. Exit 3 when a cell is significantly slower by more than --tolerance (by speedup against "
      "several runs, than the drift they allow where that is wider), or missing; "
      "1 on bad input. docs/regression.md");
  return [o] { return compare(*o); };
}

}  // namespace contend::tools
