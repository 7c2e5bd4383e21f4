#include "contend/common/records.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

namespace contend {

Result<std::unique_ptr<JsonLinesWriter>> JsonLinesWriter::open(const std::string& path, std::string schema, Mode mode) {
  if (path == "-") {
    return std::unique_ptr<JsonLinesWriter>(new JsonLinesWriter(Fd(), STDOUT_FILENO, path, std::move(schema)));
  }
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | (mode == Mode::kCreate ? O_EXCL : O_APPEND);
  auto fd = Fd::open(path, flags);
  if (!fd) {
    return fd.error();
  }
  const int raw = fd->get();
  return std::unique_ptr<JsonLinesWriter>(new JsonLinesWriter(std::move(*fd), raw, path, std::move(schema)));
}

Result<void> JsonLinesWriter::write(const nlohmann::ordered_json& record) {
  nlohmann::ordered_json line;
  line["schema"] = schema_;
  for (const auto& item : record.items()) {
    if (item.key() != "schema") {
      line[item.key()] = item.value();
    }
  }
  const std::string text = line.dump() + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(raw_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return errno_error(errno, "write(" + path_ + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

std::string cell_text(const Column& column, const nlohmann::ordered_json& record) {
  if (column.render) {
    return column.render(record);
  }
  if (!record.contains(column.key) || record.at(column.key).is_null()) {
    return "";
  }
  const auto& v = record.at(column.key);
  if (v.is_string()) {
    return v.get<std::string>();
  }
  if (v.is_number()) {
    char buf[64];
    const double d = v.get<double>();
    if (!column.format.empty()) {
      std::snprintf(buf, sizeof buf, column.format.c_str(), d);
    } else if (v.is_number_integer()) {
      std::snprintf(buf, sizeof buf, "%lld", v.get<long long>());
    } else {
      std::snprintf(buf, sizeof buf, "%.6g", d);
    }
    return buf;
  }
  return v.dump();
}

CsvWriter::CsvWriter(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    text_ += (i == 0 ? "" : ",") + (columns_[i].header.empty() ? columns_[i].key : columns_[i].header);
  }
  text_ += "\n";
}

Result<void> CsvWriter::write(const nlohmann::ordered_json& record) {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    std::string cell = cell_text(columns_[i], record);
    if (cell.find_first_of(",\"\n") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : cell) {
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      }
      cell = quoted + "\"";
    }
    text_ += (i == 0 ? "" : ",") + cell;
  }
  text_ += "\n";
  return {};
}

TableWriter::TableWriter(std::vector<Column> columns) : columns_(std::move(columns)) {
  std::vector<std::string> headers;
  for (const Column& c : columns_) {
    headers.push_back(c.header.empty() ? c.key : c.header);
  }
  text_ = row(headers);
}

std::string TableWriter::row(const std::vector<std::string>& cells) const {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const int width = columns_[i].width;
    const std::size_t w = static_cast<std::size_t>(width < 0 ? -width : width);
    const std::string pad = cells[i].size() < w ? std::string(w - cells[i].size(), ' ') : "";
    out += (i == 0 ? "" : " ") + (width < 0 ? cells[i] + pad : pad + cells[i]);
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out + "\n";
}

Result<void> TableWriter::write(const nlohmann::ordered_json& record) {
  std::vector<std::string> cells;
  for (const Column& c : columns_) {
    cells.push_back(cell_text(c, record));
  }
  text_ += row(cells);
  return {};
}

Result<void> write_json_document(const std::string& path, const nlohmann::ordered_json& doc) {
  if (path == "-") {
    std::cout << doc.dump(2) << "\n";
    return {};
  }
  return write_file_atomic(path, doc.dump(2) + "\n");
}

}  // namespace contend
