#pragma once
// The sweep tab: pick a link parameter of the open cluster, sweep it in the
// background for the current plan and the baselines, see the chart, export
// the points as CSV. Follows the document: an edit re-runs the sweep (after
// a short pause) while the panel is visible.

#include "jobtracker.h"
#include "sweepchart.h"

#include <QTimer>
#include <QWidget>

#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;

namespace sa::views {

class Document;

class SweepPanel : public QWidget {
    Q_OBJECT
public:
    explicit SweepPanel(Document* document, QWidget* parent = nullptr);
    ~SweepPanel() override;

    SweepChart* chart() const { return chart_; }
    const std::vector<SweepParameter>& parameters() const { return parameters_; }
    void setParameter(int index);
    int parameter() const;
    void setBaselines(bool on);
    // Starts the sweep of the chosen parameter now.
    void run();
    bool isRunning() const { return tracker_.isJobRunning(); }
    // The chart's points as CSV (series, parameter, step time, error).
    bool exportCsv(const QString& path, QString* error) const;

Q_SIGNALS:
    void finished();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void onClusterChanged();
    void onScenarioChanged();

    Document* document_;
    QComboBox* parameterBox_;
    QCheckBox* baselinesBox_;
    QPushButton* runButton_;
    QPushButton* exportButton_;
    QLabel* status_;
    SweepChart* chart_;
    std::vector<SweepParameter> parameters_;
    QTimer rerun_;
    bool stale_ = true;
    JobTracker tracker_;
};

} // namespace sa::views
