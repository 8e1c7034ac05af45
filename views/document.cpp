#include "document.h"

#include "formats/documents.h"

#include <QDir>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <type_traits>
#include <utility>

namespace sa::views {

namespace {

QString joinProblems(const QString& path, const std::vector<Diagnostic>& problems) {
    QStringList lines;
    lines << QStringLiteral("Cannot open %1:").arg(QDir::toNativeSeparators(path));
    for (const auto& d : problems)
        lines << QString::fromStdString(d.str());
    if (problems.empty())
        lines << QStringLiteral("the file holds no document");
    return lines.join(QLatin1Char('\n'));
}

SourceNames namesFor(const QString& path) {
    const std::string file = QFileInfo(path).fileName().toStdString();
    return SourceNames{file, file, file};
}

} // namespace

ScenarioCommand::ScenarioCommand(Document* document, Scenario before, Scenario after,
                                 const QString& text, QString mergeKey)
    : QUndoCommand(text)
    , document_(document)
    , before_(std::move(before))
    , after_(std::move(after))
    , mergeKey_(std::move(mergeKey)) {}

int ScenarioCommand::id() const {
    return mergeKey_.isEmpty() ? -1 : kMergeableId;
}

bool ScenarioCommand::mergeWith(const QUndoCommand* other) {
    const auto* next = static_cast<const ScenarioCommand*>(other);
    if (next->mergeKey_ != mergeKey_ || next->document_ != document_)
        return false;
    after_ = next->after_;
    // Typing a value and then its original back leaves nothing to undo.
    setObsolete(after_ == before_);
    return true;
}

void ScenarioCommand::undo() {
    document_->apply(before_);
}
void ScenarioCommand::redo() {
    document_->apply(after_);
}

Document::Document(QObject* parent)
    : QObject(parent)
    , undoStack_(new QUndoStack(this)) {
    connect(undoStack_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { Q_EMIT modifiedChanged(!clean); });
}

Document::~Document() = default;

QString Document::displayName() const {
    if (!filePath_.isEmpty())
        return QFileInfo(filePath_).fileName();
    if (!empty_ && !scenario_.plan.name.empty())
        return QStringLiteral("%1 (untitled)").arg(QString::fromStdString(scenario_.plan.name));
    return QStringLiteral("untitled");
}

bool Document::isModified() const {
    return !undoStack_->isClean();
}

bool Document::open(const QString& path, QString* error) {
    const std::string file = path.toStdString();
    Loaded<AnyDocument> loaded = loadAnyFile(file);
    if (!loaded.ok()) {
        if (error)
            *error = joinProblems(path, loaded.problems);
        return false;
    }
    const AnyDocument& doc = *loaded.value;
    if (const auto* s = std::get_if<Scenario>(&doc)) {
        const auto problems = validateScenario(*s, namesFor(path));
        if (!problems.empty()) {
            if (error)
                *error = joinProblems(path, problems);
            return false;
        }
        replaceDocument(*s, QFileInfo(path).absoluteFilePath());
        return true;
    }
    if (empty_) {
        if (error)
            *error = QStringLiteral("Cannot open %1:\na %2 file needs an open scenario; open a "
                                    "scenario first")
                         .arg(QDir::toNativeSeparators(path),
                              std::holds_alternative<Cluster>(doc) ? QStringLiteral("cluster")
                              : std::holds_alternative<Model>(doc) ? QStringLiteral("model")
                                                                   : QStringLiteral("plan"));
        return false;
    }
    // One part of the scenario: it must still make a valid scenario with
    // the other two.
    Scenario next = scenario_;
    QString what;
    std::visit(
        [&](const auto& part) {
            using T = std::decay_t<decltype(part)>;
            if constexpr (std::is_same_v<T, Cluster>) {
                next.cluster = part;
                what = QStringLiteral("cluster");
            } else if constexpr (std::is_same_v<T, Model>) {
                next.model = part;
                what = QStringLiteral("model");
            } else if constexpr (std::is_same_v<T, Plan>) {
                next.plan = part;
                what = QStringLiteral("plan");
            }
        },
        doc);
    SourceNames names;
    const std::string fileName = QFileInfo(path).fileName().toStdString();
    if (what == QLatin1String("cluster"))
        names.cluster = fileName;
    else if (what == QLatin1String("model"))
        names.model = fileName;
    else
        names.plan = fileName;
    const auto problems = validateScenario(next, names);
    if (!problems.empty()) {
        if (error)
            *error = joinProblems(path, problems);
        return false;
    }
    setScenario(next, QStringLiteral("Replace %1 with %2").arg(what, QFileInfo(path).fileName()));
    return true;
}

bool Document::openAsNew(const QString& path, QString* error) {
    Loaded<Scenario> loaded = loadScenarioFile(path.toStdString());
    std::vector<Diagnostic> problems = loaded.problems;
    if (loaded.ok())
        problems = validateScenario(*loaded.value, namesFor(path));
    if (!loaded.value || !problems.empty()) {
        if (error)
            *error = joinProblems(path, problems);
        return false;
    }
    replaceDocument(*loaded.value, QString());
    return true;
}

bool Document::openFiles(const QString& clusterPath, const QString& modelPath,
                         const QString& planPath, QString* error) {
    Loaded<Scenario> loaded = loadScenarioFiles(clusterPath.toStdString(), modelPath.toStdString(),
                                                planPath.toStdString());
    if (!loaded.ok()) {
        if (error)
            *error = joinProblems(planPath, loaded.problems);
        return false;
    }
    replaceDocument(*loaded.value, QString());
    return true;
}

void Document::reset(const Scenario& scenario, const QString& filePath) {
    replaceDocument(scenario, filePath);
}

void Document::recover(const Scenario& recovered, const QString& filePath) {
    if (!filePath.isEmpty()) {
        const Loaded<Scenario> saved = loadScenarioFile(filePath.toStdString());
        if (saved.ok()) {
            replaceDocument(*saved.value, QFileInfo(filePath).absoluteFilePath());
            setScenario(recovered, QStringLiteral("Recover Unsaved Changes"));
            if (!isModified())
                undoStack_->resetClean(); // the copy equals the file, still offer to save
            return;
        }
    }
    replaceDocument(recovered, QString());
    undoStack_->resetClean();
}

void Document::replaceDocument(const Scenario& scenario, const QString& filePath) {
    const bool clusterDiffers = empty_ || scenario.cluster != scenario_.cluster;
    undoStack_->clear();
    scenario_ = scenario;
    baseline_ = scenario;
    empty_ = false;
    if (filePath_ != filePath) {
        filePath_ = filePath;
        Q_EMIT filePathChanged(filePath_);
    }
    undoStack_->setClean();
    Q_EMIT documentReset();
    if (clusterDiffers)
        Q_EMIT clusterChanged();
    Q_EMIT scenarioChanged();
}

bool Document::save(QString* error) {
    if (filePath_.isEmpty()) {
        if (error)
            *error = QStringLiteral("The document has no file yet; use Save As");
        return false;
    }
    return saveAs(filePath_, error);
}

bool Document::saveAs(const QString& path, QString* error) {
    if (empty_) {
        if (error)
            *error = QStringLiteral("Nothing to save");
        return false;
    }
    const std::string text = dumpCanonical(toJson(scenario_));
    const std::string problem = saveFileAtomically(path.toStdString(), text);
    if (!problem.empty()) {
        if (error)
            *error = QString::fromStdString(problem);
        return false;
    }
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (filePath_ != absolute) {
        filePath_ = absolute;
        Q_EMIT filePathChanged(filePath_);
    }
    undoStack_->setClean();
    return true;
}

bool Document::exportPlan(const QString& path, QString* error) const {
    if (empty_) {
        if (error)
            *error = QStringLiteral("Nothing to export");
        return false;
    }
    const std::string problem =
        saveFileAtomically(path.toStdString(), dumpCanonical(toJson(scenario_.plan)));
    if (!problem.empty()) {
        if (error)
            *error = QString::fromStdString(problem);
        return false;
    }
    return true;
}

void Document::setScenario(const Scenario& scenario, const QString& text, const QString& mergeKey) {
    if (empty_ || scenario == scenario_)
        return;
    undoStack_->push(new ScenarioCommand(this, scenario_, scenario, text, mergeKey));
}

void Document::setPlan(const Plan& plan, const QString& text, const QString& mergeKey) {
    Scenario next = scenario_;
    next.plan = plan;
    setScenario(next, text, mergeKey);
}

void Document::setModel(const Model& model, const QString& text, const QString& mergeKey) {
    Scenario next = scenario_;
    next.model = model;
    setScenario(next, text, mergeKey);
}

void Document::setCluster(const Cluster& cluster, const QString& text, const QString& mergeKey) {
    Scenario next = scenario_;
    next.cluster = cluster;
    setScenario(next, text, mergeKey);
}

void Document::apply(const Scenario& scenario) {
    const bool clusterDiffers = scenario.cluster != scenario_.cluster;
    scenario_ = scenario;
    if (clusterDiffers)
        Q_EMIT clusterChanged();
    Q_EMIT scenarioChanged();
}

} // namespace sa::views
