#include "contend/common/fd.h"
#include "contend/schedule/csv.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/validation.h"

namespace contend::schedule {

Result<Schedule> csv_schedule(const std::string& path, int ranks, int microbatches, const FileReader& read) {
  // The registry's one file read; everything after it is pure.
  auto text = read ? read(path) : read_file(path);
  if (!text) {
    return text.error();
  }
  auto table = read_csv_table(*text, path);
  if (!table) {
    return table.error();
  }
  Schedule& s = table->schedule;
  if (s.num_ranks != ranks || s.num_microbatches != microbatches) {
    return make_error(Errc::kInvalidArgument, path + ": the file schedules " + std::to_string(s.num_ranks) +
                                                  " ranks and " + std::to_string(s.num_microbatches) +
                                                  " micro-batches, the run has " + std::to_string(ranks) +
                                                  " ranks and " + std::to_string(microbatches) + " micro-batches");
  }
  if (auto valid = validate(s, table->columns); !valid) {
    return valid.error();
  }
  s.name = "csv:" + path;
  return std::move(s);
}

}  // namespace contend::schedule
