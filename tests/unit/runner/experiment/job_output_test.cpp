// Output parsers (runner/experiment/job_output.h) on lines in the real formats: Megatron-LM's training_log
// (megatron/training/training.py), torchtitan's step line (torchtitan/components/metrics.py),
// contend's JSON lines, and users' regular expressions; and the "output" object's errors.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "contend/runner/experiment/job_output.h"

using namespace contend;
using namespace contend::runner;

namespace {

OutputSpec spec_of(const std::string& json_text) {
  const nlohmann::json j = nlohmann::json::parse(json_text);
  const JsonReader r(j, "exp.json", "/workload/output");
  auto spec = parse_output(r);
  INFO(json_text);
  REQUIRE(spec.ok());
  return *spec;
}

std::string output_error_of(const std::string& json_text) {
  const nlohmann::json j = nlohmann::json::parse(json_text);
  const JsonReader r(j, "exp.json", "/workload/output");
  auto spec = parse_output(r);
  INFO(json_text);
  REQUIRE_FALSE(spec.ok());
  return spec.error().message;
}

std::unique_ptr<OutputParser> parser_for(const std::string& json_text) {
  return make_output_parser(spec_of(json_text));
}

// Megatron-LM's line as training_log prints it (2024: seconds in the time stamp; 2026: microseconds).
std::string megatron_line(int iteration, int consumed, const char* elapsed_ms, int batch) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                " [2024-05-01 10:00:00] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                "(ms): %s | learning rate: 1.000000E-04 | global batch size: %5d | lm loss: 7.100000E+00 | loss "
                "scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |",
                iteration, 500, consumed, elapsed_ms, batch);
  return buf;
}

}  // namespace

TEST_CASE("a Megatron line every log interval is that many global batches in that many mean iteration times",
          "[job-output]") {
  auto p = parser_for(R"j({"parser": "megatron"})j");
  // --log-interval 10, --global-batch-size 32: the first line counts one iteration.
  auto first = p->parse(megatron_line(10, 320, "1500.0", 32));
  REQUIRE(first);
  CHECK(first->amount == 32);
  CHECK(first->seconds == Approx(1.5));
  CHECK(first->rate == 0);
  auto second = p->parse(megatron_line(20, 640, "1234.5", 32));
  REQUIRE(second);
  CHECK(second->amount == 320);
  CHECK(second->seconds == Approx(12.345));
  // A batch-size ramp-up: the line's own global batch size counts.
  auto third = p->parse(megatron_line(25, 960, "2000.0", 64));
  REQUIRE(third);
  CHECK(third->amount == 5 * 64);
  CHECK(third->seconds == Approx(10.0));
  CHECK(output_unit(spec_of(R"j({"parser": "megatron"})j")) == "samples/s");
}

TEST_CASE("a Megatron counter that goes back, as after a restart from a checkpoint, counts one iteration",
          "[job-output]") {
  auto p = parser_for(R"j({"parser": "megatron"})j");
  REQUIRE(p->parse(megatron_line(1010, 32320, "1000.0", 32)));
  auto again = p->parse(megatron_line(1000, 32000, "1100.0", 32));
  REQUIRE(again);
  CHECK(again->amount == 32);
  CHECK(again->seconds == Approx(1.1));
}

TEST_CASE("Megatron's 2026 line with microseconds, throughput and a torchrun prefix is read like the others",
          "[job-output]") {
  auto p = parser_for(R"j({"parser": "megatron"})j");
  const std::string line =
      "[rank7]: [2026-01-27 08:53:38.123456] iteration        1/     500 | consumed samples:           32 | "
      "elapsed time per iteration (ms): 9000.0 | throughput per GPU (TFLOP/s/GPU): 123.4 | learning rate: "
      "1.000000E-04 | global batch size:    32 | lm loss: 1.050000E+01 | loss scale: 1.0 |";
  auto step = p->parse(line);
  REQUIRE(step);
  CHECK(step->amount == 32);
  CHECK(step->seconds == Approx(9.0));
}

TEST_CASE("Megatron's validation line and other lines are not steps and leave the counter alone", "[job-output]") {
  auto p = parser_for(R"j({"parser": "megatron"})j");
  REQUIRE(p->parse(megatron_line(10, 320, "1500.0", 32)));
  CHECK_FALSE(p->parse(" validation loss at iteration 20 on validation set | lm loss value: 6.900000E+00 | "));
  CHECK_FALSE(p->parse("building GPT model ..."));
  // Without its batch size or time a line is not a step, and the next one still counts from 10.
  CHECK_FALSE(p->parse(" [2024-05-01 10:00:00] iteration       20/     500 | consumed samples:          640 |"));
  auto step = p->parse(megatron_line(20, 640, "1500.0", 32));
  REQUIRE(step);
  CHECK(step->amount == 320);
}

TEST_CASE("torchtitan's coloured step line is a rate of its tps with the thousands separators read", "[job-output]") {
  auto p = parser_for(R"j({"parser": "torchtitan"})j");
  const std::string line =
      "[titan] 2025-07-15 13:49:37,123 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  9.12340  "
      "\x1b[38;2;180;60;0mgrad_norm:  1.2345  \x1b[38;2;54;234;195mmemory: 12.34GiB(15.67%)  \x1b[34mtps: "
      "1,234,567  \x1b[36mtflops: 56.78  \x1b[35mmfu: 12.34%\x1b[39m";
  auto step = p->parse(line);
  REQUIRE(step);
  CHECK(step->rate == 1234567);
  CHECK(step->amount == 0);
  CHECK(step->seconds == 0);
  CHECK(output_unit(spec_of(R"j({"parser": "torchtitan"})j")) == "tokens/s");
}

TEST_CASE("torchtitan's 2024 line with wps and no colour is read too", "[job-output]") {
  auto p = parser_for(R"j({"parser": "torchtitan"})j");
  auto step = p->parse(
      "2024-04-10 10:50:30,123 - root - INFO - step:  5  loss:  9.1234  memory: 12.34GiB(15.67%)  "
      "wps: 2,345  mfu: 12.34%");
  REQUIRE(step);
  CHECK(step->rate == 2345);
}

TEST_CASE("torchtitan's validation line and lines without a rate are not steps", "[job-output]") {
  auto p = parser_for(R"j({"parser": "torchtitan"})j");
  CHECK_FALSE(
      p->parse("[titan] 2025-07-15 13:49:37,123 - root - INFO - \x1b[33mvalidate step: 10  \x1b[32mloss:  "
               "8.1234  \x1b[38;2;54;234;195mmemory: 12.34GiB(15.67%)  \x1b[34mtps: 5,678\x1b[39m"));
  CHECK_FALSE(p->parse("[titan] 2025-07-15 13:49:37,123 - root - INFO - Training starts at step 1"));
  CHECK_FALSE(p->parse("step: 10  loss:  9.12340  memory: 12.34GiB(15.67%)"));
  CHECK_FALSE(p->parse("step: 10  loss:  9.12340  tps: 0  mfu: 0.00%"));
}

TEST_CASE("a contend.step JSON line is a step of its samples and seconds, or a rate of its throughput",
          "[job-output]") {
  auto p = parser_for("{}");
  auto timed = p->parse(R"j({"schema": "contend.step/1", "samples": 32, "seconds": 0.41, "loss": 2.5})j");
  REQUIRE(timed);
  CHECK(timed->amount == 32);
  CHECK(timed->seconds == Approx(0.41));
  CHECK(timed->rate == 0);
  auto rate = p->parse(R"j({"schema": "contend.step/1", "throughput": 78.5})j");
  REQUIRE(rate);
  CHECK(rate->rate == 78.5);
  CHECK(rate->seconds == 0);
  // With both forms, the step's own time is taken.
  auto both = p->parse(R"j({"schema": "contend.step/1", "samples": 8, "seconds": 2, "throughput": 4})j");
  REQUIRE(both);
  CHECK(both->amount == 8);
  // A prefix before the object, and a CRLF ending, are allowed.
  auto prefixed = p->parse("[rank0]: INFO:root:{\"schema\": \"contend.step/1\", \"samples\": 16, \"seconds\": 1.0}\r");
  REQUIRE(prefixed);
  CHECK(prefixed->amount == 16);
  CHECK(output_unit(spec_of("{}")) == "samples/s");
}

TEST_CASE("other JSON and malformed contend.step lines are not steps", "[job-output]") {
  auto p = parser_for(R"j({"parser": "jsonl"})j");
  CHECK_FALSE(p->parse(R"j({"loss": 2.5, "samples": 32, "seconds": 0.41})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/2", "samples": 32, "seconds": 0.41})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.result/1", "note": "contend.step/1", "samples": 1, "seconds": 1})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1", "samples": 32, "seconds": 0.41)"));
  CHECK_FALSE(p->parse(R"({"schema": "contend.step/1", "samples": 32})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1", "samples": 0, "seconds": 0.41})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1", "samples": "32", "seconds": 0.41})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1", "samples": true, "seconds": 0.41})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1", "throughput": -3})j"));
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1"})j"));
  // A key twice is refused, as in every JSON contend reads, not the last one winning.
  CHECK_FALSE(p->parse(R"j({"schema": "contend.step/1", "samples": 9, "seconds": 0.05, "samples": 10})j"));
  CHECK_FALSE(p->parse(R"j(["contend.step/1", {"samples": 32, "seconds": 1}])"));
  CHECK_FALSE(p->parse(R"({"schema": "contend.step/1", "samples": 32, "seconds": 0.41} and more)"));
  CHECK_FALSE(p->parse(R"({"schema": "contend.step/1", "samples": 32, "seconds": 1e999})j"));
  CHECK_FALSE(p->parse("contend.step/1"));
  // A line over 64 KiB is not a step, whatever it holds.
  const std::string padded =
      R"j({"schema": "contend.step/1", "pad": ")j" + std::string(70000, 'x') + R"j(", "samples": 32, "seconds": 1})j";
  CHECK_FALSE(p->parse(padded));
  const std::string fits =
      R"j({"schema": "contend.step/1", "pad": ")j" + std::string(60000, 'x') + R"j(", "samples": 32, "seconds": 1})j";
  CHECK(p->parse(fits));
}

TEST_CASE("a regex rate reads the last redraw of a progress bar", "[job-output]") {
  auto p = parser_for(R"j({"parser": "regex", "pattern": "([0-9.]+)it/s", "captures": "rate", "unit": "it/s"})j");
  auto step = p->parse(
      " 10%|#         | 100/1000 [00:50<07:30,  1.50it/s]\r 20%|##        | 200/1000 "
      "[01:40<06:40,  2.00it/s]\r");
  REQUIRE(step);
  CHECK(step->rate == 2.0);
  CHECK_FALSE(p->parse("loading checkpoint shards"));
  CHECK(output_unit(spec_of(R"j({"parser": "regex", "pattern": "([0-9.]+)it/s", "unit": "it/s"})j")) == "it/s");
}

TEST_CASE("a regex step time in seconds or milliseconds is a step of the amount one step does", "[job-output]") {
  auto seconds = parser_for(R"j({"parser": "regex", "pattern": "step_time ([0-9.]+) s", "captures": "seconds",
                                "amount": 32})j");
  auto s = seconds->parse("step 12 | loss 2.31 | step_time 0.41 s");
  REQUIRE(s);
  CHECK(s->amount == 32);
  CHECK(s->seconds == Approx(0.41));
  CHECK(s->rate == 0);
  auto ms = parser_for(R"j({"parser": "regex", "pattern": "took (\\S+) ms", "captures": "milliseconds",
                           "amount": 8, "unit": "images/s"})j");
  auto m = ms->parse("iteration 5 took 1,234.5 ms");
  REQUIRE(m);
  CHECK(m->amount == 8);
  CHECK(m->seconds == Approx(1.2345));
  CHECK(output_unit(spec_of(R"j({"parser": "regex", "pattern": "(x)", "captures": "seconds", "amount": 1})j")) ==
        "samples/s");
}

TEST_CASE("a regex line that prints no time is a step of its amount, captured or given", "[job-output]") {
  // PyTorch's multinode.py prints one line an epoch, with no time: each is 16 steps of 32 samples.
  auto line = parser_for(R"j({"parser": "regex", "pattern": "Epoch [0-9]+ \\|", "captures": "line", "amount": 512})j");
  auto l = line->parse("[GPU0] Epoch 3 | Batchsize: 32 | Steps: 16");
  REQUIRE(l);
  CHECK(l->amount == 512);
  CHECK(l->seconds == 0);  // the caller times it by the lines' stamps
  CHECK(l->rate == 0);
  CHECK_FALSE(line->parse("[GPU0] loading"));
  auto amount =
      parser_for(R"j({"parser": "regex", "pattern": "Steps: ([0-9]+)", "captures": "amount", "amount": 32})j");
  auto a = amount->parse("[GPU0] Epoch 3 | Batchsize: 32 | Steps: 16");
  REQUIRE(a);
  CHECK(a->amount == 512);
  CHECK(a->seconds == 0);
  CHECK_FALSE(amount->parse("[GPU0] Epoch 4 | Batchsize: 32 | Steps: 0"));
  CHECK(parser_for(R"j({"parser": "regex", "pattern": "tokens=([0-9]+)", "captures": "amount"})j")
            ->parse("tokens=4096")
            .value_or(JobStep{})
            .amount == 4096);  // a captured amount is taken as it is unless "amount" multiplies it
}

TEST_CASE("a regex group that is not a positive number, or took no part, is not a step", "[job-output]") {
  auto p = parser_for(R"j({"parser": "regex", "pattern": "(?:rate = (\\S+)|done)", "unit": "samples/s"})j");
  CHECK(p->parse("rate = 1,234,567.5").value_or(JobStep{}).rate == 1234567.5);
  CHECK(p->parse("rate = 1.5E+03").value_or(JobStep{}).rate == 1500);
  CHECK_FALSE(p->parse("done"));
  CHECK_FALSE(p->parse("rate = 1,23"));
  CHECK_FALSE(p->parse("rate = 12,3456"));
  CHECK_FALSE(p->parse("rate = inf"));
  CHECK_FALSE(p->parse("rate = nan"));
  CHECK_FALSE(p->parse("rate = 0"));
  CHECK_FALSE(p->parse("rate = -4"));
  CHECK_FALSE(p->parse("rate = 0x10"));
  // Past 4 KiB a line is not searched (std::regex recurses per character).
  CHECK_FALSE(p->parse(std::string(5000, ' ') + "rate = 7"));
  CHECK(p->parse(std::string(3000, ' ') + "rate = 7"));
}

TEST_CASE("a regex with a leading .* on the longest line it reads neither crashes nor matches", "[job-output]") {
  auto p = parser_for(R"j({"parser": "regex", "pattern": ".*x ([0-9]+)", "unit": "samples/s"})j");
  CHECK_FALSE(p->parse(std::string(4096, 'a')));
  CHECK_FALSE(p->parse(std::string(64 * 1024, 'a')));
}

TEST_CASE("the output object defaults to the JSON lines and reads every key it allows", "[job-output]") {
  const OutputSpec plain = spec_of("{}");
  CHECK(plain.parser == "jsonl");
  CHECK(plain.unit.empty());
  const OutputSpec r = spec_of(
      R"j({"parser": "regex", "pattern": "([0-9.]+) ms", "captures": "milliseconds", "amount": 64, "unit": "seq/s"})j");
  CHECK(r.parser == "regex");
  CHECK(r.pattern == "([0-9.]+) ms");
  CHECK(r.captures == "milliseconds");
  CHECK(r.amount == 64);
  CHECK(r.unit == "seq/s");
  CHECK(output_parsers().names() == std::vector<std::string>{"megatron", "torchtitan", "jsonl", "regex"});
  for (const auto& item : output_parsers().items()) {
    CHECK(item.entry.kind == "output parser");
    CHECK_FALSE(item.kind.unit.empty());
  }
}

TEST_CASE("every output object error names its path", "[job-output]") {
  CHECK_THAT(output_error_of(R"j("megatron")j"), Catch::StartsWith("exp.json: /workload/output: expected an object"));
  CHECK_THAT(output_error_of(R"j({"parser": "deepspeed"})j"),
             Catch::StartsWith("exp.json: /workload/output/parser: unknown output parser \"deepspeed\"; expected one "
                               "of: megatron, torchtitan, jsonl, regex"));
  CHECK_THAT(output_error_of(R"j({"parser": 3})j"),
             Catch::StartsWith("exp.json: /workload/output/parser: expected a string"));
  CHECK_THAT(output_error_of(R"j({"parser": "megatron", "pattern": "(x)"})j"),
             Catch::StartsWith("exp.json: /workload/output/pattern: unknown key; expected one of: parser, unit"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "unit": "x", "every": 2})j"),
             Catch::StartsWith("exp.json: /workload/output/every: unknown key; expected one of: parser, unit, "
                               "pattern, captures, amount"));
  CHECK_THAT(output_error_of(R"j({"unit": ""})j"),
             Catch::StartsWith("exp.json: /workload/output/unit: expected a unit"));
  CHECK_THAT(output_error_of(R"j({"unit": "samples per second, as counted here"})j"),
             Catch::StartsWith("exp.json: /workload/output/unit: expected a unit of 1 to 32 characters"));
  CHECK_THAT(output_error_of(R"j({"unit": "a\nb"})j"),
             Catch::StartsWith("exp.json: /workload/output/unit: expected a unit"));
  CHECK_THAT(output_error_of(R"j({"unit": 5})j"),
             Catch::StartsWith("exp.json: /workload/output/unit: expected a string"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex"})j"),
             Catch::StartsWith("exp.json: /workload/output/pattern: missing"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "", "unit": "x"})j"),
             Catch::StartsWith("exp.json: /workload/output/pattern: expected a regular expression of 1 to 1024"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "([0-9]+", "unit": "x"})j"),
             Catch::StartsWith("exp.json: /workload/output/pattern: \"([0-9]+\" is not an ECMAScript regular "
                               "expression"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "[0-9]+ ms", "unit": "x"})j"),
             Catch::StartsWith("exp.json: /workload/output/pattern: \"[0-9]+ ms\" has no group"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "captures": "minutes", "amount": 1})j"),
             Catch::StartsWith("exp.json: /workload/output/captures: expected \"rate\", \"seconds\", "
                               "\"milliseconds\", \"amount\" or \"line\", got \"minutes\""));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "Epoch", "captures": "line"})j"),
             Catch::StartsWith("exp.json: /workload/output/amount: missing; a step line needs the work done"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "Steps: [0-9]+", "captures": "amount"})j"),
             Catch::StartsWith("exp.json: /workload/output/pattern: \"Steps: [0-9]+\" has no group"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "captures": "amount", "amount": -2})j"),
             Catch::StartsWith("exp.json: /workload/output/amount: expected a number above 0, got -2"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "captures": "seconds"})j"),
             Catch::StartsWith("exp.json: /workload/output/amount: missing"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "captures": "seconds", "amount": 0})j"),
             Catch::StartsWith("exp.json: /workload/output/amount: expected a number above 0, got 0"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "captures": "seconds", "amount": "32"})j"),
             Catch::StartsWith("exp.json: /workload/output/amount: expected a number"));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)", "amount": 32, "unit": "x"})j"),
             Catch::StartsWith("exp.json: /workload/output/amount: not used with \"captures\": \"rate\""));
  CHECK_THAT(output_error_of(R"j({"parser": "regex", "pattern": "(x)"})j"),
             Catch::StartsWith("exp.json: /workload/output/unit: missing; a rate needs its unit"));
}
