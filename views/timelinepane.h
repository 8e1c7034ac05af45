#pragma once
// The timeline dock: the current plan's pipeline timeline and, when a plan
// is pinned, the pinned plan's above it on the same time axis (zoom and pan
// move both), so a user can show where one placement loses time.

#include "cost/evaluation.h"

#include <QStringList>
#include <QWidget>

#include <memory>

class QLabel;
class QSplitter;

namespace sa::views {

class TimelineView;

class TimelinePane : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePane(QWidget* parent = nullptr);

    TimelineView* current() const { return current_; }
    TimelineView* pinned() const { return pinned_; }
    bool isComparing() const { return comparing_; }

    void setCurrent(std::shared_ptr<const Evaluation> evaluation, const QStringList& buildingNames,
                    const QString& title);
    void clearCurrent(const QString& message);
    // Null hides the pinned timeline.
    void setPinned(std::shared_ptr<const Evaluation> evaluation, const QStringList& buildingNames,
                   const QString& title);

private:
    void alignViews();
    // The end of the longer of the two steps.
    double sharedEnd() const;

    QSplitter* splitter_;
    TimelineView* pinned_;
    TimelineView* current_;
    bool comparing_ = false;
};

} // namespace sa::views
