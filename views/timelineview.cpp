#include "timelineview.h"

#include "imageexport.h"

#include "units.h"

#include <QCursor>
#include <QDir>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sa::views {

namespace {

// Okabe & Ito's palette: told apart with every common colour-vision
// deficiency, and light enough that a microbatch number stays readable.
const QColor kForward(0x56, 0xb4, 0xe9);
const QColor kBackward(0xe6, 0x9f, 0x00);
const QColor kWeightGrad(0x00, 0x9e, 0x73);
const QColor kRecompute(0xf0, 0xe4, 0x42);
const QColor kSend(0x8a, 0x97, 0xa6);
const QColor kSendCrossing(0xd5, 0x5e, 0x00);
const QColor kDpHidden(0xe8, 0xc6, 0xda);
const QColor kDpExposed(0xcc, 0x79, 0xa7);
const QColor kOptimizer(0x00, 0x72, 0xb2);
const QColor kBubbleFill(0xf1, 0xf3, 0xf5);
const QColor kBubbleHatch(0xc4, 0xcb, 0xd3);
const QColor kInk(0x1f, 0x29, 0x33);
const QColor kMuted(0x5c, 0x6b, 0x7a);
const QColor kGrid(0xe3, 0xe7, 0xec);
const QColor kGridMinor(0xf1, 0xf3, 0xf6);
const QColor kRule(0xc5, 0xcf, 0xdb);
const QColor kSeparator(0x3d, 0x4a, 0x58);

// Buildings: a light tint for their band and a strong mark beside the name.
const QColor kBuildingTint[] = {QColor(0xe9, 0xf1, 0xfb), QColor(0xfc, 0xef, 0xe0),
                                QColor(0xe4, 0xf4, 0xee), QColor(0xf5, 0xe8, 0xf0),
                                QColor(0xf0, 0xf0, 0xdc), QColor(0xeb, 0xe8, 0xf8)};
const QColor kBuildingMark[] = {QColor(0x3b, 0x73, 0xb9), QColor(0xc7, 0x77, 0x00),
                                QColor(0x1b, 0x8a, 0x64), QColor(0xb0, 0x52, 0x7f),
                                QColor(0x8a, 0x8a, 0x2a), QColor(0x6b, 0x5f, 0xb5)};

constexpr double kWheelZoomStep = 1.25; // per wheel notch or key press
constexpr double kFitPadding = 0.01;    // of the step, on each side
constexpr double kSimilarStep = 1.5;    // a new step within this ratio keeps the zoom
constexpr int kRightMargin = 18;
constexpr int kLabelPadding = 10;
constexpr int kMinFitRowPx = 2; // a compute row's least height in compare mode

bool isCompute(OpKind k) {
    return k == OpKind::Forward || k == OpKind::Backward || k == OpKind::WeightGrad ||
           k == OpKind::Recompute;
}

bool isSend(OpKind k) {
    return k == OpKind::SendForward || k == OpKind::SendBackward;
}

QColor textOn(const QColor& fill) {
    return qGray(fill.rgb()) > 140 ? kInk : QColor(Qt::white);
}

// Diagonal hatching as plain line segments cut to `r`: the same strokes on
// screen, in a PNG and in an SVG (whose generator drops pattern brushes and
// clip regions).
void hatch(QPainter& p, const QRectF& r, const QColor& color, double spacing, double width = 1) {
    if (r.width() <= 0 || r.height() <= 0)
        return;
    p.save();
    p.setPen(QPen(color, width, Qt::SolidLine, Qt::FlatCap));
    // Lines x + y = k on a fixed grid of k, so neighbouring rectangles line up.
    const double first = std::floor((r.left() + r.top()) / spacing) * spacing;
    const double last = r.right() + r.bottom();
    for (double k = first; k <= last; k += spacing) {
        const double xa = std::max(r.left(), k - r.bottom());
        const double xb = std::min(r.right(), k - r.top());
        if (xa < xb)
            p.drawLine(QPointF(xa, k - xa), QPointF(xb, k - xb));
    }
    p.restore();
}

bool failWith(QString* error, const QString& message) {
    if (error)
        *error = message;
    return false;
}

} // namespace

TimelineView::TimelineView(QWidget* parent)
    : QAbstractScrollArea(parent) {
    setFrameShape(QFrame::NoFrame);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setMouseTracking(true);
    viewport()->setCursor(Qt::OpenHandCursor);
    viewport()->setAutoFillBackground(false);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        TimeScale s = scale_;
        s.setT0(hBegin_s_ + value * hUnitPx_ * scale_.secondsPerPixel());
        applyScale(s, true);
    });
    computeMetrics();
    message_ = QStringLiteral("No evaluation yet");
}

TimelineView::~TimelineView() = default;

// ---------------------------------------------------------------- data

void TimelineView::setEvaluation(std::shared_ptr<const Evaluation> evaluation,
                                 QStringList buildingNames, QString title) {
    if (evaluation && evaluation->timeline.ops.empty()) {
        clear(QStringLiteral("This evaluation has no timeline"));
        return;
    }
    if (!evaluation) {
        clear(QStringLiteral("No evaluation yet"));
        return;
    }
    evaluation_ = std::move(evaluation);
    buildingNames_ = std::move(buildingNames);
    title_ = std::move(title);
    message_.clear();
    rebuild();
    const double makespan = evaluation_->timeline.makespan_s;
    const bool similar = lastMakespan_ > 0 && makespan > 0 &&
                         makespan / lastMakespan_ <= kSimilarStep &&
                         lastMakespan_ / makespan <= kSimilarStep;
    lastMakespan_ = makespan;
    const TimeScale before = scale_;
    updateZoomLimits();
    if (fitted_ || !similar) {
        fitted_ = true;
        fitScale();
    } else {
        // The user's zoom, within the new limits and the new label column.
        const TimeScale kept = scale_;
        scale_ = before;
        applyScale(kept, false);
    }
    viewport()->update();
}

void TimelineView::clear(QString message) {
    evaluation_.reset();
    message_ = std::move(message);
    rebuild();
    updateScrollBars();
    viewport()->update();
}

void TimelineView::rebuild() {
    lanes_.clear();
    computeLanes_.clear();
    stages_.clear();
    bands_.clear();
    bubbles_.clear();
    contentHeight_ = 0;
    hasWeightGrad_ = hasRecompute_ = hasDpSync_ = false;
    // The legend's entries first: its height decides what room fitted rows get.
    if (evaluation_)
        for (const TimelineOp& op : evaluation_->timeline.ops) {
            hasWeightGrad_ |= op.kind == OpKind::WeightGrad;
            hasRecompute_ |= op.kind == OpKind::Recompute;
            hasDpSync_ |= op.kind == OpKind::DpSync;
        }
    computeMetrics();
    if (!evaluation_)
        return;
    const Timeline& tl = evaluation_->timeline;
    const int stages = std::max(0, tl.stages);
    const int chunks = rowsPerStage();

    double y = 0;
    for (int s = 0; s < stages; ++s) {
        const int building = stageBuilding(s);
        if (bands_.empty() || bands_.back().building != building) {
            bands_.push_back({building, s, s, y});
            y += m_.bandHeight;
        }
        bands_.back().lastStage = s;
        StageBlock block;
        block.top = y;
        block.firstLane = int(lanes_.size());
        for (int c = 0; c < chunks; ++c) {
            Lane lane;
            lane.kind = LaneKind::Compute;
            lane.stage = s;
            lane.chunk = c;
            lane.y = y;
            lane.height = m_.rowHeight;
            computeLanes_.push_back(int(lanes_.size()));
            lanes_.push_back(std::move(lane));
            y += m_.rowHeight;
        }
        for (LaneKind kind : {LaneKind::Transfers, LaneKind::Sync}) {
            Lane lane;
            lane.kind = kind;
            lane.stage = s;
            lane.y = y;
            lane.height = m_.laneHeight;
            lanes_.push_back(std::move(lane));
            y += m_.laneHeight;
        }
        block.bottom = y;
        stages_.push_back(block);
        y += m_.stageGap;
    }
    contentHeight_ = y;

    for (std::size_t i = 0; i < tl.ops.size(); ++i) {
        const TimelineOp& op = tl.ops[i];
        const int lane = laneOf(op);
        if (lane < 0 || !(op.end_s > op.start_s))
            continue;
        lanes_[std::size_t(lane)].ops.push_back(int(i));
    }
    for (Lane& lane : lanes_) {
        std::stable_sort(lane.ops.begin(), lane.ops.end(), [&tl](int a, int b) {
            return tl.ops[std::size_t(a)].start_s < tl.ops[std::size_t(b)].start_s;
        });
        for (int i : lane.ops) {
            const TimelineOp& op = tl.ops[std::size_t(i)];
            lane.longest_s = std::max(lane.longest_s, op.end_s - op.start_s);
        }
    }

    // A stage idles when none of its chunks computes: gaps between 0 and
    // its last compute op.
    const double eps = std::max(1e-12, tl.makespan_s * 1e-7);
    bubbles_.assign(std::size_t(stages), {});
    for (int s = 0; s < stages; ++s) {
        std::vector<std::pair<double, double>> busy;
        for (int c = 0; c < chunks; ++c)
            for (int i : lanes_[std::size_t(computeLanes_[std::size_t(s * chunks + c)])].ops)
                busy.emplace_back(tl.ops[std::size_t(i)].start_s, tl.ops[std::size_t(i)].end_s);
        std::sort(busy.begin(), busy.end());
        double cursor = 0;
        for (const auto& [start, end] : busy) {
            if (start > cursor + eps)
                bubbles_[std::size_t(s)].push_back({s, cursor, start});
            cursor = std::max(cursor, end);
        }
    }
}

void TimelineView::computeMetrics() {
    const QFontMetrics fm(font());
    const int line = fm.height();
    m_.headerHeight = line + 12;
    m_.axisHeight = line + 14;
    m_.rowHeight = line + 6;
    m_.laneHeight = std::max(9, line * 3 / 5);
    m_.bandHeight = line + 6;
    m_.stageGap = 4;
    int labels = fm.horizontalAdvance(QStringLiteral("Pipeline stage"));
    if (evaluation_) {
        const int stages = evaluation_->timeline.stages;
        const int chunks = std::max(1, evaluation_->timeline.chunks);
        const QString widest =
            chunks > 1
                ? QStringLiteral("Stage %1 · chunk %2").arg(std::max(0, stages - 1)).arg(chunks - 1)
                : QStringLiteral("Stage %1").arg(std::max(0, stages - 1));
        labels = std::max(labels, fm.horizontalAdvance(widest));
    }
    m_.labelWidth = std::max({96, minimumLabelWidth_, labels + 2 * kLabelPadding + 12});
    mergedChunks_ = false;
    if (fitRows_)
        fitRowsToHeight();
}

// Compare mode: two timelines share the dock's height, so the rows of each
// shrink until every stage fits its pane (a stage's chunks into one row,
// a compute row down to kMinFitRowPx, the send and sync lanes down to a
// pixel); the building bands keep their height, so building names stay
// readable. Labels that no longer fit a row are thinned out when painted.
void TimelineView::fitRowsToHeight() {
    if (!evaluation_)
        return;
    const int stages = std::max(0, evaluation_->timeline.stages);
    if (stages == 0)
        return;
    int bands = 0;
    int last = std::numeric_limits<int>::min();
    for (int s = 0; s < stages; ++s)
        if (const int b = stageBuilding(s); s == 0 || b != last) {
            ++bands;
            last = b;
        }
    const double available = rowsBottom(viewport()->size()) - rowsTop();
    auto fits = [&] {
        const double perStage = rowsPerStage() * m_.rowHeight + 2 * m_.laneHeight + m_.stageGap;
        return bands * m_.bandHeight + stages * perStage <= available;
    };
    if (fits())
        return;
    // A stage's chunks run on the same GPUs and never overlap in time: one
    // row shows them all (the tooltip still names the chunk).
    mergedChunks_ = evaluation_->timeline.chunks > 1;
    if (fits())
        return;
    // Each stage's share of the height: the send and sync lanes a fifth of
    // it each (at least a pixel), the compute rows the rest (at least
    // kMinFitRowPx); no gap between stages when that is short (alternate
    // shades still tell them apart).
    const int rows = rowsPerStage();
    const double share = (available - bands * m_.bandHeight) / stages;
    m_.stageGap = share >= 12 ? 1 : 0;
    const double room = share - m_.stageGap;
    m_.laneHeight = std::clamp(int(std::floor(room / 5)), 1, m_.laneHeight);
    m_.rowHeight = std::max(kMinFitRowPx, int(std::floor((room - 2 * m_.laneHeight) / rows)));
}

int TimelineView::rowsPerStage() const {
    return mergedChunks_ || !evaluation_ ? 1 : std::max(1, evaluation_->timeline.chunks);
}

// A switch that changes the rows' layout: laid out again and repainted.
void TimelineView::setLayoutSwitch(bool& option, bool value) {
    if (option == value)
        return;
    option = value;
    rebuild();
    updateScrollBars();
    viewport()->update();
}

void TimelineView::setLegendShown(bool shown) {
    setLayoutSwitch(legendShown_, shown);
}

void TimelineView::setFitRows(bool fit) {
    setLayoutSwitch(fitRows_, fit);
}

void TimelineView::setMinimumLabelWidth(int px) {
    if (px == minimumLabelWidth_)
        return;
    minimumLabelWidth_ = px;
    computeMetrics();
    scale_.setWidth(timeArea().width());
    updateZoomLimits();
    if (fitted_ && evaluation_)
        fitScale();
    else
        updateScrollBars();
    viewport()->update();
}

int TimelineView::laneOf(const TimelineOp& op) const {
    if (!evaluation_ || op.stage < 0 || op.stage >= int(stages_.size()))
        return -1;
    const int chunks = std::max(1, evaluation_->timeline.chunks);
    const int rows = rowsPerStage();
    const StageBlock& block = stages_[std::size_t(op.stage)];
    if (isCompute(op.kind)) {
        if (op.chunk < 0 || op.chunk >= chunks)
            return -1;
        return block.firstLane + (rows == 1 ? 0 : op.chunk);
    }
    if (isSend(op.kind))
        return block.firstLane + rows;
    return block.firstLane + rows + 1;
}

int TimelineView::stageBuilding(int stage) const {
    if (!evaluation_ || stage < 0 || stage >= int(evaluation_->stage_building.size()))
        return -1;
    return evaluation_->stage_building[std::size_t(stage)];
}

QString TimelineView::buildingName(int building) const {
    if (building >= 0 && building < buildingNames_.size())
        return buildingNames_[building];
    if (building < 0)
        return QStringLiteral("unknown building");
    return QStringLiteral("building %1").arg(building);
}

// ---------------------------------------------------------------- geometry

int TimelineView::rowsTop() const {
    return m_.headerHeight + m_.axisHeight;
}

int TimelineView::rowsBottom(QSize size) const {
    return std::max(rowsTop(), size.height() - legendHeightFor(size.width()));
}

QRect TimelineView::timeAreaOf(QSize size) const {
    const int top = rowsTop();
    return QRect(m_.labelWidth, top, std::max(1, size.width() - m_.labelWidth - kRightMargin),
                 std::max(1, rowsBottom(size) - top));
}

QRect TimelineView::timeArea() const {
    return timeAreaOf(viewport()->size());
}

int TimelineView::contentHeight() const {
    return int(std::ceil(contentHeight_));
}

double TimelineView::scrollY() const {
    return verticalScrollBar()->value();
}

int TimelineView::rowCount() const {
    return int(computeLanes_.size());
}

QString TimelineView::rowLabel(int row) const {
    if (row < 0 || row >= rowCount())
        return {};
    const Lane& lane = lanes_[std::size_t(computeLanes_[std::size_t(row)])];
    if (rowsPerStage() > 1)
        return QStringLiteral("Stage %1 · chunk %2").arg(lane.stage).arg(lane.chunk);
    return QStringLiteral("Stage %1").arg(lane.stage);
}

QRectF TimelineView::rowRect(int row) const {
    if (row < 0 || row >= rowCount())
        return {};
    const Lane& lane = lanes_[std::size_t(computeLanes_[std::size_t(row)])];
    const QRect area = timeArea();
    return QRectF(area.left(), rowsTop() + lane.y - scrollY(), area.width(), lane.height);
}

std::vector<TimelineView::Bubble> TimelineView::bubbles(int stage) const {
    if (stage < 0 || stage >= int(bubbles_.size()))
        return {};
    return bubbles_[std::size_t(stage)];
}

QRectF TimelineView::opRect(const TimelineOp& op) const {
    const int l = laneOf(op);
    if (l < 0)
        return {};
    const Lane& lane = lanes_[std::size_t(l)];
    const double inset = lane.kind == LaneKind::Compute ? 2 : 1;
    const QRect area = timeArea();
    const double x1 = area.left() + scale_.x(op.start_s);
    const double x2 = area.left() + scale_.x(op.end_s);
    return QRectF(x1, rowsTop() + lane.y - scrollY() + inset, std::max(1.0, x2 - x1),
                  lane.height - 2 * inset);
}

std::optional<double> TimelineView::contentYAt(QPoint pos) const {
    if (!timeArea().contains(pos))
        return std::nullopt;
    if (const auto sticky = stickyBand(screenFrame());
        sticky && pos.y() < sticky->second + m_.bandHeight)
        return std::nullopt;
    return pos.y() - rowsTop() + scrollY();
}

std::optional<TimelineOp> TimelineView::opAt(QPoint pos) const {
    const auto contentY = evaluation_ ? contentYAt(pos) : std::nullopt;
    if (!contentY)
        return std::nullopt;
    const QRect area = timeArea();
    const double y = *contentY;
    auto it = std::upper_bound(lanes_.begin(), lanes_.end(), y,
                               [](double v, const Lane& lane) { return v < lane.y; });
    if (it == lanes_.begin())
        return std::nullopt;
    const Lane& lane = *std::prev(it);
    if (y >= lane.y + lane.height)
        return std::nullopt;
    const auto& ops = evaluation_->timeline.ops;
    const double t = scale_.t(pos.x() - area.left());
    // Ops narrower than a pixel are drawn merged: accept one within 2 px.
    const double slack = 2 * scale_.secondsPerPixel();
    auto first =
        std::lower_bound(lane.ops.begin(), lane.ops.end(), t - lane.longest_s - slack,
                         [&ops](int i, double v) { return ops[std::size_t(i)].start_s < v; });
    int hit = -1;
    int nearest = -1;
    double nearestDistance = slack;
    for (auto i = first; i != lane.ops.end(); ++i) {
        const TimelineOp& op = ops[std::size_t(*i)];
        if (op.start_s > t + slack)
            break;
        if (op.start_s <= t && t <= op.end_s) {
            hit = *i; // the last one wins: it is drawn on top
            continue;
        }
        const double distance = t < op.start_s ? op.start_s - t : t - op.end_s;
        if (distance <= nearestDistance) {
            nearestDistance = distance;
            nearest = *i;
        }
    }
    if (hit < 0)
        hit = nearest;
    if (hit < 0)
        return std::nullopt;
    return ops[std::size_t(hit)];
}

std::optional<TimelineView::Bubble> TimelineView::bubbleAt(QPoint pos) const {
    const auto contentY = evaluation_ && !opAt(pos) ? contentYAt(pos) : std::nullopt;
    if (!contentY)
        return std::nullopt;
    const QRect area = timeArea();
    const double y = *contentY;
    for (std::size_t s = 0; s < stages_.size(); ++s) {
        const double computeBottom = stages_[s].top + rowsPerStage() * m_.rowHeight;
        if (y < stages_[s].top || y >= computeBottom)
            continue;
        const double t = scale_.t(pos.x() - area.left());
        const auto& list = bubbles_[s];
        auto it = std::lower_bound(list.begin(), list.end(), t,
                                   [](const Bubble& b, double v) { return b.end_s < v; });
        if (it != list.end() && it->start_s <= t)
            return *it;
        return std::nullopt;
    }
    return std::nullopt;
}

// ---------------------------------------------------------------- text

QString TimelineView::kindName(OpKind kind) {
    switch (kind) {
    case OpKind::Forward:
        return QStringLiteral("Forward");
    case OpKind::Backward:
        return QStringLiteral("Backward");
    case OpKind::WeightGrad:
        return QStringLiteral("Weight gradient");
    case OpKind::Recompute:
        return QStringLiteral("Recompute");
    case OpKind::SendForward:
        return QStringLiteral("P2P send: activations");
    case OpKind::SendBackward:
        return QStringLiteral("P2P send: gradients");
    case OpKind::DpSync:
        return QStringLiteral("DP sync");
    case OpKind::Optimizer:
        return QStringLiteral("Optimizer step");
    }
    return QStringLiteral("Op");
}

QColor TimelineView::colorFor(OpKind kind, bool crossBuilding) {
    switch (kind) {
    case OpKind::Forward:
        return kForward;
    case OpKind::Backward:
        return kBackward;
    case OpKind::WeightGrad:
        return kWeightGrad;
    case OpKind::Recompute:
        return kRecompute;
    case OpKind::SendForward:
    case OpKind::SendBackward:
        return crossBuilding ? kSendCrossing : kSend;
    case OpKind::DpSync:
        return kDpHidden;
    case OpKind::Optimizer:
        return kOptimizer;
    }
    return kSend;
}

QString TimelineView::toolTipFor(const TimelineOp& op) const {
    const int chunks = evaluation_ ? std::max(1, evaluation_->timeline.chunks) : 1;
    const int stages = evaluation_ ? std::max(1, evaluation_->timeline.stages) : 1;
    auto where = [&](int stage, int chunk) {
        QString s = QStringLiteral("stage %1").arg(stage);
        if (chunks > 1)
            s += QStringLiteral(" · chunk %1").arg(chunk);
        return s;
    };
    QStringList lines;
    QString head = QStringLiteral("<b>%1</b>").arg(kindName(op.kind));
    if (op.microbatch >= 0)
        head += QStringLiteral(" · microbatch %1").arg(op.microbatch);
    lines << head;
    if (isSend(op.kind)) {
        const int from = op.chunk * stages + op.stage;
        const int to = op.kind == OpKind::SendForward ? from + 1 : from - 1;
        const int toStage = ((to % stages) + stages) % stages;
        const int toChunk = to / stages;
        lines << QStringLiteral("%1 → %2").arg(where(op.stage, op.chunk), where(toStage, toChunk));
        const QString a = buildingName(stageBuilding(op.stage));
        const QString b = buildingName(stageBuilding(toStage));
        if (op.cross_building)
            lines << QStringLiteral("<b>crosses buildings</b>: %1 → %2").arg(a, b);
        else
            lines << QStringLiteral("inside %1").arg(a);
    } else {
        QString at = op.kind == OpKind::DpSync || op.kind == OpKind::Optimizer
                         ? QStringLiteral("stage %1").arg(op.stage)
                         : where(op.stage, op.chunk);
        lines << QStringLiteral("%1 · %2").arg(at, buildingName(stageBuilding(op.stage)));
    }
    lines << QStringLiteral("start %1 · duration %2")
                 .arg(formatSeconds(op.start_s), formatSeconds(op.end_s - op.start_s));
    if (op.kind == OpKind::DpSync) {
        const double exposed = std::clamp(op.exposed_s, 0.0, op.end_s - op.start_s);
        lines << QStringLiteral("exposed %1 · hidden behind compute %2")
                     .arg(formatSeconds(exposed), formatSeconds(op.end_s - op.start_s - exposed));
    }
    return lines.join(QStringLiteral("<br/>"));
}

QString TimelineView::toolTipFor(const Bubble& bubble) const {
    return QStringLiteral("<b>Bubble</b> · stage %1 idle<br/>from %2 · for %3")
        .arg(bubble.stage)
        .arg(formatSeconds(bubble.start_s), formatSeconds(bubble.end_s - bubble.start_s));
}

QString TimelineView::summaryText() const {
    if (!evaluation_)
        return {};
    const Timeline& tl = evaluation_->timeline;
    QString s =
        QStringLiteral("step %1 · %2 stages").arg(formatStepTime(tl.makespan_s)).arg(tl.stages);
    if (tl.chunks > 1)
        s += QStringLiteral(" × %1 chunks").arg(tl.chunks);
    s += QStringLiteral(" · %1 microbatches").arg(tl.microbatches);
    const double bubble = evaluation_->breakdown.bubble_s;
    if (bubble > 0 && evaluation_->step_time_s > 0)
        s += QStringLiteral(" · bubble %1 (%2 of the step)")
                 .arg(formatSeconds(bubble), formatPercent(bubble / evaluation_->step_time_s));
    return s;
}

// ---------------------------------------------------------------- scale

void TimelineView::updateZoomLimits() {
    const double makespan = evaluation_ ? std::max(evaluation_->timeline.makespan_s, 1e-6) : 1.0;
    // Out to four steps across the window; in to a nanosecond per pixel.
    scale_.setZoomLimits(TimeScale::kMinSecondsPerPixel,
                         4 * makespan / std::max(1, timeArea().width()));
}

void TimelineView::fitScale() {
    TimeScale s = scale_;
    const double makespan = evaluation_ ? evaluation_->timeline.makespan_s : 1.0;
    const double pad = makespan * kFitPadding;
    s.fit(-pad, makespan + pad, timeArea().width());
    applyScale(s, false);
}

void TimelineView::applyScale(const TimeScale& scale, bool byUser) {
    const bool changed =
        scale.t0() != scale_.t0() || scale.secondsPerPixel() != scale_.secondsPerPixel();
    // Only a scale that moves is the user's: a partner view's echo of this
    // view's own fit (TimelinePane keeps the two in step) leaves it fitted,
    // so that it fits again when the window is resized.
    if (byUser && changed)
        fitted_ = false;
    scale_ = scale;
    scale_.setWidth(timeArea().width());
    updateScrollBars();
    viewport()->update();
    if (changed)
        Q_EMIT scaleChanged(scale_.t0(), scale_.secondsPerPixel());
}

void TimelineView::setTimeRange(double begin_s, double end_s) {
    TimeScale s = scale_;
    s.fit(begin_s, end_s, timeArea().width());
    applyScale(s, true);
}

void TimelineView::setScale(double t0, double secondsPerPixel) {
    TimeScale s = scale_;
    s.setSecondsPerPixel(secondsPerPixel);
    s.setT0(t0);
    applyScale(s, true);
}

void TimelineView::fitToWindow() {
    fitted_ = true;
    fitScale();
}

void TimelineView::zoomBy(double factor, std::optional<double> aroundX) {
    TimeScale s = scale_;
    s.zoomAround(aroundX.value_or(s.width() / 2), factor);
    applyScale(s, true);
}

void TimelineView::zoomIn() {
    zoomBy(kWheelZoomStep, std::nullopt);
}

void TimelineView::zoomOut() {
    zoomBy(1 / kWheelZoomStep, std::nullopt);
}

void TimelineView::updateScrollBars() {
    QScrollBar* v = verticalScrollBar();
    QScrollBar* h = horizontalScrollBar();
    const QRect area = timeArea();
    {
        const QSignalBlocker block(v);
        v->setRange(0, std::max(0, contentHeight() - area.height()));
        v->setPageStep(area.height());
        v->setSingleStep(m_.rowHeight);
    }
    const QSignalBlocker block(h);
    if (!evaluation_) {
        h->setRange(0, 0);
        return;
    }
    const double makespan = evaluation_->timeline.makespan_s;
    const double pad = makespan * kFitPadding;
    const double spp = scale_.secondsPerPixel();
    const double begin = std::min(-pad, scale_.visibleBegin());
    const double end = std::max(makespan + pad, scale_.visibleEnd());
    const double totalPx = (end - begin) / spp;
    hUnitPx_ = std::max(1.0, totalPx / 1e9);
    hBegin_s_ = begin;
    const double pagePx = area.width();
    h->setRange(0, int(std::max(0.0, std::round((totalPx - pagePx) / hUnitPx_))));
    h->setPageStep(std::max(1, int(pagePx / hUnitPx_)));
    h->setSingleStep(std::max(1, int(pagePx / hUnitPx_ / 20)));
    h->setValue(int(std::round((scale_.t0() - begin) / spp / hUnitPx_)));
}

// ---------------------------------------------------------------- events

void TimelineView::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    if (fitRows_ && evaluation_)
        rebuild(); // the rows follow the pane's size (and the legend's lines)
    else
        computeMetrics();
    scale_.setWidth(timeArea().width());
    updateZoomLimits();
    if (fitted_ && evaluation_)
        fitScale();
    else
        updateScrollBars();
}

void TimelineView::changeEvent(QEvent* event) {
    QAbstractScrollArea::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        rebuild();
        updateScrollBars();
        viewport()->update();
    }
}

void TimelineView::scrollContentsBy(int, int) {
    viewport()->update();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    const QPoint pos = event->position().toPoint();
    const QRect area = timeArea();
    const QPoint angle = event->angleDelta();
    if (event->modifiers() & Qt::ControlModifier) {
        if (angle.y() == 0)
            return;
        const std::optional<double> x = pos.x() >= area.left() && pos.x() <= area.right()
                                            ? std::optional<double>(pos.x() - area.left())
                                            : std::nullopt;
        zoomBy(std::pow(kWheelZoomStep, angle.y() / 120.0), x);
        event->accept();
        return;
    }
    const bool horizontal = (event->modifiers() & Qt::ShiftModifier) ||
                            std::abs(angle.x()) > std::abs(angle.y()) ||
                            verticalScrollBar()->maximum() == 0;
    const int delta = std::abs(angle.x()) > std::abs(angle.y()) ? angle.x() : angle.y();
    if (horizontal) {
        TimeScale s = scale_;
        s.pan(delta / 120.0 * area.width() / 10);
        applyScale(s, true);
    } else {
        verticalScrollBar()->setValue(verticalScrollBar()->value() -
                                      int(delta / 120.0 * 3 * m_.rowHeight));
    }
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
    const QRect area = timeArea();
    const QPoint cursor = viewport()->mapFromGlobal(QCursor::pos());
    const std::optional<double> x =
        area.contains(cursor) ? std::optional<double>(cursor.x() - area.left()) : std::nullopt;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(kWheelZoomStep, x);
        break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
        zoomBy(1 / kWheelZoomStep, x);
        break;
    case Qt::Key_0:
    case Qt::Key_F:
        fitToWindow();
        break;
    case Qt::Key_Left:
    case Qt::Key_Right: {
        TimeScale s = scale_;
        s.pan((event->key() == Qt::Key_Left ? 1 : -1) * area.width() / 8.0);
        applyScale(s, true);
        break;
    }
    default:
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !evaluation_) {
        QAbstractScrollArea::mousePressEvent(event);
        return;
    }
    dragging_ = true;
    dragStart_ = event->position().toPoint();
    dragT0_ = scale_.t0();
    dragScrollY_ = verticalScrollBar()->value();
    viewport()->setCursor(Qt::ClosedHandCursor);
    event->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    if (!dragging_) {
        QAbstractScrollArea::mouseMoveEvent(event);
        return;
    }
    const QPoint d = event->position().toPoint() - dragStart_;
    TimeScale s = scale_;
    s.setT0(dragT0_ - d.x() * scale_.secondsPerPixel());
    if (s.t0() != scale_.t0())
        applyScale(s, true);
    verticalScrollBar()->setValue(dragScrollY_ - d.y());
    event->accept();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
    if (dragging_ && event->button() == Qt::LeftButton) {
        dragging_ = false;
        viewport()->setCursor(Qt::OpenHandCursor);
        event->accept();
        return;
    }
    QAbstractScrollArea::mouseReleaseEvent(event);
}

bool TimelineView::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const auto op = opAt(help->pos())) {
            QToolTip::showText(help->globalPos(), toolTipFor(*op), viewport(),
                               opRect(*op).toAlignedRect());
        } else if (const auto bubble = bubbleAt(help->pos())) {
            QToolTip::showText(help->globalPos(), toolTipFor(*bubble), viewport());
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

QSize TimelineView::sizeHint() const {
    const int content =
        m_.headerHeight + m_.axisHeight + contentHeight() + legendHeightFor(960) + 24;
    return QSize(960, std::clamp(content, 260, 640));
}

QSize TimelineView::minimumSizeHint() const {
    return QSize(m_.labelWidth + 160, m_.headerHeight + m_.axisHeight + 3 * m_.rowHeight + 40);
}

// ---------------------------------------------------------------- painting

TimelineView::Frame TimelineView::screenFrame() const {
    Frame f;
    f.size = viewport()->size();
    f.scale = scale_;
    f.scale.setWidth(timeAreaOf(f.size).width());
    f.scrollY = scrollY();
    return f;
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter p(viewport());
    paintFrame(p, screenFrame());
}

void TimelineView::paintFrame(QPainter& p, const Frame& f) const {
    p.fillRect(QRect(QPoint(0, 0), f.size), Qt::white);
    if (!evaluation_) {
        p.setPen(kMuted);
        const QRect box = QRect(QPoint(0, 0), f.size).adjusted(24, 24, -24, -24);
        p.drawText(box, Qt::AlignCenter | Qt::TextWordWrap, message_);
        return;
    }
    const QRect area = timeAreaOf(f.size);
    const QRect rows(0, area.top(), f.size.width(), area.height());
    p.save();
    p.setClipRect(rows);
    paintLanes(p, f, area);
    paintLabels(p, f);
    p.restore();
    paintAxis(p, f);
    paintHeader(p, f);
    paintLegend(p, f);
}

void TimelineView::paintLanes(QPainter& p, const Frame& f, const QRect& area) const {
    const double top = area.top() - f.scrollY;
    const int rows = rowsPerStage();
    // Building bands across the whole width, a dark rule where the building
    // changes.
    for (std::size_t b = 0; b < bands_.size(); ++b) {
        const BuildingBand& band = bands_[b];
        const QRectF r(0, top + band.y, f.size.width(), m_.bandHeight);
        if (r.bottom() < area.top() || r.top() > area.bottom())
            continue;
        const std::size_t tint = std::size_t(std::max(0, band.building)) % std::size(kBuildingTint);
        p.fillRect(r, kBuildingTint[tint]);
        p.fillRect(QRectF(0, r.top(), f.size.width(), b == 0 ? 1 : 2), b == 0 ? kRule : kSeparator);
    }
    // Stage backgrounds: alternate shades so rows read across.
    for (std::size_t s = 0; s < stages_.size(); ++s) {
        const QRectF r(area.left(), top + stages_[s].top, area.width(),
                       stages_[s].bottom - stages_[s].top);
        if (r.bottom() < area.top() || r.top() > area.bottom())
            continue;
        if (s % 2 == 1)
            p.fillRect(r, QColor(0xfa, 0xfb, 0xfc));
        // The lanes for sends and sync: a faint floor.
        const double lanesTop = top + stages_[s].top + rows * m_.rowHeight;
        p.fillRect(QRectF(area.left(), lanesTop, area.width(), 2 * m_.laneHeight),
                   QColor(0xf5, 0xf6, 0xf8));
    }
    // Gridlines.
    const double major = f.scale.majorStep();
    const double minor = TimeScale::minorStep(major);
    p.setPen(QPen(kGridMinor, 1));
    for (double t : f.scale.tickTimes(minor)) {
        const double x = std::round(area.left() + f.scale.x(t)) + 0.5;
        p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    }
    p.setPen(QPen(kGrid, 1));
    for (double t : f.scale.tickTimes(major)) {
        const double x = std::round(area.left() + f.scale.x(t)) + 0.5;
        p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    }

    p.save();
    p.setClipRect(area.adjusted(0, 0, 1, 0));
    paintBubbles(p, f, area);
    for (const Lane& lane : lanes_) {
        const double y = top + lane.y;
        if (y + lane.height < area.top() || y > area.bottom())
            continue;
        paintLane(p, f, lane, area, y);
    }
    // The end of the step.
    const double xEnd = area.left() + f.scale.x(evaluation_->timeline.makespan_s);
    if (xEnd >= area.left() && xEnd <= area.right() + 1) {
        p.setPen(QPen(kSeparator, 1, Qt::DashLine));
        p.drawLine(QPointF(xEnd, area.top()), QPointF(xEnd, area.bottom()));
    }
    p.restore();
}

void TimelineView::paintBubbles(QPainter& p, const Frame& f, const QRect& area) const {
    const double top = area.top() - f.scrollY;
    const int rows = rowsPerStage();
    const double tBegin = f.scale.visibleBegin();
    const double tEnd = f.scale.visibleEnd();
    for (std::size_t s = 0; s < stages_.size(); ++s) {
        const double y = top + stages_[s].top;
        const double h = rows * m_.rowHeight;
        if (y + h < area.top() || y > area.bottom())
            continue;
        const auto& list = bubbles_[s];
        auto it = std::lower_bound(list.begin(), list.end(), tBegin,
                                   [](const Bubble& b, double v) { return b.end_s < v; });
        for (; it != list.end() && it->start_s <= tEnd; ++it) {
            const double x1 = std::max(area.left() - 2.0, area.left() + f.scale.x(it->start_s));
            const double x2 = std::min(area.right() + 2.0, area.left() + f.scale.x(it->end_s));
            if (x2 - x1 < 0.5)
                continue;
            const QRectF r(x1, y + 1, x2 - x1, h - 2);
            p.fillRect(r, kBubbleFill);
            hatch(p, r, kBubbleHatch, 6);
        }
    }
}

void TimelineView::paintLane(QPainter& p, const Frame& f, const Lane& lane, const QRect& area,
                             double top) const {
    const auto& ops = evaluation_->timeline.ops;
    const bool compute = lane.kind == LaneKind::Compute;
    // Rows squeezed to a few pixels (compare mode) keep their whole height.
    const double inset = std::min(compute ? 2.0 : 1.0, std::floor((lane.height - 1) / 3.0));
    const double y = top + inset;
    const double h = lane.height - 2 * inset;
    const double tBegin = f.scale.visibleBegin();
    const double tEnd = f.scale.visibleEnd();
    const double left = area.left();
    const double clipLeft = left - 4;
    const double clipRight = area.right() + 4;

    QFont small = p.font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
    const QFontMetricsF fm(small);
    p.setFont(small);

    // Ops narrower than a pixel go into one run, drawn as a single block
    // (a crossing send gives the run its colour, so it never disappears).
    double runX1 = 0, runX2 = -1;
    QColor runColor;
    auto flush = [&] {
        if (runX2 > runX1)
            p.fillRect(QRectF(runX1, y, std::max(1.0, runX2 - runX1), h), runColor);
        runX2 = -1;
    };

    auto first =
        std::lower_bound(lane.ops.begin(), lane.ops.end(), tBegin - lane.longest_s,
                         [&ops](int i, double v) { return ops[std::size_t(i)].start_s < v; });
    for (auto i = first; i != lane.ops.end(); ++i) {
        const TimelineOp& op = ops[std::size_t(*i)];
        if (op.start_s > tEnd)
            break;
        if (op.end_s < tBegin)
            continue;
        const double x1 = std::max(clipLeft, left + f.scale.x(op.start_s));
        const double x2 = std::min(clipRight, left + f.scale.x(op.end_s));
        const QColor color = colorFor(op.kind, op.cross_building);
        if (x2 - x1 < 1.0) {
            if (runX2 >= 0 && x1 <= runX2 + 1) {
                runX2 = std::max(runX2, x1 + 1);
                if (isSend(op.kind) && op.cross_building)
                    runColor = color;
            } else {
                flush();
                runX1 = x1;
                runX2 = x1 + 1;
                runColor = color;
            }
            continue;
        }
        flush();
        const QRectF r(x1, y, x2 - x1, h);
        if (op.kind == OpKind::DpSync) {
            const double exposed = std::clamp(op.exposed_s, 0.0, op.end_s - op.start_s);
            const double xe = std::clamp(left + f.scale.x(op.end_s - exposed), x1, x2);
            p.fillRect(QRectF(x1, y, xe - x1, h), kDpHidden);
            if (x2 > xe) {
                const QRectF ex(xe, y, x2 - xe, h);
                p.fillRect(ex, kDpExposed);
                hatch(p, ex, kDpExposed.darker(150), 4);
            }
            continue;
        }
        p.fillRect(r, color);
        if (isSend(op.kind) && op.cross_building)
            hatch(p, r, QColor(255, 255, 255, 200), 4);
        if (compute && r.width() >= 4) {
            p.setPen(QPen(color.darker(135), 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
            if (op.microbatch >= 0) {
                const QString text = QString::number(op.microbatch);
                if (fm.horizontalAdvance(text) + 4 <= r.width() && fm.height() <= h + 2) {
                    p.setPen(textOn(color));
                    p.drawText(r, Qt::AlignCenter, text);
                }
            }
        }
    }
    flush();
}

void TimelineView::paintLabels(QPainter& p, const Frame& f) const {
    const int top = rowsTop();
    const double y0 = top - f.scrollY;
    const int chunks = rowsPerStage();
    const int bottom = rowsBottom(f.size);
    p.fillRect(QRect(0, top, m_.labelWidth, bottom - top), QColor(0xfb, 0xfc, 0xfd));
    // The column's edge first: building names run over it into their band.
    p.setPen(QPen(kRule, 1));
    p.drawLine(QPointF(m_.labelWidth - 0.5, top), QPointF(m_.labelWidth - 0.5, bottom));

    // Building bands: the name spills into the empty band.
    for (std::size_t b = 0; b < bands_.size(); ++b) {
        const double y = y0 + bands_[b].y;
        if (y + m_.bandHeight >= top && y <= bottom)
            paintBand(p, f, b, y, false);
    }

    const int line = QFontMetrics(font()).height();
    if (m_.rowHeight < line - 2) {
        paintSqueezedLabels(p, y0, top, bottom, line);
        p.setFont(font());
        if (const auto sticky = stickyBand(f))
            paintBand(p, f, sticky->first, sticky->second, true);
        return;
    }
    QFont tiny = font();
    tiny.setPixelSize(std::max(8, m_.laneHeight - 1));
    for (const Lane& lane : lanes_) {
        const QRectF r(kLabelPadding, y0 + lane.y, m_.labelWidth - 2 * kLabelPadding, lane.height);
        if (r.bottom() < top || r.top() > bottom)
            continue;
        if (lane.kind != LaneKind::Compute && lane.height < 9)
            continue; // no room for its name
        if (lane.kind == LaneKind::Compute) {
            p.setFont(font());
            p.setPen(kInk);
            const QString label =
                chunks > 1 ? QStringLiteral("Stage %1 · chunk %2").arg(lane.stage).arg(lane.chunk)
                           : QStringLiteral("Stage %1").arg(lane.stage);
            p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, label);
        } else {
            p.setFont(tiny);
            p.setPen(kMuted);
            p.drawText(r, Qt::AlignRight | Qt::AlignVCenter,
                       lane.kind == LaneKind::Transfers ? QStringLiteral("P2P")
                                                        : QStringLiteral("DP sync"));
        }
    }
    p.setFont(font());
    if (const auto sticky = stickyBand(f))
        paintBand(p, f, sticky->first, sticky->second, true);
}

// Rows lower than a line of text: one "Stage s" per stage, centred on its
// rows at the normal size (or up to half a line lower), skipping a stage
// whose label would still run into the one above it or into a building band.
void TimelineView::paintSqueezedLabels(QPainter& p, double y0, int top, int bottom,
                                       int line) const {
    p.setFont(font());
    p.setPen(kInk);
    const int chunks = rowsPerStage();
    double taken = -std::numeric_limits<double>::infinity();
    std::size_t band = 0;
    for (std::size_t s = 0; s < stages_.size(); ++s) {
        while (band < bands_.size() && bands_[band].firstStage <= int(s)) {
            taken = std::max(taken, y0 + bands_[band].y + m_.bandHeight);
            ++band;
        }
        const double rowsTopY = y0 + stages_[s].top;
        const double centre = rowsTopY + chunks * m_.rowHeight / 2.0;
        // Pushed down by up to half a line to clear the label or band above.
        const double y = std::max(centre - line / 2.0, taken);
        if (y > centre)
            continue;
        const QRectF r(kLabelPadding, y, m_.labelWidth - 2 * kLabelPadding, line);
        if (r.bottom() < top || r.top() > bottom)
            continue;
        p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("Stage %1").arg(s));
        taken = r.bottom();
    }
}

std::optional<std::pair<std::size_t, double>> TimelineView::stickyBand(const Frame& f) const {
    // The building of the topmost visible stage stays named at the top; the
    // next building's band pushes it out.
    const double viewTop = f.scrollY;
    std::optional<std::pair<std::size_t, double>> out;
    for (std::size_t b = 0; b < bands_.size() && bands_[b].y < viewTop; ++b) {
        double y = rowsTop();
        if (b + 1 < bands_.size())
            y = std::min(y, rowsTop() + bands_[b + 1].y - viewTop - m_.bandHeight);
        out = std::make_pair(b, y);
    }
    return out;
}

void TimelineView::paintBand(QPainter& p, const Frame& f, std::size_t b, double y,
                             bool sticky) const {
    const BuildingBand& band = bands_[b];
    const QRectF r(0, y, f.size.width(), m_.bandHeight);
    const std::size_t tint = std::size_t(std::max(0, band.building)) % std::size(kBuildingMark);
    p.fillRect(sticky ? r : QRectF(0, r.top(), m_.labelWidth, r.height()), kBuildingTint[tint]);
    if (sticky) {
        p.fillRect(QRectF(0, r.bottom() - 1, r.width(), 1), kRule);
    } else {
        p.fillRect(QRectF(0, r.top(), r.width(), b == 0 ? 1 : 2), b == 0 ? kRule : kSeparator);
    }
    p.fillRect(QRectF(kLabelPadding, r.center().y() - 5, 10, 10), kBuildingMark[tint]);
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(kInk);
    const QString name = buildingName(band.building);
    const QRectF text(kLabelPadding + 16, r.top(), f.size.width(), r.height());
    p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, name);
    p.setFont(font());
    p.setPen(kMuted);
    const int nameWidth = QFontMetrics(bold).horizontalAdvance(name);
    p.drawText(text.adjusted(nameWidth + 8, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("stages %1").arg(formatRange(band.firstStage, band.lastStage)));
}

void TimelineView::paintAxis(QPainter& p, const Frame& f) const {
    const QRect area = timeAreaOf(f.size);
    const QRect band(0, m_.headerHeight, f.size.width(), m_.axisHeight);
    p.fillRect(band, QColor(0xf6, 0xf7, 0xf9));
    p.setPen(QPen(kRule, 1));
    p.drawLine(QPointF(0, band.bottom() + 0.5), QPointF(f.size.width(), band.bottom() + 0.5));
    p.drawLine(QPointF(0, band.top() + 0.5), QPointF(f.size.width(), band.top() + 0.5));
    p.setPen(kMuted);
    p.drawText(QRect(kLabelPadding, band.top(), m_.labelWidth - kLabelPadding, band.height()),
               Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("Pipeline stage"));

    p.save();
    p.setClipRect(
        QRect(area.left() - 40, band.top(), f.size.width() - area.left() + 40, band.height()));
    const double bottom = band.bottom() + 1;
    const double minor = TimeScale::minorStep(f.scale.majorStep());
    p.setPen(QPen(kRule, 1));
    for (double t : f.scale.tickTimes(minor)) {
        const double x = std::round(area.left() + f.scale.x(t)) + 0.5;
        p.drawLine(QPointF(x, bottom - 4), QPointF(x, bottom));
    }
    const QFontMetrics fm(p.font());
    double lastRight = -1e9;
    for (const TimeScale::Tick& tick : f.scale.ticks()) {
        const double x = std::round(area.left() + tick.x) + 0.5;
        p.setPen(QPen(kMuted, 1));
        p.drawLine(QPointF(x, bottom - 8), QPointF(x, bottom));
        const int w = fm.horizontalAdvance(tick.label);
        double lx = x - w / 2.0;
        lx = std::min(lx, double(f.size.width() - w - 4));
        if (lx < lastRight + 6)
            continue;
        lastRight = lx + w;
        p.setPen(kInk);
        p.drawText(QRectF(lx, band.top() + 2, w + 1, band.height() - 12),
                   Qt::AlignLeft | Qt::AlignVCenter, tick.label);
    }
    p.restore();
}

void TimelineView::paintHeader(QPainter& p, const Frame& f) const {
    const QRect band(0, 0, f.size.width(), m_.headerHeight);
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fmBold(bold);
    const QFontMetrics fm(font());
    int x = kLabelPadding;
    const int room = f.size.width() - 2 * kLabelPadding;
    if (!title_.isEmpty()) {
        const QString title = fmBold.elidedText(title_, Qt::ElideRight, room / 2);
        p.setFont(bold);
        p.setPen(kInk);
        p.drawText(QRect(x, band.top(), room, band.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   title);
        x += fmBold.horizontalAdvance(title) + 14;
    }
    p.setFont(font());
    p.setPen(kMuted);
    const int left = f.size.width() - kLabelPadding - x;
    p.drawText(QRect(x, band.top(), std::max(0, left), band.height()),
               Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(summaryText(), Qt::ElideRight, std::max(0, left)));
}

namespace {

enum class Swatch { Solid, Hatched, Bubble, Dashed, DpSync };

struct LegendEntry {
    QString text;
    QColor color;
    Swatch swatch;
};

constexpr int kSwatchWidth = 18;
constexpr int kSwatchGap = 6;
constexpr int kEntryGap = 16;

int entryWidth(const QFontMetrics& fm, const LegendEntry& e) {
    return kSwatchWidth + kSwatchGap + fm.horizontalAdvance(e.text);
}

std::vector<LegendEntry> legendEntries(bool weightGrad, bool recompute, bool dpSync) {
    std::vector<LegendEntry> entries = {
        {QStringLiteral("Forward"), kForward, Swatch::Solid},
        {QStringLiteral("Backward"), kBackward, Swatch::Solid},
    };
    if (weightGrad)
        entries.push_back({QStringLiteral("Weight gradient"), kWeightGrad, Swatch::Solid});
    if (recompute)
        entries.push_back({QStringLiteral("Recompute"), kRecompute, Swatch::Solid});
    entries.push_back({QStringLiteral("Bubble"), kBubbleFill, Swatch::Bubble});
    entries.push_back({QStringLiteral("P2P send"), kSend, Swatch::Solid});
    entries.push_back({QStringLiteral("crosses buildings"), kSendCrossing, Swatch::Hatched});
    if (dpSync) {
        entries.push_back({QStringLiteral("DP sync, hidden"), kDpHidden, Swatch::Solid});
        entries.push_back({QStringLiteral("DP sync, exposed"), kDpExposed, Swatch::DpSync});
    }
    entries.push_back({QStringLiteral("Optimizer"), kOptimizer, Swatch::Solid});
    entries.push_back({QStringLiteral("Step end"), kSeparator, Swatch::Dashed});
    return entries;
}

} // namespace

int TimelineView::legendHeightFor(int width) const {
    if (!legendShown_)
        return 0;
    const QFontMetrics fm(font());
    int lines = 1;
    int x = kLabelPadding;
    for (const LegendEntry& e : legendEntries(hasWeightGrad_, hasRecompute_, hasDpSync_)) {
        const int w = entryWidth(fm, e);
        if (x + w > width - kLabelPadding && x > kLabelPadding) {
            x = kLabelPadding;
            ++lines;
        }
        x += w + kEntryGap;
    }
    return lines * (fm.height() + 8) + 8;
}

void TimelineView::paintLegend(QPainter& p, const Frame& f) const {
    if (!legendShown_)
        return;
    const int height = legendHeightFor(f.size.width());
    const QRect band(0, f.size.height() - height, f.size.width(), height);
    p.fillRect(band, Qt::white);
    p.setPen(QPen(kRule, 1));
    p.drawLine(QPointF(0, band.top() + 0.5), QPointF(band.right(), band.top() + 0.5));

    p.setFont(font());
    const QFontMetrics fm(font());
    const int lineHeight = fm.height() + 8;
    int x = kLabelPadding;
    int y = band.top() + 6;
    for (const LegendEntry& e : legendEntries(hasWeightGrad_, hasRecompute_, hasDpSync_)) {
        const int w = entryWidth(fm, e);
        if (x + w > f.size.width() - kLabelPadding && x > kLabelPadding) {
            x = kLabelPadding;
            y += lineHeight;
        }
        const QRectF swatch(x, y + (lineHeight - 12) / 2.0, kSwatchWidth, 12);
        switch (e.swatch) {
        case Swatch::Solid:
            p.fillRect(swatch, e.color);
            break;
        case Swatch::Hatched:
            p.fillRect(swatch, e.color);
            hatch(p, swatch, QColor(255, 255, 255, 200), 4);
            break;
        case Swatch::DpSync:
            p.fillRect(swatch, e.color);
            hatch(p, swatch, e.color.darker(150), 4);
            break;
        case Swatch::Bubble:
            p.fillRect(swatch, kBubbleFill);
            hatch(p, swatch, kBubbleHatch, 4);
            p.setPen(QPen(kRule, 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(swatch.adjusted(0.5, 0.5, -0.5, -0.5));
            break;
        case Swatch::Dashed:
            p.setPen(QPen(e.color, 1, Qt::DashLine));
            p.drawLine(QPointF(swatch.center().x(), swatch.top() - 2),
                       QPointF(swatch.center().x(), swatch.bottom() + 2));
            break;
        }
        p.setPen(kInk);
        p.drawText(QRectF(x + kSwatchWidth + kSwatchGap, y, w, lineHeight),
                   Qt::AlignLeft | Qt::AlignVCenter, e.text);
        x += w + kEntryGap;
    }
    if (!f.exporting) {
        const QString hint = QStringLiteral("Ctrl+wheel or +/− zoom · drag pans · 0 fits");
        const int w = fm.horizontalAdvance(hint);
        if (x + w + kLabelPadding <= band.right()) {
            p.setPen(kMuted);
            p.drawText(QRectF(band.right() - kLabelPadding - w, y, w + 2, lineHeight),
                       Qt::AlignRight | Qt::AlignVCenter, hint);
        }
    }
}

// ---------------------------------------------------------------- export

bool TimelineView::exportImage(const QString& path, QString* error) const {
    const QString shown = QDir::toNativeSeparators(path);
    const bool svg = path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive);
    if (!svg && !path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive))
        return failWith(
            error,
            QStringLiteral("Cannot export %1: the name must end in .png or .svg").arg(shown));
    if (!evaluation_)
        return failWith(error,
                        QStringLiteral("Cannot export %1: there is no timeline to export (%2)")
                            .arg(shown, message_));

    // The whole step across at least 1200 pixels, every row.
    Frame f;
    f.exporting = true;
    const int timeWidth = std::max(1200, timeArea().width());
    const int width = m_.labelWidth + timeWidth + kRightMargin;
    const int height = rowsTop() + contentHeight() + legendHeightFor(width);
    f.size = QSize(width, height);
    const double makespan = evaluation_->timeline.makespan_s;
    const double pad = makespan * kFitPadding;
    f.scale.fit(-pad, makespan + pad, timeWidth);

    const QString title = title_.isEmpty() ? QStringLiteral("Pipeline timeline")
                                           : title_ + QStringLiteral(" — timeline");
    return exportPicture(
        path, f.size, title,
        [&](QPainter& p) {
            // Crisp block edges: only the text is antialiased.
            p.setRenderHint(QPainter::Antialiasing, false);
            p.setFont(font());
            paintFrame(p, f);
        },
        error, summaryText());
}

} // namespace sa::views
