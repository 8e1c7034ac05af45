#pragma once
// A widget's refresh that waits while the widget is not seen: a dock
// behind another dock's tab (Qt keeps it "visible", moved off the window)
// or a page behind another tab need not lay out its table or chart on
// every drop. The widget calls set() where it refreshed and flush() in
// showEvent() and in every accessor that reads what the refresh produces,
// so callers (and tests) always read the latest state; a tabbed dock's
// visibilityChanged(true) flushes too.

#include <QDockWidget>
#include <QObject>
#include <QPoint>
#include <QRect>
#include <QWidget>

#include <functional>
#include <utility>

namespace sa::views {

class DeferredRefresh {
public:
    explicit DeferredRefresh(QWidget* widget)
        : widget_(widget) {}
    DeferredRefresh(const DeferredRefresh&) = delete;
    DeferredRefresh& operator=(const DeferredRefresh&) = delete;

    // Replaces any refresh still waiting; runs at once when the widget is seen.
    void set(std::function<void()> refresh) {
        pending_ = std::move(refresh);
        if (isSeen())
            flush();
        else
            watchDock();
    }
    void flush() {
        if (!pending_)
            return;
        const std::function<void()> refresh = std::move(pending_);
        pending_ = nullptr;
        refresh();
    }
    bool isPending() const { return bool(pending_); }
    // Shown and inside its window (a tabbed dock's hidden tabs lie outside).
    bool isSeen() const {
        if (!widget_->isVisible())
            return false;
        const QWidget* window = widget_->window();
        return QRect(widget_->mapTo(window, QPoint(0, 0)), widget_->size())
            .intersects(window->rect());
    }

private:
    void watchDock() {
        if (watching_)
            return;
        for (QWidget* w = widget_->parentWidget(); w; w = w->parentWidget())
            if (auto* dock = qobject_cast<QDockWidget*>(w)) {
                QObject::connect(dock, &QDockWidget::visibilityChanged, widget_,
                                 [this](bool visible) {
                                     if (visible)
                                         flush();
                                 });
                watching_ = true;
                return;
            }
    }

    QWidget* widget_;
    std::function<void()> pending_;
    bool watching_ = false;
};

} // namespace sa::views
