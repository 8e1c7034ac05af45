#include "samples.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace sa::views {

namespace {

bool isSampleDir(const QString& dir) {
    return !dir.isEmpty() && QFileInfo(dir).isDir();
}

} // namespace

QString samplesDir() {
    const QString fromEnv = qEnvironmentVariable("SCALEACROSS_SAMPLES");
    if (isSampleDir(fromEnv))
        return QDir(fromEnv).absolutePath();
    // An installed explorer uses its own copy, even where the source tree
    // it was built from still exists.
    if (QCoreApplication::instance()) {
        const QString installed = QDir::cleanPath(
            QDir(QCoreApplication::applicationDirPath())
                .absoluteFilePath(QStringLiteral("../share/scaleacross/sample_clusters")));
        if (isSampleDir(installed))
            return installed;
    }
#ifdef SCALEACROSS_SAMPLES_DIR
    const QString built = QStringLiteral(SCALEACROSS_SAMPLES_DIR);
    if (isSampleDir(built))
        return built;
#endif
    return {};
}

QString docsDir() {
    if (QCoreApplication::instance()) {
        const QString installed =
            QDir::cleanPath(QDir(QCoreApplication::applicationDirPath())
                                .absoluteFilePath(QStringLiteral("../share/doc/scaleacross")));
        if (QFileInfo::exists(installed + QStringLiteral("/COST_MODEL.md")))
            return installed;
    }
#ifdef SCALEACROSS_SAMPLES_DIR
    // The source tree: docs/ beside sample_clusters/.
    const QString source = QDir::cleanPath(QStringLiteral(SCALEACROSS_SAMPLES_DIR "/../docs"));
    if (QFileInfo::exists(source + QStringLiteral("/COST_MODEL.md")))
        return source;
#endif
    return {};
}

QStringList sampleScenarios() {
    const QString root = samplesDir();
    if (root.isEmpty())
        return {};
    QStringList result;
    // Scenario files sit in scenarios/; a flat folder of scenario files works too.
    for (const QString& sub : {QStringLiteral("scenarios"), QString()}) {
        const QDir dir(sub.isEmpty() ? root : QDir(root).filePath(sub));
        const QFileInfoList files =
            dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        for (const QFileInfo& f : files)
            result << f.absoluteFilePath();
        if (!result.isEmpty())
            break;
    }
    return result;
}

QString defaultScenario() {
    const QStringList all = sampleScenarios();
    for (const QString& path : all)
        if (QFileInfo(path).fileName() == QLatin1String("three-buildings-405b.json"))
            return path;
    return all.isEmpty() ? QString() : all.first();
}

} // namespace sa::views
