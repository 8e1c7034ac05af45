#include "wheelguard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QObject>
#include <QWidget>

namespace sa {

namespace {

class WheelGuard : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Wheel) {
            auto* w = qobject_cast<QWidget*>(watched);
            if (w && !w->hasFocus()) {
                // Not delivered here; an ignored wheel goes on to the parent.
                event->ignore();
                return true;
            }
        }
        return QObject::eventFilter(watched, event);
    }
};

} // namespace

void takeWheelOnlyWhenFocused(QWidget* editor) {
    // Not Qt::WheelFocus (the default of spin and combo boxes).
    editor->setFocusPolicy(Qt::StrongFocus);
    static auto* guard = new WheelGuard(); // lives as long as the application
    editor->installEventFilter(guard);
}

} // namespace sa
