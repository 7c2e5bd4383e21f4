#include "contend/emulator/event_record.h"

namespace contend::emulator {

nlohmann::ordered_json event_record(const Event& e) {
  nlohmann::ordered_json out = {{"kind", event_kind_name(e.action)}, {"scheduled_s", e.at_s}};
  std::visit([&](const auto& action) { action.fields(out); }, e.action);
  out["origin"] = e.origin;
  return out;
}

}  // namespace contend::emulator
