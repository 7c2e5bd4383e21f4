#pragma once
// Results are written as records, ordered JSON objects, through one interface, in the manner of
// Google Benchmark's reporters: the same rows go to a JSON-lines file, a CSV file or a console
// table, and whole documents to a JSON file. Every JSON line and document starts with "schema"
// (docs/architecture.md#interfaces-kept-stable); results files are created exclusively and never through a link.

#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contend/common/fd.h"
#include "contend/common/result.h"

namespace contend {

class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  // Writes one record. Errors name the file.
  virtual Result<void> write(const nlohmann::ordered_json& record) = 0;
};

// JSON lines: each record one line, "schema" first. Thread-safe (one mutex); each line is one
// write(2), so processes appending to one file (every rank's metrics) never interleave lines.
class JsonLinesWriter : public RecordWriter {
 public:
  enum class Mode {
    kCreate,  // a new file: fails when it exists (results are never overwritten)
    kAppend,  // created if missing, appended to (several writers share it)
  };
  // `path` "-" writes to stdout. `schema` like "contend.events/1".
  static Result<std::unique_ptr<JsonLinesWriter>> open(const std::string& path, std::string schema, Mode mode);
  Result<void> write(const nlohmann::ordered_json& record) override;

 private:
  JsonLinesWriter(Fd fd, int raw, std::string path, std::string schema)
      : fd_(std::move(fd)), raw_(raw), path_(std::move(path)), schema_(std::move(schema)) {}
  Fd fd_;    // owned file; empty for stdout
  int raw_;  // what is written to
  std::string path_;
  std::string schema_;
  std::mutex mutex_;
};

// How a record's member appears in a CSV or a table.
struct Column {
  std::string key;     // the record's member
  std::string header;  // the column's title ("" = key)
  int width = 0;       // table: width, negative for left-aligned; CSV ignores it
  // Formats the member (printf for numbers: "%.1f"); unset: strings as they are, numbers with %g.
  std::string format;
  // Renders the record when one member is not enough ("1.000 +/-0.009"); overrides `format`.
  std::function<std::string(const nlohmann::ordered_json& record)> render;
};

// A CSV with a header row; fields quoted when they hold ',', '"' or a newline. Not thread-safe.
class CsvWriter : public RecordWriter {
 public:
  explicit CsvWriter(std::vector<Column> columns);
  Result<void> write(const nlohmann::ordered_json& record) override;
  const std::string& text() const { return text_; }

 private:
  std::vector<Column> columns_;
  std::string text_;
};

// An aligned table with a header row, for a terminal. Not thread-safe.
class TableWriter : public RecordWriter {
 public:
  explicit TableWriter(std::vector<Column> columns);
  Result<void> write(const nlohmann::ordered_json& record) override;
  const std::string& text() const { return text_; }

 private:
  std::string row(const std::vector<std::string>& cells) const;
  std::vector<Column> columns_;
  std::string text_;
};

// The text of `record`'s member for `column`, as CSV and table cells show it.
std::string cell_text(const Column& column, const nlohmann::ordered_json& record);

// Writes a whole document to `path` atomically (write_file_atomic), 2-space indented; "-" prints it.
Result<void> write_json_document(const std::string& path, const nlohmann::ordered_json& doc);

}  // namespace contend
