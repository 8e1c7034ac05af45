#pragma once
// The bundled sample scenarios, by file name, for the widget tests.

#include <QLatin1String>
#include <QString>

namespace sa::testing {

inline QString sampleScenario(const char* name) {
    return QStringLiteral(SCALEACROSS_SOURCE_DIR "/sample_clusters/scenarios/") +
           QLatin1String(name);
}

} // namespace sa::testing
