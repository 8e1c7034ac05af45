#pragma once
// Autosave and crash recovery. While the document has unsaved changes, a
// copy is written (atomically) a few seconds after the last edit to
//   <dir>/<session>.scenario.json   the scenario, loadable by `scaleacross`
//   <dir>/<session>.meta.json       where it came from and when it was saved
// and <dir>/<session>.lock is held (QLockFile) for as long as the explorer
// runs. Saving, discarding or closing cleanly removes the copy. A copy whose
// lock is not held by a running explorer is left over from a crash: the
// next start offers to recover it.

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <vector>

class QLockFile;

namespace sa::views {

class Document;

struct RecoverableDocument {
    QString scenarioPath; // the autosaved scenario
    QString metaPath;
    QString lockPath;
    QString originalPath; // the file it was opened from; empty when untitled
    QString displayName;  // of the document when it was saved
    QDateTime savedAt;
};

class Autosave : public QObject {
    Q_OBJECT
public:
    // `directory` empty: <AppLocalDataLocation>/autosave.
    explicit Autosave(Document* document, const QString& directory = {}, QObject* parent = nullptr);
    ~Autosave() override;

    static QString defaultDirectory();
    QString directory() const { return directory_; }
    QString scenarioPath() const;

    // Delay after the last edit before the copy is written (default 3 s).
    void setDelay(int ms) { timer_.setInterval(ms); }
    // Writes the copy now when the document has unsaved changes; removes it
    // when it has none. False with a message when the copy cannot be written
    // (the document is untouched).
    bool saveNow(QString* error = nullptr);
    // Removes this session's copy and lock (a clean exit).
    void discard();
    QString lastError() const { return lastError_; }

    // Copies left by explorers that are no longer running, newest first.
    // Copies of running sessions (their lock is held) are not listed.
    static std::vector<RecoverableDocument> findRecoverable(const QString& directory);
    // Deletes a leftover copy (after it was recovered or declined).
    static void remove(const RecoverableDocument& doc);

Q_SIGNALS:
    void saved(const QString& scenarioPath);
    void failed(const QString& message);

private:
    void onChanged();
    void removeFiles();

    Document* document_;
    QString directory_;
    QString session_;
    std::unique_ptr<QLockFile> lock_;
    QTimer timer_;
    QString lastError_;
};

} // namespace sa::views
