// Autosave and crash recovery: the copy follows the unsaved state, a
// running session's copy is never offered, a crashed one's is, and
// recovering gives back exactly the unsaved scenario with Undo to the file.

#include "autosave.h"
#include "document.h"
#include "mainwindow.h"

#include "formats/documents.h"

#include "../common/samples.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QLockFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <sys/wait.h>
#include <unistd.h>

using namespace sa;
using namespace sa::views;
using sa::testing::sampleScenario;

namespace {

// An edit: the plan renamed to "edit N".
Plan edited(Plan p, int n) {
    p.name = "edit " + std::to_string(n);
    return p;
}

// A lock left by a process that is gone: what a crash leaves behind.
bool leaveStaleLock(const QString& path) {
    const pid_t child = fork();
    if (child == 0) {
        QLockFile lock(path);
        lock.setStaleLockTime(0);
        _exit(lock.tryLock(0) ? 0 : 1);
    }
    int status = 0;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0 && QFile::exists(path);
}

} // namespace

class TestAutosave : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void copyFollowsUnsavedState();
    void timerWritesAfterEdit();
    void runningSessionIsNotOffered();
    void crashedSessionIsRecovered();
    void untitledRecoveryStaysModified();
    void brokenCopyKeepsDocument();

private:
    QString writeScenarioFile(const Scenario& s);
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<QTemporaryDir> files_;
    Scenario base_;
};

void TestAutosave::initTestCase() {
    Q_INIT_RESOURCE(resources); // the window's icons live in the static views library
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleAcrossTests"));
    const Loaded<Scenario> loaded =
        loadScenarioFile(sampleScenario("two-buildings-405b.json").toStdString());
    QVERIFY(loaded.ok());
    base_ = *loaded.value;
}

void TestAutosave::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    files_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid() && files_->isValid());
}

QString TestAutosave::writeScenarioFile(const Scenario& s) {
    const QString path = files_->filePath(QStringLiteral("job.json"));
    const std::string problem = saveFileAtomically(path.toStdString(), dumpCanonical(toJson(s)));
    return problem.empty() ? path : QString();
}

void TestAutosave::copyFollowsUnsavedState() {
    Document doc;
    const QString path = writeScenarioFile(base_);
    QVERIFY(!path.isEmpty());
    QString error;
    QVERIFY2(doc.open(path, &error), qPrintable(error));
    Autosave autosave(&doc, dir_->path());
    autosave.setDelay(60 * 60 * 1000); // only saveNow() writes here

    QVERIFY(autosave.saveNow());
    QVERIFY(!QFile::exists(autosave.scenarioPath())); // nothing unsaved, nothing kept

    const int n = 1;
    doc.setPlan(edited(base_.plan, n), QStringLiteral("rename"));
    QVERIFY(autosave.saveNow(&error));
    QVERIFY(QFile::exists(autosave.scenarioPath()));
    const Loaded<Scenario> copy = loadScenarioFile(autosave.scenarioPath().toStdString());
    QVERIFY(copy.ok());
    QCOMPARE(copy.value->plan.name, std::string("edit 1"));
    QVERIFY(*copy.value == doc.scenario());

    // Undo back to the file: the copy goes away at once.
    doc.undoStack()->undo();
    QVERIFY(!doc.isModified());
    QVERIFY(!QFile::exists(autosave.scenarioPath()));

    // Saving removes it as well.
    doc.undoStack()->redo();
    QVERIFY(autosave.saveNow());
    QVERIFY(QFile::exists(autosave.scenarioPath()));
    QVERIFY(doc.save(&error));
    QVERIFY(!QFile::exists(autosave.scenarioPath()));

    // A clean exit leaves nothing to recover.
    doc.setPlan(edited(base_.plan, n + 2), QStringLiteral("rename"));
    QVERIFY(autosave.saveNow());
    autosave.discard();
    QVERIFY(Autosave::findRecoverable(dir_->path()).empty());
}

void TestAutosave::timerWritesAfterEdit() {
    Document doc;
    doc.reset(base_);
    Autosave autosave(&doc, dir_->path());
    autosave.setDelay(50);
    doc.setPlan(edited(base_.plan, 1), QStringLiteral("rename"));
    QVERIFY(!QFile::exists(autosave.scenarioPath())); // not at once: after the delay
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosave.scenarioPath()), 5000);
    autosave.discard();
}

void TestAutosave::runningSessionIsNotOffered() {
    Document doc;
    doc.reset(base_);
    Autosave autosave(&doc, dir_->path());
    doc.setPlan(edited(base_.plan, 1), QStringLiteral("rename"));
    QVERIFY(autosave.saveNow());
    // This process holds the lock: another explorer must not take the copy.
    QVERIFY(Autosave::findRecoverable(dir_->path()).empty());
    autosave.discard();
}

void TestAutosave::crashedSessionIsRecovered() {
    const QString path = writeScenarioFile(base_);
    QVERIFY(!path.isEmpty());
    const int n = 1;
    QString leftover;
    {
        Document doc;
        QString error;
        QVERIFY(doc.open(path, &error));
        Autosave autosave(&doc, dir_->path());
        doc.setPlan(edited(base_.plan, n), QStringLiteral("rename"));
        QVERIFY(autosave.saveNow());
        leftover = autosave.scenarioPath();
        // The destructor releases the lock but keeps the copy, as a crash
        // would; then a dead process's lock is put in its place.
    }
    QVERIFY(QFile::exists(leftover));
    const QString lock =
        QString(leftover).replace(QStringLiteral(".scenario.json"), QStringLiteral(".lock"));
    QVERIFY(leaveStaleLock(lock));

    const auto found = Autosave::findRecoverable(dir_->path());
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found[0].originalPath, QFileInfo(path).absoluteFilePath());
    QVERIFY(found[0].savedAt.isValid());

    MainWindow window;
    QVERIFY(window.recover(found[0]));
    Document* doc = window.document();
    QVERIFY(doc->isModified());
    QCOMPARE(doc->filePath(), QFileInfo(path).absoluteFilePath());
    QCOMPARE(doc->scenario().plan.name, std::string("edit 1"));
    QVERIFY(!QFile::exists(leftover)); // taken over by this session
    doc->undoStack()->undo();          // back to the file as saved
    QVERIFY(doc->scenario() == base_);
    QVERIFY(!doc->isModified());
    window.autosave()->discard();
}

void TestAutosave::untitledRecoveryStaysModified() {
    QString leftover;
    Scenario changed = base_;
    changed.plan.name = "edit 7";
    {
        Document doc;
        doc.reset(base_); // untitled (a sample)
        Autosave autosave(&doc, dir_->path());
        doc.setPlan(changed.plan, QStringLiteral("rename"));
        QVERIFY(autosave.saveNow());
        leftover = autosave.scenarioPath();
    }
    const auto found = Autosave::findRecoverable(dir_->path());
    QCOMPARE(found.size(), std::size_t(1));
    QVERIFY(found[0].originalPath.isEmpty());
    MainWindow window;
    QVERIFY(window.recover(found[0]));
    QVERIFY(window.document()->filePath().isEmpty());
    QVERIFY(window.document()->isModified()); // closing asks to save it
    QVERIFY(window.document()->scenario() == changed);
    window.document()->undoStack()->setClean();
    window.autosave()->discard();
}

void TestAutosave::brokenCopyKeepsDocument() {
    RecoverableDocument broken;
    broken.scenarioPath = dir_->filePath(QStringLiteral("x.scenario.json"));
    broken.displayName = QStringLiteral("job.json");
    QFile f(broken.scenarioPath);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"format\": \"scaleacross.scenario\", \"cluster\": ");
    f.close();
    MainWindow window;
    QVERIFY(window.openSample(sampleScenario("two-buildings-405b.json")));
    const Scenario before = window.document()->scenario();
    QVERIFY(!window.recover(broken));
    QVERIFY(window.lastError().contains(QStringLiteral("Cannot recover job.json")));
    QVERIFY(window.lastError().contains(QStringLiteral("x.scenario.json")));
    QVERIFY(window.document()->scenario() == before);
    QVERIFY(QFile::exists(broken.scenarioPath)); // not deleted: the user may rescue it
}

QTEST_MAIN(TestAutosave)
#include "tst_autosave.moc"
