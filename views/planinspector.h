#pragma once
// Edits the plan (and the model's shape) field by field. A value is applied
// when the user commits it (Enter or leaving the field; a choice in a list;
// an arrow step), never while it is typed: "2000" is not DP 2, 20 and 200
// on the way. Each commit is validated with sa::validateScenario: a valid
// one becomes one undo command, an invalid one shows the problem below the
// fields and is not applied. Escape in a field puts the plan's value back.
// The wheel changes only the field that has the focus; over any other it
// scrolls the inspector.

#include "model/scenario.h"

#include <QString>

#include <QPointer>
#include <QWidget>

#include <array>
#include <functional>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QScrollArea;
class QSpinBox;
class QVBoxLayout;

namespace sa::views {

class Document;

class PlanInspector : public QWidget {
    Q_OBJECT
public:
    explicit PlanInspector(Document* document, QWidget* parent = nullptr);

    // The problem of the last edit that was refused; empty when it applied
    // or once the document changed.
    QString problem() const { return problem_; }
    // Where the problem is shown (below the fields, so they never move).
    QWidget* problemBox() const { return messageBox_; }
    QScrollArea* scrollArea() const { return scroll_; }
    QSpinBox* spinBox(const QString& field) const;
    QComboBox* comboBox(const QString& field) const;
    QCheckBox* checkBox(const QString& field) const;
    QDoubleSpinBox* doubleSpinBox(const QString& field) const;
    QLineEdit* layersPerStage() const { return layersEdit_; }
    // The building and link the reliability, price and power fields edit.
    QComboBox* buildingSelector() const { return buildingSelector_; }
    QComboBox* linkSelector() const { return linkSelector_; }

    // Builtin technology names offered for each link.
    static QStringList technologyNames(const Cluster& cluster);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

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
    // Enables `editor` only while `when` holds for the document (on each refresh).
    void enableWhen(QWidget* editor, bool (*when)(const Scenario&));
    // A spin box whose minimum reads `special` (the plan's default), enabled
    // only while `when` holds.
    QSpinBox* addDefaultedSpin(QFormLayout* form, const QString& field, const QString& label,
                               int min, int max, const QString& toolTip,
                               std::function<void(Scenario&, int)> write, const QString& special,
                               bool (*when)(const Scenario&));
    // A check box showing read(plan) on every refresh; a toggle writes it.
    QCheckBox* addCheck(QFormLayout* form, const QString& field, const QString& label,
                        const QString& toolTip, bool (*read)(const Plan&),
                        std::function<void(Scenario&, bool)> write);
    // A decimal field; `special` is shown at `min` (e.g. "default" for 0).
    // read/write see the scenario (and may look at the selected building or
    // link); a write that returns false changes nothing.
    struct DoubleField {
        QString field, label, toolTip, suffix, special;
        double min = 0, max = 1e9, step = 1;
        int decimals = 2;
        std::function<double(const Scenario&)> read;
        std::function<bool(Scenario&, double)> write;
    };
    QDoubleSpinBox* addDouble(QFormLayout* form, const DoubleField& f);
    void buildRunGroups(QWidget* content, QVBoxLayout* column);
    void addLayersPerStage(QFormLayout* form);
    void addRecomputeModules(QFormLayout* form);
    void buildClusterGroups(QWidget* content, QVBoxLayout* column);
    void rebuildSelectors();
    Building* selectedBuilding(Scenario& s) const;
    const Building* selectedBuilding(const Scenario& s) const;
    Link* selectedLink(Scenario& s) const;
    const Link* selectedLink(const Scenario& s) const;
    void markInvalid(QWidget* editor, bool invalid);
    // Commit on Enter or focus-out, wheel only with the focus, Escape reverts.
    void guardEditor(QWidget* editor);
    void clearProblem();

    Document* document_;
    QScrollArea* scroll_;
    QWidget* messageBox_;
    QLabel* message_;
    QFormLayout* linkForm_ = nullptr;
    QComboBox* buildingSelector_ = nullptr;
    QLineEdit* layersEdit_ = nullptr;
    QComboBox* linkSelector_ = nullptr;
    QWidget* linkRunBox_ = nullptr;
    QWidget* linkBox_ = nullptr;
    std::vector<std::pair<QString, QWidget*>> editors_;
    std::vector<std::function<void()>> refreshers_;
    std::vector<std::function<void()>> linkRefreshers_;
    QString problem_;
    QPointer<QWidget> invalidEditor_;
    bool refreshing_ = false;
    // The grid (tp, cp, pp, dp) the rank-order list was placed for.
    std::array<int, 4> orderKey_{};
    std::optional<Placement> orderPlacement_;
    bool orderKeyValid_ = false;
    // Changes of one field merge into one undo step until the field is
    // committed (Enter) or left: arrow steps are one edit, two typed values
    // two.
    int editSession_ = 0;
};

} // namespace sa::views
