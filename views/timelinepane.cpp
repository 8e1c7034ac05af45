#include "timelinepane.h"

#include "timelineview.h"

#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <initializer_list>

namespace sa::views {

TimelinePane::TimelinePane(QWidget* parent)
    : QWidget(parent)
    , splitter_(new QSplitter(Qt::Vertical, this))
    , pinned_(new TimelineView(splitter_))
    , current_(new TimelineView(splitter_)) {
    setObjectName(QStringLiteral("timelinePane"));
    pinned_->setObjectName(QStringLiteral("pinnedTimeline"));
    current_->setObjectName(QStringLiteral("currentTimeline"));
    splitter_->addWidget(pinned_);
    splitter_->addWidget(current_);
    splitter_->setChildrenCollapsible(false);
    pinned_->hide();
    // The current timeline's legend and scroll bar, below, serve both.
    pinned_->setLegendShown(false);
    pinned_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter_);
    // Both ways: scaleChanged fires only on a real change, so no echo.
    connect(current_, &TimelineView::scaleChanged, pinned_, &TimelineView::setScale);
    connect(pinned_, &TimelineView::scaleChanged, current_, &TimelineView::setScale);
    current_->clear(QStringLiteral("No plan"));
}

double TimelinePane::sharedEnd() const {
    double end = 0;
    for (const TimelineView* v : {pinned_, current_})
        if (v->evaluation())
            end =
                std::max({end, v->evaluation()->step_time_s, v->evaluation()->timeline.makespan_s});
    return end;
}

void TimelinePane::setCurrent(std::shared_ptr<const Evaluation> evaluation,
                              const QStringList& buildingNames, const QString& title) {
    // While comparing, a view that showed both whole steps keeps showing
    // both whole steps; a zoomed-in one keeps its zoom.
    const TimeScale& scale = current_->scale();
    const bool wholeSteps = comparing_ && scale.visibleBegin() <= 1e-12 &&
                            scale.visibleEnd() >= sharedEnd() * (1 - 1e-9);
    current_->setEvaluation(std::move(evaluation), buildingNames, title);
    alignViews();
    if (wholeSteps)
        current_->setTimeRange(0, sharedEnd());
}

void TimelinePane::clearCurrent(const QString& message) {
    current_->clear(message);
}

void TimelinePane::setPinned(std::shared_ptr<const Evaluation> evaluation,
                             const QStringList& buildingNames, const QString& title) {
    comparing_ = evaluation != nullptr;
    // Two timelines share the pane: each fits all its stages into its half.
    current_->setFitRows(comparing_);
    pinned_->setFitRows(comparing_);
    if (!comparing_) {
        pinned_->clear(QString());
        pinned_->hide();
        current_->setMinimumLabelWidth(0);
        return;
    }
    pinned_->setEvaluation(std::move(evaluation), buildingNames, title);
    if (pinned_->isHidden()) {
        pinned_->show();
        const int half = std::max(1, splitter_->height() / 2);
        splitter_->setSizes({half, half});
    }
    alignViews();
    // Both on the longer of the two steps, so equal times sit at equal x.
    current_->setTimeRange(0, sharedEnd());
    pinned_->setScale(current_->scale().t0(), current_->scale().secondsPerPixel());
}

void TimelinePane::alignViews() {
    if (!comparing_)
        return;
    // Equal label columns: the time areas start at the same x.
    pinned_->setMinimumLabelWidth(0);
    current_->setMinimumLabelWidth(0);
    const int width = std::max(pinned_->labelWidth(), current_->labelWidth());
    pinned_->setMinimumLabelWidth(width);
    current_->setMinimumLabelWidth(width);
}

} // namespace sa::views
