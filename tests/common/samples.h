#pragma once
// The source tree and its bundled sample scenarios as QString paths, for the
// Qt tests (tests/common/fixtures.h has the plain C++ ones).

#include "fixtures.h"

#include <QDir>
#include <QLatin1String>
#include <QString>

namespace sa::testing {

// <repository root>/<relative>.
inline QString sourcePath(const QString& relative) {
    return QDir(QString::fromStdString(sourceDir())).filePath(relative);
}

inline QString sampleScenario(const char* name) {
    return sourcePath(QStringLiteral("sample_clusters/scenarios/") + QLatin1String(name));
}

} // namespace sa::testing
