#pragma once
// Whole files in and out, for the tests that write inputs and read exports.

#include <QByteArray>
#include <QFile>
#include <QIODevice>
#include <QString>

namespace sa::testing {

// The file's bytes; empty when it cannot be read.
inline QByteArray readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

// Replaces the file with `data`; false when it could not be written whole.
inline bool writeFile(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

} // namespace sa::testing
