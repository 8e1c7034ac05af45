#include "autosave.h"

#include "document.h"
#include "formats/documents.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUuid>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace sa::views {

namespace {

constexpr auto kScenarioSuffix = ".scenario.json";
constexpr auto kMetaSuffix = ".meta.json";
constexpr auto kLockSuffix = ".lock";

QString sessionFile(const QString& dir, const QString& session, const char* suffix) {
    return QDir(dir).filePath(session + QLatin1String(suffix));
}

} // namespace

Autosave::Autosave(Document* document, const QString& directory, QObject* parent)
    : QObject(parent)
    , document_(document)
    , directory_(directory.isEmpty() ? defaultDirectory() : directory)
    , session_(QUuid::createUuid().toString(QUuid::WithoutBraces)) {
    timer_.setSingleShot(true);
    timer_.setInterval(3000);
    connect(&timer_, &QTimer::timeout, this, [this] { saveNow(); });
    connect(document_, &Document::scenarioChanged, this, &Autosave::onChanged);
    connect(document_, &Document::modifiedChanged, this, &Autosave::onChanged);
}

Autosave::~Autosave() {
    // Leaving without discard() (e.g. the window is destroyed while the
    // application crashes out of its event loop) keeps the copy on disk;
    // the released lock makes it recoverable.
    if (lock_)
        lock_->unlock();
}

QString Autosave::defaultDirectory() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
        .filePath(QStringLiteral("autosave"));
}

QString Autosave::scenarioPath() const {
    return sessionFile(directory_, session_, kScenarioSuffix);
}

void Autosave::onChanged() {
    if (document_->isEmpty())
        return;
    if (!document_->isModified()) {
        // Saved, or undone back to the file: nothing left to recover.
        timer_.stop();
        removeFiles();
        return;
    }
    timer_.start();
}

bool Autosave::saveNow(QString* error) {
    timer_.stop();
    if (document_->isEmpty() || !document_->isModified()) {
        removeFiles();
        return true;
    }
    auto fail = [&](const QString& message) {
        lastError_ = message;
        if (error)
            *error = message;
        Q_EMIT failed(message);
        return false;
    };
    if (!QDir().mkpath(directory_))
        return fail(QStringLiteral("Cannot create the autosave folder %1")
                        .arg(QDir::toNativeSeparators(directory_)));
    if (!lock_) {
        lock_ = std::make_unique<QLockFile>(sessionFile(directory_, session_, kLockSuffix));
        lock_->setStaleLockTime(0); // held for the whole session, however long
        if (!lock_->tryLock(0)) {
            lock_.reset();
            return fail(QStringLiteral("Cannot lock the autosave folder %1")
                            .arg(QDir::toNativeSeparators(directory_)));
        }
    }
    const std::string problem = saveFileAtomically(scenarioPath().toStdString(),
                                                   dumpCanonical(toJson(document_->scenario())));
    if (!problem.empty())
        return fail(QString::fromStdString(problem));

    QJsonObject meta;
    meta[QStringLiteral("format")] = QStringLiteral("scaleacross.autosave");
    meta[QStringLiteral("original_path")] = document_->filePath();
    meta[QStringLiteral("display_name")] = document_->displayName();
    meta[QStringLiteral("saved_at")] = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    QSaveFile file(sessionFile(directory_, session_, kMetaSuffix));
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(meta).toJson()) < 0 ||
        !file.commit())
        return fail(QStringLiteral("Cannot write %1: %2")
                        .arg(QDir::toNativeSeparators(file.fileName()), file.errorString()));
    lastError_.clear();
    Q_EMIT saved(scenarioPath());
    return true;
}

void Autosave::discard() {
    timer_.stop();
    removeFiles();
    if (lock_) {
        lock_->unlock();
        lock_.reset();
    }
}

void Autosave::removeFiles() {
    QFile::remove(scenarioPath());
    QFile::remove(sessionFile(directory_, session_, kMetaSuffix));
}

std::vector<RecoverableDocument> Autosave::findRecoverable(const QString& directory) {
    std::vector<RecoverableDocument> found;
    const QDir dir(directory);
    const QStringList files = dir.entryList({QStringLiteral("*") + QLatin1String(kScenarioSuffix)},
                                            QDir::Files, QDir::Name);
    for (const QString& name : files) {
        const QString session = name.chopped(int(qstrlen(kScenarioSuffix)));
        RecoverableDocument doc;
        doc.scenarioPath = dir.filePath(name);
        doc.metaPath = sessionFile(directory, session, kMetaSuffix);
        doc.lockPath = sessionFile(directory, session, kLockSuffix);
        if (QFileInfo::exists(doc.lockPath)) {
            // A running explorer holds its lock; a crashed one left a stale
            // lock that tryLock takes over (the process is gone).
            QLockFile probe(doc.lockPath);
            probe.setStaleLockTime(0);
            if (!probe.tryLock(0))
                continue;
            probe.unlock();
        }
        QFile meta(doc.metaPath);
        if (meta.open(QIODevice::ReadOnly)) {
            const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
            doc.originalPath = o.value(QStringLiteral("original_path")).toString();
            doc.displayName = o.value(QStringLiteral("display_name")).toString();
            doc.savedAt = QDateTime::fromString(o.value(QStringLiteral("saved_at")).toString(),
                                                Qt::ISODateWithMs);
        }
        if (!doc.savedAt.isValid())
            doc.savedAt = QFileInfo(doc.scenarioPath).lastModified();
        if (doc.displayName.isEmpty())
            doc.displayName = doc.originalPath.isEmpty() ? QStringLiteral("untitled")
                                                         : QFileInfo(doc.originalPath).fileName();
        found.push_back(doc);
    }
    std::sort(found.begin(), found.end(),
              [](const RecoverableDocument& a, const RecoverableDocument& b) {
                  return a.savedAt > b.savedAt;
              });
    return found;
}

void Autosave::remove(const RecoverableDocument& doc) {
    QFile::remove(doc.scenarioPath);
    QFile::remove(doc.metaPath);
    QFile::remove(doc.lockPath);
}

} // namespace sa::views
