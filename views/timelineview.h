#pragma once
// One training step of the critical pipeline replica over time: a row per
// pipeline stage (per virtual stage when interleaved) with its forward,
// backward and weight-gradient blocks, a thin lane under each stage for its
// point-to-point sends, another for its DP/FSDP sync and optimizer step,
// the idle gaps of each stage hatched as bubbles, and stages grouped by the
// building that holds them. The view reads an immutable Evaluation and
// paints only what is visible, so a 10k-op step pans as smoothly as a
// small one.

#include "cost/evaluation.h"
#include "timescale.h"

#include <QAbstractScrollArea>
#include <QColor>
#include <QPoint>
#include <QRectF>
#include <QStringList>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QPainter;

namespace sa::views {

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    // An idle gap of one stage between two of its compute ops.
    struct Bubble {
        int stage = 0;
        double start_s = 0;
        double end_s = 0;
    };

    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    // Shows `evaluation` (its timeline must have been recorded).
    // `buildingNames[i]` names building i of Evaluation::stage_building.
    // The first evaluation is fitted to the window; later ones keep the
    // user's zoom while the step takes about as long as before.
    void setEvaluation(std::shared_ptr<const Evaluation> evaluation, QStringList buildingNames,
                       QString title = {});
    // No timeline; `message` is drawn in the middle instead.
    void clear(QString message);

    std::shared_ptr<const Evaluation> evaluation() const { return evaluation_; }
    QString message() const { return message_; }
    QString title() const { return title_; }

    const TimeScale& scale() const { return scale_; }
    // Shows [begin_s, end_s] across the time area (compare mode aligns two
    // views with it).
    void setTimeRange(double begin_s, double end_s);
    // Compare mode: the rows shrink so that every stage fits the view's
    // height (labels thinned out where a row is lower than a line of text);
    // off, each row keeps a line of text and the view scrolls.
    void setFitRows(bool fit);
    bool fitsRows() const { return fitRows_; }
    // The legend of colours under the rows (compare mode shows it once).
    void setLegendShown(bool shown);
    // Sets the scale as another view reports it through scaleChanged().
    void setScale(double t0, double secondsPerPixel);
    // Whether the view refits itself on resize and on new evaluations (true
    // until the user zooms or pans).
    bool isFitted() const { return fitted_; }

    // The stage-label column; two views in compare mode give theirs one
    // width so their time areas line up.
    int labelWidth() const { return m_.labelWidth; }
    void setMinimumLabelWidth(int px);

    // Positions are in the coordinates of the view, which has no frame, so
    // they are also those of its viewport.
    std::optional<TimelineOp> opAt(QPoint pos) const;
    std::optional<Bubble> bubbleAt(QPoint pos) const;
    // Where `op` is drawn (it may lie outside the visible area); empty for
    // an op the timeline does not hold.
    QRectF opRect(const TimelineOp& op) const;
    QString toolTipFor(const TimelineOp& op) const;
    QString toolTipFor(const Bubble& bubble) const;

    // Compute rows: stages * chunks, stage-major.
    int rowCount() const;
    QString rowLabel(int row) const;
    QRectF rowRect(int row) const;
    // The part of the viewport where time is drawn: x = left + scale().x(t).
    QRect timeArea() const;
    // Bubbles of one stage, in time order.
    std::vector<Bubble> bubbles(int stage) const;

    // The whole step, all rows: PNG at twice the size, or SVG, chosen by the
    // suffix; written through QSaveFile, so a failed export leaves no file.
    bool exportImage(const QString& path, QString* error) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    static QColor colorFor(OpKind kind, bool crossBuilding = false);
    static QString kindName(OpKind kind);

public Q_SLOTS:
    void zoomIn();
    void zoomOut();
    void fitToWindow();

Q_SIGNALS:
    void scaleChanged(double t0, double secondsPerPixel);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void changeEvent(QEvent* event) override;

private:
    enum class LaneKind { Compute, Transfers, Sync };
    struct Lane {
        LaneKind kind = LaneKind::Compute;
        int stage = 0;
        int chunk = 0;
        double y = 0; // from the top of the content, pixels
        double height = 0;
        std::vector<int> ops; // indices into the timeline's ops, by start time
        double longest_s = 0; // longest op, bounds the search for visible ops
    };
    struct BuildingBand {
        int building = 0;
        int firstStage = 0;
        int lastStage = 0;
        double y = 0;
    };
    struct StageBlock {
        double top = 0; // first chunk row
        double bottom = 0;
        int firstLane = 0;
    };
    // What one picture is drawn with: the screen's viewport or an export.
    struct Frame {
        QSize size;
        TimeScale scale;
        double scrollY = 0;
        bool exporting = false;
    };
    struct Metrics {
        int headerHeight = 0;
        int axisHeight = 0;
        int labelWidth = 0;
        int rowHeight = 0;
        int laneHeight = 0;
        int bandHeight = 0;
        int stageGap = 0;
    };

    void rebuild();
    void computeMetrics();
    void fitRowsToHeight();
    void setLayoutSwitch(bool& option, bool value);
    // Compute rows per stage: the chunks, or one when fitting merged them.
    int rowsPerStage() const;
    void paintSqueezedLabels(QPainter& p, double y0, int top, int bottom, int line) const;
    int laneOf(const TimelineOp& op) const;
    // The y in content coordinates under `pos` when it is over the time area
    // (not the axis, the labels or a sticky building band).
    std::optional<double> contentYAt(QPoint pos) const;
    int contentHeight() const;
    QRect timeAreaOf(QSize size) const;
    int rowsTop() const;
    int rowsBottom(QSize size) const;
    Frame screenFrame() const;
    void paintFrame(QPainter& p, const Frame& f) const;
    void paintLanes(QPainter& p, const Frame& f, const QRect& area) const;
    void paintLane(QPainter& p, const Frame& f, const Lane& lane, const QRect& area,
                   double top) const;
    void paintBubbles(QPainter& p, const Frame& f, const QRect& area) const;
    void paintLabels(QPainter& p, const Frame& f) const;
    void paintBand(QPainter& p, const Frame& f, std::size_t band, double y, bool sticky) const;
    std::optional<std::pair<std::size_t, double>> stickyBand(const Frame& f) const;
    void paintAxis(QPainter& p, const Frame& f) const;
    void paintHeader(QPainter& p, const Frame& f) const;
    void paintLegend(QPainter& p, const Frame& f) const;
    int legendHeightFor(int width) const;
    QString summaryText() const;
    QString buildingName(int building) const;
    int stageBuilding(int stage) const;
    void fitScale();
    void applyScale(const TimeScale& scale, bool byUser);
    void updateScrollBars();
    void updateZoomLimits();
    void zoomBy(double factor, std::optional<double> aroundX);
    double scrollY() const;

    std::shared_ptr<const Evaluation> evaluation_;
    QStringList buildingNames_;
    QString title_;
    QString message_;
    TimeScale scale_;
    bool fitted_ = true;
    double lastMakespan_ = 0;
    int minimumLabelWidth_ = 0;
    bool fitRows_ = false;
    bool mergedChunks_ = false; // fitting put a stage's chunks in one row
    bool legendShown_ = true;
    std::vector<Lane> lanes_;
    std::vector<int> computeLanes_; // lane index of each compute row
    std::vector<StageBlock> stages_;
    std::vector<BuildingBand> bands_;
    std::vector<std::vector<Bubble>> bubbles_; // per stage
    double contentHeight_ = 0;
    Metrics m_;
    bool hasWeightGrad_ = false;
    bool hasRecompute_ = false;
    bool hasDpSync_ = false;
    // Horizontal scroll bar: the pixel range it stands for and pixels per
    // unit (huge zooms exceed an int's range).
    double hBegin_s_ = 0;
    double hUnitPx_ = 1;
    bool dragging_ = false;
    QPoint dragStart_;
    double dragT0_ = 0;
    int dragScrollY_ = 0;
};

} // namespace sa::views
