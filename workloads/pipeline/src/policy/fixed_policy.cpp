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
    d.schedule = schedule::parse_schedule("kfkb:k=" + std::to_string(k_)).value();
    return d;
  }

 private:
  int k_;
};

}  // namespace

std::unique_ptr<KPolicy> make_fixed_policy(int k) {
  return std::make_unique<FixedPolicy>(k);
}

}  // namespace contend::pipeline::detail
