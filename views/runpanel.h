#pragma once
// The run of the shown plan (docs/RUN.md): goodput under failures,
// checkpoints, stragglers and degraded links; $ and kWh per step, per
// million tokens and for the whole run; the outer sync and its convergence
// cost; the run to the token budget and to the target loss. Read-only, one
// row per figure, grouped; the values can be selected and copied.

#include "cost/evaluation.h"
#include "model/scenario.h"

#include <QWidget>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace sa::views {

class RunPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunPanel(QWidget* parent = nullptr);

    // Shows `e`, the evaluation of `plan`; null: the plan cannot be evaluated.
    void setEvaluation(const Evaluation* e, const Plan& plan);
    void clear(const QString& why);

    QTreeWidget* tree() const { return tree_; }
    // The value shown for a figure ("Goodput", "Cost per step", ...) under
    // its group ("Goodput", "Per step", ...); empty when not shown.
    QString value(const QString& group, const QString& figure) const;

private:
    QTreeWidgetItem* group(const QString& title);
    void row(QTreeWidgetItem* group, const QString& figure, const QString& value,
             const QString& toolTip = {});

    QLabel* note_;
    QTreeWidget* tree_;
};

} // namespace sa::views
