#pragma once
// The open scenario and its edit history. Views read scenario() and listen
// to scenarioChanged(); every change goes through an undo command pushed on
// undoStack(), so views never change core objects themselves.

#include "model/scenario.h"

#include <QObject>
#include <QString>
#include <QUndoCommand>
#include <QUndoStack>

namespace sa::views {

class Document;

// Replaces one part (or all) of the scenario. Consecutive commands with the
// same non-empty merge key collapse into one undo step: typing "128" into
// a spin box is one edit, not three.
class ScenarioCommand : public QUndoCommand {
public:
    ScenarioCommand(Document* document, Scenario before, Scenario after, const QString& text,
                    QString mergeKey = {});

    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

    const QString& mergeKey() const { return mergeKey_; }
    const Scenario& after() const { return after_; }

    static constexpr int kMergeableId = 0x5ca1e;

private:
    Document* document_;
    Scenario before_;
    Scenario after_;
    QString mergeKey_;
};

class Document : public QObject {
    Q_OBJECT
public:
    explicit Document(QObject* parent = nullptr);
    ~Document() override;

    const Scenario& scenario() const { return scenario_; }
    // The scenario as it was opened: the Δ in the status bar compares
    // against it.
    const Scenario& baseline() const { return baseline_; }
    bool isEmpty() const { return empty_; }
    QString filePath() const { return filePath_; }
    QString displayName() const;
    QUndoStack* undoStack() const { return undoStack_; }
    bool isModified() const;

    // Opening never damages the open document: on any problem it returns
    // false, leaves everything as it was and writes "path: /json/path: what"
    // lines to `error`.
    // A scenario file replaces the document; a cluster, model or plan file
    // replaces that part of the open scenario (one undo step) when the result
    // is still a valid scenario.
    bool open(const QString& path, QString* error);
    bool openFiles(const QString& clusterPath, const QString& modelPath, const QString& planPath,
                   QString* error);
    // Like open(), but the result is a new untitled document: Save asks
    // where, so a bundled sample is never overwritten.
    bool openAsNew(const QString& path, QString* error);
    // A new document holding `scenario` (a test, an optimizer result).
    void reset(const Scenario& scenario, const QString& filePath = {});
    // Restores unsaved work (an autosaved copy): the document is `recovered`,
    // marked modified. When `filePath` still loads, the file is the baseline
    // and Undo goes back to it; else the document is untitled.
    void recover(const Scenario& recovered, const QString& filePath);

    bool save(QString* error);
    bool saveAs(const QString& path, QString* error);
    bool exportPlan(const QString& path, QString* error) const;

    // Edits. Each pushes one undo command; an edit that changes nothing
    // pushes nothing.
    void setScenario(const Scenario& scenario, const QString& text, const QString& mergeKey = {});
    void setPlan(const Plan& plan, const QString& text, const QString& mergeKey = {});
    void setModel(const Model& model, const QString& text, const QString& mergeKey = {});
    void setCluster(const Cluster& cluster, const QString& text, const QString& mergeKey = {});

Q_SIGNALS:
    // After any change of the scenario: edit, undo, redo, open, reset.
    void scenarioChanged();
    // The cluster differs from before (a new topology, a new layout).
    void clusterChanged();
    // A new document was opened or created: history and baseline are new.
    void documentReset();
    void filePathChanged(const QString& path);
    void modifiedChanged(bool modified);

private:
    friend class ScenarioCommand;
    void apply(const Scenario& scenario);
    void replaceDocument(const Scenario& scenario, const QString& filePath);

    Scenario scenario_;
    Scenario baseline_;
    bool empty_ = true;
    QString filePath_;
    QUndoStack* undoStack_;
};

} // namespace sa::views
