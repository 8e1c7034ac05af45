#include "sweeppanel.h"

#include "document.h"
#include "wheelguard.h"

#include "explore/sweepseries.h"
#include "export/sweep_csv.h"
#include "formats/documents.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace sa::views {

namespace {

struct SweepRun {
    std::vector<SweepSeries> series;
    double elapsed_ms = 0;
};

} // namespace

SweepPanel::SweepPanel(Document* document, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , parameterBox_(new QComboBox(this))
    , baselinesBox_(new QCheckBox(QStringLiteral("Baselines"), this))
    , runButton_(new QPushButton(QStringLiteral("Sweep"), this))
    , exportButton_(new QPushButton(QStringLiteral("Export CSV…"), this))
    , status_(new QLabel(this))
    , chart_(new SweepChart(this))
    , tracker_(this) {
    setObjectName(QStringLiteral("sweepPanel"));
    parameterBox_->setToolTip(QStringLiteral("The link parameter to vary"));
    parameterBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    takeWheelOnlyWhenFocused(parameterBox_);
    baselinesBox_->setChecked(true);
    baselinesBox_->setToolTip(
        QStringLiteral("Also sweep the production plan (the model's recipe: Llama 3's, or "
                       "Megatron-Core's for an MoE model) and the prior-art (Atlas/CrossPipe) "
                       "plans for this cluster"));
    exportButton_->setEnabled(false);
    status_->setTextFormat(Qt::PlainText);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("Vary"), this));
    controls->addWidget(parameterBox_);
    controls->addWidget(baselinesBox_);
    controls->addWidget(runButton_);
    controls->addWidget(status_, 1);
    controls->addWidget(exportButton_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(controls);
    layout->addWidget(chart_, 1);

    rerun_.setSingleShot(true);
    rerun_.setInterval(400);
    connect(&rerun_, &QTimer::timeout, this, [this] {
        if (isVisible())
            run();
    });
    connect(runButton_, &QPushButton::clicked, this, &SweepPanel::run);
    connect(parameterBox_, &QComboBox::currentIndexChanged, this, [this] { run(); });
    connect(baselinesBox_, &QCheckBox::toggled, this, [this] { run(); });
    connect(exportButton_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, QStringLiteral("Export sweep"),
            QDir::home().filePath(QStringLiteral("sweep.csv")), QStringLiteral("CSV (*.csv)"));
        QString error;
        if (!path.isEmpty() && !exportCsv(path, &error))
            status_->setText(error);
    });
    connect(document_, &Document::clusterChanged, this, &SweepPanel::onClusterChanged);
    connect(document_, &Document::scenarioChanged, this, &SweepPanel::onScenarioChanged);
    chart_->clear(QStringLiteral("Choose a link parameter and press Sweep"));
    onClusterChanged();
}

SweepPanel::~SweepPanel() = default;

void SweepPanel::onClusterChanged() {
    const QString previous = parameterBox_->currentText();
    parameters_ = document_->isEmpty() ? std::vector<SweepParameter>{}
                                       : sweepableLinkParameters(document_->scenario().cluster);
    {
        const QSignalBlocker block(parameterBox_);
        parameterBox_->clear();
        for (const SweepParameter& p : parameters_)
            parameterBox_->addItem(p.label);
        const int keep = parameterBox_->findText(previous);
        parameterBox_->setCurrentIndex(keep >= 0 ? keep : 0);
    }
    const bool any = !parameters_.empty();
    runButton_->setEnabled(any);
    parameterBox_->setEnabled(any);
    if (!any)
        chart_->clear(QStringLiteral("This cluster has no inter-building link to sweep"));
    stale_ = true;
}

void SweepPanel::onScenarioChanged() {
    stale_ = true;
    if (isVisible() && !chart_->data().empty())
        rerun_.start();
}

void SweepPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_ && !parameters_.empty())
        rerun_.start();
}

void SweepPanel::setParameter(int index) {
    parameterBox_->setCurrentIndex(index);
}

int SweepPanel::parameter() const {
    return parameterBox_->currentIndex();
}

void SweepPanel::setBaselines(bool on) {
    baselinesBox_->setChecked(on);
}

void SweepPanel::run() {
    const int index = parameterBox_->currentIndex();
    if (document_->isEmpty() || index < 0 || index >= int(parameters_.size()))
        return;
    rerun_.stop();
    stale_ = false;
    const SweepParameter parameter = parameters_[std::size_t(index)];
    const Scenario scenario = document_->scenario();
    const bool baselines = baselinesBox_->isChecked();
    status_->setText(QStringLiteral("Sweeping %1 (%2 points)…")
                         .arg(parameter.label)
                         .arg(parameter.values.size()));
    tracker_.startJob(
        [scenario, parameter, baselines](const std::atomic<bool>& cancelled) {
            QElapsedTimer clock;
            clock.start();
            SweepRun run;
            run.series = computeSweepSeries(scenario, parameter.path, parameter.values, baselines,
                                            &cancelled);
            run.elapsed_ms = double(clock.nsecsElapsed()) / 1e6;
            return run;
        },
        [this, parameter](std::shared_ptr<const SweepRun> run) {
            chart_->setSeries(parameter.axisTitle, parameter.logX, run->series, parameter.current,
                              parameter.displayScale);
            int points = 0;
            for (const SweepSeries& s : run->series)
                points += int(s.x.size());
            status_->setText(
                QStringLiteral("%1 points in %2 ms").arg(points).arg(std::lround(run->elapsed_ms)));
            exportButton_->setEnabled(!run->series.empty());
            Q_EMIT finished();
        });
}

bool SweepPanel::exportCsv(const QString& path, QString* error) const {
    if (chart_->data().empty()) {
        if (error)
            *error = QStringLiteral("Nothing to export: run a sweep first");
        return false;
    }
    const int index = parameterBox_->currentIndex();
    const std::string column = index >= 0 && index < int(parameters_.size())
                                   ? parameters_[std::size_t(index)].path
                                   : std::string("x");
    const std::string problem =
        saveFileAtomically(path.toStdString(), sweepSeriesCsv(column, chart_->data()));
    if (!problem.empty()) {
        if (error)
            *error = QString::fromStdString(problem);
        return false;
    }
    return true;
}

} // namespace sa::views
