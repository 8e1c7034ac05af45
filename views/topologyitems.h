#pragma once
// Scene items of the topology view. They paint what the view tells them and
// report gestures back to it; they never touch the document.

#include "cost/evaluation.h"
#include "cost/placement.h"
#include "topologylayout.h"

#include <QGraphicsItem>
#include <QGraphicsPathItem>

#include <functional>
#include <optional>

namespace sa::views {

class TopologyView;

// No topology text is drawn smaller on screen than 9 pt (12 px at 96 dpi).
// Items draw a text of nominal size `px` (scene pixels) at readablePx(px,
// scale), where `scale` is the view's scene-to-screen scale; what no longer
// fits its box at that size is shortened or left to the tooltip (level of
// detail), and comes back when zoomed in.
inline constexpr double kMinScreenTextPx = 12;
double readablePx(double px, double scale);
// The chips' and chip headers' nominal text size.
inline constexpr double kChipFontPx = 11.5;

// Traffic of one link or uplink as the items show it (aggregated when a
// tile stands for several zones).
struct LinkHeat {
    double bytes_per_step = 0;
    double busy_s = 0;
    double utilization = 0;
    double peak_utilization = 0;
    std::vector<Dim> dims;
    double background_gbps = 0; // others' traffic on the link (LinkUsage::background_gbps)
    double capacity_gbps = 0;
    bool operator==(const LinkHeat&) const = default;
};

class RegionItem : public QGraphicsItem {
public:
    explicit RegionItem(const TopologyLayout::Region& region);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    TopologyLayout::Region region_;
};

// The building spine's uplink to the aggregation layer.
class UplinkItem : public QGraphicsItem {
public:
    UplinkItem(QRectF rect, double capacityGbps, QGraphicsItem* parent);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void setHeat(std::optional<LinkHeat> heat, double width, const QString& toolTip);

private:
    QRectF rect_;
    double capacityGbps_;
    std::optional<LinkHeat> heat_;
    double width_ = 0;
};

// A zone tile with the strip of its uplink to the building spine.
class ZoneItem : public QGraphicsItem {
public:
    ZoneItem(const TopologyLayout::Zone& zone, QLineF connector, std::int64_t gpus,
             QGraphicsItem* parent);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void setHeat(std::optional<LinkHeat> heat, double width, const QString& toolTip);

private:
    TopologyLayout::Zone zone_;
    QLineF connector_;
    std::int64_t gpus_;
    std::optional<LinkHeat> heat_;
    double width_ = 0;
};

class BuildingItem : public QGraphicsItem {
public:
    enum class DropState { None, Source, Legal, Illegal };
    BuildingItem(const TopologyLayout::Building& geometry, const Building& building,
                 const GpuModel* gpu);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void setDropState(DropState state);
    DropState dropState() const { return dropState_; }
    int index() const { return geometry_.index; }
    void setUsedGpus(std::int64_t used);
    // The header's GPU count: "used / total GPUs" where the plan leaves
    // some idle, shortened to what `fits` accepts ("used / total", then
    // "used used"), never to a bare number that would read as the
    // building's size.
    static QString countLabel(std::int64_t gpus, std::int64_t used,
                              const std::function<bool(const QString&)>& fits);

private:
    TopologyLayout::Building geometry_;
    QString name_;
    QString gpuLine_;
    std::int64_t gpus_;
    std::int64_t used_ = -1;
    DropState dropState_ = DropState::None;
};

class LinkItem : public QGraphicsPathItem {
public:
    LinkItem(const TopologyLayout::LinkPath& path, const Link& link);
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void setHeat(std::optional<LinkHeat> heat, double width, const QString& toolTip);
    const TopologyLayout::LinkPath& geometry() const { return path_; }
    // The share of the line others' traffic takes (background_gbps /
    // bandwidth_gbps): drawn grey over that part of the line's length.
    double backgroundShare() const { return backgroundShare_; }

private:
    TopologyLayout::LinkPath path_;
    double backgroundShare_ = 0;
};

// The label at the middle of a link: capacity and latency, then traffic
// (bytes per step and peak utilisation), then how long it is busy in a step
// and which parallel dimensions cross it.
class LinkLabelItem : public QGraphicsItem {
public:
    // Beside the line at `anchor`, pushed along the unit vector `side` (away
    // from the line) so that the line's width and colour stay visible.
    LinkLabelItem(QPointF anchor, QPointF side, const Link& link);
    QRectF labelRect() const { return rect_; }
    QPointF anchor() const { return anchor_; }
    // Moves the label to another point of its line (TopologyView slides it
    // clear of another link's label).
    void setAnchor(QPointF anchor, QPointF side);
    // Capacity and latency alone (the traffic stays in the tooltip and the
    // Links tab): where the full label finds no clear spot.
    void setCompact(bool compact);
    bool isCompact() const { return compact_; }
    // The text as laid out, a line each.
    QStringList lines() const;
    // The view's scale: the box grows so that its text stays readable.
    void setTextScale(double scale);
    // Room beside the line (between two buildings side by side): a wider
    // box puts each part of its text on a line of its own.
    void setMaxWidth(double width);
    // Room between the line and the top of the buildings' content (titles
    // excluded): a box taller than that drops its busy-time line.
    void setMaxHeight(double height);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void setHeat(std::optional<LinkHeat> heat, const QString& technology, const QString& toolTip);

private:
    void relayout();
    QPointF anchor_;
    QPointF side_;
    QString line1_;
    QString line2_;
    QString line3_; // busy time and the dimensions crossing
    QColor accent_;
    QRectF rect_;
    double scale_ = 1;
    double maxWidth_ = 1e9;
    double maxHeight_ = 1e9;
    bool compact_ = false;
    struct Row {
        QString text;
        bool bold = false;
        double height = 0;
    };
    std::vector<Row> rows_;
};

// A run of grid cells (pipeline stages x DP replicas) held by one building.
class ChipItem : public QGraphicsItem {
public:
    // `label` is the short text shown in place ("S3" under a replica
    // header); while dragged the chip shows its full name ("S3 · R0–255").
    // `fontPx`: the label's size in scene pixels (readablePx of kChipFontPx).
    ChipItem(TopologyView* view, int index, const GroupChip& chip, const QString& label,
             QColor color, QPointF pos, double height, std::int64_t cellGpus,
             double fontPx = kChipFontPx);
    // A summary chip for the chips that did not fit ("+3 more"): not draggable.
    ChipItem(int hidden, QPointF pos, double height, const QString& toolTip,
             double fontPx = kChipFontPx);

    static double widthFor(const QString& label, double fontPx = kChipFontPx);
    double fontPx() const { return fontPx_; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    int index() const { return index_; }
    const GroupChip& chip() const { return chip_; }
    const QString& label() const { return label_; }
    // The same chip after the chips were rebuilt: a new index and place.
    void reuse(int index, QPointF home);
    QPointF homePos() const { return home_; }
    void setMemoryWarning(bool warn, const QString& detail);
    // Outlined while a dragged chip hovers over it (a swap).
    void setSwapTarget(bool on);
    bool isSwapTarget() const { return swapTarget_; }
    bool isDragging() const { return dragging_; }
    // Moves the chip as a drag would, without a mouse (screenshots, tests).
    void showDraggedTo(QPointF scenePos);
    void returnHome();

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseMoveEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;

private:
    void updateToolTip();
    void setDragging(bool dragging);

    TopologyView* view_ = nullptr;
    int index_ = -1;
    GroupChip chip_;
    QColor color_;
    QString label_;
    QString fullLabel_;
    QPointF home_;
    QSizeF size_;
    QSizeF fullSize_;
    std::int64_t cellGpus_ = 0;
    bool warn_ = false;
    QString warnDetail_;
    bool dragging_ = false;
    bool swapTarget_ = false;
    QPointF grabOffset_;
    QString baseToolTip_;
    double fontPx_ = kChipFontPx;
};

// The replica range heading a row of stage chips ("R0–255").
class ChipGroupLabel : public QGraphicsItem {
public:
    ChipGroupLabel(const QString& text, QPointF pos, double height, double fontPx = 11);
    static double widthFor(const QString& text, double fontPx = 11);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    QString text_;
    double fontPx_;
    QSizeF size_;
};

} // namespace sa::views
