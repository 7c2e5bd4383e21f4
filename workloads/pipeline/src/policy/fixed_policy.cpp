#include "contend/schedule/registry.h"
#include "policy/policies.h"

namespace contend::pipeline::detail {
namespace {

class FixedPolicy : public KPolicy {
 public:
  explicit FixedPolicy(int k) : k_(k) {}
  Result<Decision> decide(int iteration, const std::vector<StageReport>&) override {
    Decision d;
    d.iteration = iteration;
    d.k = k_;
    d.schedule = schedule::kfkb_spec(k_);
    return d;
  }

 private:
  int k_;
};

Result<void> check_fixed(const Spec& spec, int /*stages*/, int microbatches) {
  if (spec.integer("k") > microbatches) {
    return make_error(Errc::kInvalidArgument, "policy \"" + spec.str() + "\": k must be 1.." +
                                                  std::to_string(microbatches) + " (the micro-batches)");
  }
  return {};
}

}  // namespace

PolicyItem fixed_policy() {
  return {
      {"",
       "fixed",
       "kFkB with the same k every iteration, through the adaptive path",
       {ParamDef::integer("k", "micro-batches per group", std::nullopt, 1)}},
      PolicyKind{.first_k = "k",
                 .chunks = false,
                 .start = false,
                 .check = check_fixed,
                 .make = [](const Spec& spec, const PolicyContext&) -> Result<std::unique_ptr<KPolicy>> {
                   return std::unique_ptr<KPolicy>(std::make_unique<FixedPolicy>(static_cast<int>(spec.integer("k"))));
                 }}};
}

}  // namespace contend::pipeline::detail
