#pragma once
// Edits the plan (and the model's shape) field by field. Every change is
// validated as it is typed with sa::validateScenario: a valid one becomes
// an undo command (edits of one field merge into one step), an invalid one
// shows the problem and is not applied.

#include "model/scenario.h"

#include <QPointer>
#include <QWidget>

#include <functional>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QSpinBox;

namespace sa::views {

class Document;

class PlanInspector : public QWidget {
    Q_OBJECT
public:
    explicit PlanInspector(Document* document, QWidget* parent = nullptr);

    // The problem of the last edit that was refused; empty when it applied.
    QString problem() const { return problem_; }
    QSpinBox* spinBox(const QString& field) const;
    QComboBox* comboBox(const QString& field) const;

    // Builtin technology names offered for each link.
    static QStringList technologyNames(const Cluster& cluster);

private:
    // Applies `change` to a copy of the scenario; pushes it when valid.
    void edit(QWidget* editor, const QString& field, const QString& text,
              const std::function<void(Scenario&)>& change);
    void refresh();
    void rebuildLinkEditors();
    QSpinBox* addSpin(QFormLayout* form, const QString& field, const QString& label, int min,
                      int max, const QString& toolTip, std::function<void(Scenario&, int)> write);
    QComboBox* addCombo(QFormLayout* form, const QString& field, const QString& label,
                        const QStringList& items, const QString& toolTip,
                        std::function<void(Scenario&, int)> write);
    QCheckBox* addCheck(QFormLayout* form, const QString& field, const QString& label,
                        const QString& toolTip, std::function<void(Scenario&, bool)> write);
    void markInvalid(QWidget* editor, bool invalid);

    Document* document_;
    QLabel* message_;
    QFormLayout* linkForm_ = nullptr;
    QWidget* linkBox_ = nullptr;
    std::vector<std::pair<QString, QWidget*>> editors_;
    std::vector<std::function<void()>> refreshers_;
    std::vector<std::function<void()>> linkRefreshers_;
    QString problem_;
    QPointer<QWidget> invalidEditor_;
    bool refreshing_ = false;
};

} // namespace sa::views
