#pragma once
// A strict RFC 4180 reader for the tests of the CSV writers: fields are
// separated by ',', records end with "\r\n" or "\n"; a quoted field may hold
// ',', line breaks and doubled quotes. Anything else (a quote inside an
// unquoted field, text after a closing quote, a bare CR, an open quote, a
// last record without its line break) sets *ok to false.

#include <string>
#include <vector>

namespace sa::testing {

using CsvRow = std::vector<std::string>;

inline std::vector<CsvRow> readCsv(const std::string& text, bool* ok) {
    std::vector<CsvRow> rows;
    CsvRow row;
    std::string field;
    bool quoted = false;
    bool wasQuoted = false;
    *ok = true;
    auto endRecord = [&] {
        row.push_back(field);
        rows.push_back(row);
        row.clear();
        field.clear();
        wasQuoted = false;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                field += c;
            }
            continue;
        }
        if (c == '"') {
            if (!field.empty() || wasQuoted) {
                *ok = false;
                return rows;
            }
            quoted = wasQuoted = true;
        } else if (c == ',') {
            row.push_back(field);
            field.clear();
            wasQuoted = false;
        } else if (c == '\r') {
            if (i + 1 >= text.size() || text[i + 1] != '\n') {
                *ok = false;
                return rows;
            }
            ++i;
            endRecord();
        } else if (c == '\n') {
            endRecord();
        } else {
            if (wasQuoted) {
                *ok = false;
                return rows;
            }
            field += c;
        }
    }
    if (quoted || !field.empty() || !row.empty())
        *ok = false;
    return rows;
}

} // namespace sa::testing
