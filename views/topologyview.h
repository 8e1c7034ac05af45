#pragma once
// The cluster as a picture: regions holding buildings, zones inside them,
// links between them drawn as a traffic heatmap, and the job's groups as
// chips the user drags from building to building. The view owns its scene
// and items; it reports gestures as signals and never edits the document.

#include "cost/evaluation.h"
#include "cost/placement.h"
#include "heatscale.h"
#include "model/cluster.h"
#include "placementedits.h"
#include "topologylayout.h"

#include <QGraphicsView>
#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

namespace sa {
class Topology;
}

namespace sa::views {

class BuildingItem;
class ChipItem;
class LinkItem;
class LinkLabelItem;
class UplinkItem;
class ZoneItem;
struct LinkHeat;

// The colour and width key of the heatmap, in real units. A click folds it
// to its title line and back (it starts folded where the full key would take
// more than a fifth of the pane).
class HeatLegend : public QWidget {
    Q_OBJECT
public:
    explicit HeatLegend(QWidget* parent = nullptr);
    void setScale(const HeatScale& scale, bool evaluated, const QString& note = {});
    QSize sizeHint() const override;
    QSize fullSize() const;
    bool isCollapsed() const { return collapsed_; }
    // By the user (a click) or by the view for a small pane.
    void setCollapsed(bool collapsed);
    bool userChose() const { return userChose_; }

Q_SIGNALS:
    void collapsedChanged(bool collapsed);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    HeatScale scale_;
    bool evaluated_ = false;
    bool collapsed_ = false;
    bool userChose_ = false;
    QString note_;
};

class TopologyView : public QGraphicsView {
    Q_OBJECT
public:
    explicit TopologyView(QWidget* parent = nullptr);
    ~TopologyView() override;

    // A new cluster: rebuilds the scene and fits it into the view.
    void setCluster(const Cluster& cluster);
    // The job's groups, from sa::chipsOf(); gpusUsed per building.
    void setChips(const std::vector<GroupChip>& chips, std::int64_t cellGpus,
                  const std::vector<std::int64_t>& gpusUsed);
    // Colours links and uplinks; nullptr shows the plain topology.
    void setEvaluation(std::shared_ptr<const Evaluation> evaluation, const QString& note = {});
    // Feedback on the current drag target: green when the drop is legal;
    // `displaced`, the chip a move into a full building would swap out
    // (applyDrop), is outlined as a swap target.
    void setDropHint(bool legal, const std::optional<GroupChip>& displaced = std::nullopt);
    // The chip the current drag target would displace, or -1.
    int displacedChip() const { return displaced_; }

    const Cluster& cluster() const { return cluster_; }
    const TopologyLayout& topologyLayout() const { return layout_; }
    const std::vector<GroupChip>& chips() const { return chips_; }
    std::shared_ptr<const Evaluation> evaluation() const { return evaluation_; }
    ChipItem* chipItem(int index) const;
    LinkItem* linkItem(int link) const;
    LinkLabelItem* linkLabel(int link) const {
        return link >= 0 && link < int(labels_.size()) ? labels_[std::size_t(link)] : nullptr;
    }
    UplinkItem* uplinkItem(int building) const;
    BuildingItem* buildingItem(int building) const;
    HeatLegend* legend() const { return legend_; }
    double zoomFactor() const;
    bool isDragging() const { return dragChip_ >= 0; }

    // A drag without a mouse: shows chip `chip` over `building` (or over
    // chip `swapWith` there) as a user's drag would (screenshots, tests).
    void previewChipDrag(int chip, int building, int swapWith = -1);
    void endChipPreview();
    // Escape during a drag (by mouse or previewed): the chip goes home,
    // nothing is dropped and chipDragCancelled() drops the preview.
    void cancelChipDrag();

    // Called by chip items.
    void beginChipDrag(int chip);
    void moveChipDrag(int chip, QPointF scenePos);
    // Released with Shift: a dialog asks how many of the chip's replicas
    // move, and only those are dropped.
    void finishChipDrag(int chip, QPointF scenePos, Qt::KeyboardModifiers modifiers = {});

public Q_SLOTS:
    void zoomIn();
    void zoomOut();
    void fitToView();

Q_SIGNALS:
    // What a dragged chip is over changed (building -1: nothing, or its own).
    void chipDragTargetChanged(const sa::views::ChipDrop& drop);
    // A chip was released over another building or another building's chip.
    void chipDropped(const sa::views::ChipDrop& drop);
    // A drag ended without a move (released on its own building or outside).
    void chipDragCancelled();
    // The first paint after setEvaluation(): the heatmap is on screen.
    void heatmapPainted();
    void zoomChanged(double factor);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void drawBackground(QPainter* painter, const QRectF& rect) override;

private:
    void rebuildChips();
    void applyTextScale();
    LayoutMetrics metricsForPane(const Cluster& cluster) const;
    std::optional<int> askReplicas(const GroupChip& chip, int building);
    void applyHeat();
    // Slides a link's label along its line where it would cover another's.
    void separateLinkLabels();
    void applyMemoryWarnings();
    void scaleBy(double factor);
    void placeLegend();
    // The pane's width / height, for the layout's arrangement.
    double paneAspect() const;
    // A new arrangement when the pane's shape calls for one (auto-fit only).
    void relayoutForPane();
    void setDragTarget(int building, int swapWith);
    int chipAt(QPointF scenePos) const;
    void resetDropStates();
    // The drag is over without a drop: no target, the chips as the model has them.
    void forgetChipDrag();
    QString linkToolTip(int link, const std::optional<LinkHeat>& heat) const;

    QGraphicsScene* scene_;
    HeatLegend* legend_;
    Cluster cluster_;
    std::unique_ptr<Topology> topology_;
    TopologyLayout layout_;
    std::vector<BuildingItem*> buildings_;
    std::vector<UplinkItem*> uplinks_;
    std::vector<std::vector<ZoneItem*>> zones_; // per building, per tile
    std::vector<LinkItem*> links_;              // per cluster link (nullptr if not drawn)
    std::vector<LinkLabelItem*> labels_;
    std::vector<ChipItem*> chipItems_;
    std::vector<QGraphicsItem*> overflowItems_;
    std::vector<GroupChip> chips_;
    std::int64_t cellGpus_ = 0;
    std::vector<std::int64_t> gpusUsed_;
    std::optional<std::vector<GroupChip>> pendingChips_;
    std::shared_ptr<const Evaluation> evaluation_;
    QString evaluationNote_;
    bool heatPending_ = false;
    bool autoFit_ = true;
    int dragChip_ = -1;
    int dragTarget_ = -1;
    int dragSwap_ = -1;
    int displaced_ = -1;
    double chipScale_ = 1; // the scale the chips were laid out for
    bool previewing_ = false;
    bool legendBeside_ = false;
    bool relayingOut_ = false;
};

} // namespace sa::views
