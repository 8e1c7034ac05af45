#include "topologyview.h"

#include "topology/topology.h"
#include "topologyitems.h"
#include "units.h"

#include <QInputDialog>
#include <QKeyEvent>
#include <QLinearGradient>
#include <QMetaObject>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace sa::views {

namespace {

// Beside the line at `anchor`: a curve's label outside its bend, a straight
// line's above it (or, vertical, to its right). A unit vector.
QPointF labelSide(const TopologyLayout::LinkPath& path, QPointF anchor) {
    const QPointF chord = path.to - path.from;
    QPointF side(chord.y(), -chord.x());
    if (path.curved) {
        side = anchor - (path.from + path.to) / 2;
    } else if (side.y() > 0 || (std::fabs(side.y()) < 1e-9 && side.x() < 0)) {
        side = -side;
    }
    const double norm = std::hypot(side.x(), side.y());
    return norm > 0 ? side / norm : QPointF(0, -1);
}

} // namespace

namespace {

constexpr double kMinZoom = 0.05;
constexpr double kMaxZoom = 6.0;
constexpr double kMaxFitZoom = 1.25;

const QColor kChipPalette[] = {
    QColor(0xa5, 0xd8, 0xff), QColor(0xb2, 0xf2, 0xbb), QColor(0xff, 0xd8, 0xa8),
    QColor(0xd0, 0xbf, 0xff), QColor(0xfc, 0xc2, 0xd7), QColor(0x99, 0xe9, 0xf2),
    QColor(0xff, 0xec, 0x99), QColor(0xc0, 0xeb, 0x75), QColor(0xee, 0xbe, 0xfa),
    QColor(0xff, 0xc9, 0xc9),
};

QString dimsText(const std::vector<Dim>& dims) {
    QStringList names;
    for (Dim d : dims)
        names << QString::fromLatin1(toString(d)).toUpper();
    return names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", "));
}

void addHeat(LinkHeat& into, const LinkUsage& u) {
    into.bytes_per_step += u.bytes_per_step;
    into.busy_s = std::max(into.busy_s, u.busy_s);
    into.utilization = std::max(into.utilization, u.utilization);
    // Zones summed into one tile: the busiest decides the colour.
    into.peak_utilization = std::max(into.peak_utilization, u.peak_utilization);
    into.background_gbps = std::max(into.background_gbps, u.background_gbps);
    into.capacity_gbps = std::max(into.capacity_gbps, u.capacity_gbps);
    for (Dim d : u.dims)
        if (std::find(into.dims.begin(), into.dims.end(), d) == into.dims.end())
            into.dims.push_back(d);
    std::sort(into.dims.begin(), into.dims.end());
}

// "job X Gbit/s + background Y Gbit/s of Z": the job's mean rate over the
// step next to the others' traffic (LinkUsage::background_gbps).
QString sharedRow(const LinkHeat& h, double stepTime) {
    if (h.background_gbps <= 0)
        return {};
    const double job = stepTime > 0 ? h.bytes_per_step * 8 / stepTime / 1e9 : 0.0;
    return QStringLiteral("<tr><td>shared</td><td>job %1 + background %2 of %3</td></tr>")
        .arg(formatBandwidthGbps(job), formatBandwidthGbps(h.background_gbps),
             formatBandwidthGbps(h.capacity_gbps));
}

QString trafficRows(const LinkHeat& h, double stepTime) {
    if (h.bytes_per_step <= 0)
        return QStringLiteral("<tr><td>traffic</td><td>none in this plan</td></tr>") +
               sharedRow(h, stepTime);
    return sharedRow(h, stepTime) +
           QStringLiteral("<tr><td>traffic</td><td><b>%1 per step</b></td></tr>"
                          "<tr><td>busy</td><td>%2 of a %3 step</td></tr>"
                          "<tr><td>utilisation</td><td><b>%5</b> while busy, %4 over the "
                          "step</td></tr>"
                          "<tr><td>used by</td><td>%6</td></tr>")
               .arg(formatBytes(h.bytes_per_step), formatSeconds(h.busy_s), formatSeconds(stepTime),
                    formatPercent(h.utilization), formatPercent(h.peak_utilization),
                    dimsText(h.dims));
}

QString table(const QString& title, const QString& rows) {
    return QStringLiteral("<b>%1</b><table cellspacing=\"0\" cellpadding=\"1\">%2</table>")
        .arg(title, rows);
}

} // namespace

// ---------------------------------------------------------------- legend

HeatLegend::HeatLegend(QWidget* parent)
    : QWidget(parent) {
    setCursor(Qt::PointingHandCursor);
    setToolTip(QStringLiteral("Click to fold or unfold the key"));
}

void HeatLegend::setCollapsed(bool collapsed) {
    if (collapsed == collapsed_)
        return;
    collapsed_ = collapsed;
    resize(sizeHint());
    update();
    Q_EMIT collapsedChanged(collapsed_);
}

void HeatLegend::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(event);
    userChose_ = true;
    setCollapsed(!collapsed_);
    event->accept();
}

void HeatLegend::setScale(const HeatScale& scale, bool evaluated, const QString& note) {
    scale_ = scale;
    evaluated_ = evaluated;
    note_ = note;
    resize(sizeHint());
    update();
}

QSize HeatLegend::fullSize() const {
    // Always the size of the full legend, so the view's fit does not move
    // when the first evaluation arrives.
    const QFontMetrics fm(font());
    return QSize(300, 6 * fm.height() + 56);
}

QSize HeatLegend::sizeHint() const {
    if (!collapsed_)
        return fullSize();
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(bold);
    return QSize(fm.horizontalAdvance(QStringLiteral("Link traffic per training step ▸")) + 24,
                 fm.height() + 16);
}

void HeatLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF frame = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
    p.setPen(QPen(QColor(0xc5, 0xcf, 0xdb), 1));
    p.setBrush(QColor(255, 255, 255, 238));
    p.drawRoundedRect(frame, 8, 8);
    const QFontMetrics fm(font());
    const int line = fm.height();
    const int x = 12;
    int y = 8;
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(QColor(0x1f, 0x29, 0x33));
    p.drawText(QRect(x, y, width() - 2 * x, line), Qt::AlignLeft | Qt::AlignVCenter,
               collapsed_ ? QStringLiteral("Link traffic per training step ▸")
                          : QStringLiteral("Link traffic per training step ▾"));
    if (collapsed_)
        return;
    y += line + 4;
    p.setFont(font());
    p.setPen(QColor(0x5c, 0x6b, 0x7a));
    if (!evaluated_) {
        p.drawText(QRect(x, y, width() - 2 * x, line), Qt::AlignLeft | Qt::AlignVCenter,
                   note_.isEmpty() ? QStringLiteral("waiting for the evaluation…") : note_);
        return;
    }
    // Colour: utilisation.
    const int barW = width() - 2 * x;
    QLinearGradient g(x, 0, x + barW, 0);
    for (int i = 0; i <= 10; ++i)
        g.setColorAt(i / 10.0, HeatScale::colorFor(i / 10.0));
    p.setPen(Qt::NoPen);
    p.setBrush(g);
    p.drawRoundedRect(QRectF(x, y, barW, 12), 3, 3);
    y += 14;
    p.setPen(QColor(0x5c, 0x6b, 0x7a));
    p.drawText(QRect(x, y, barW, line), Qt::AlignLeft, QStringLiteral("0 %"));
    p.drawText(QRect(x, y, barW, line), Qt::AlignHCenter,
               QStringLiteral("colour: utilisation while busy"));
    p.drawText(QRect(x, y, barW, line), Qt::AlignRight, QStringLiteral("100 %"));
    y += line + 8;
    // Width: bytes per step, three samples down from the busiest link.
    const double maxBytes = scale_.maxBytes();
    const double samples[] = {maxBytes, maxBytes / 10, maxBytes / 100};
    for (double bytes : samples) {
        const double w = scale_.widthFor(bytes);
        p.setPen(QPen(QColor(0x4a, 0x55, 0x68), w, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(x + 8, y + line / 2.0), QPointF(x + 70, y + line / 2.0));
        p.setPen(QColor(0x1f, 0x29, 0x33));
        p.drawText(QRect(x + 86, y, barW - 86, line), Qt::AlignLeft | Qt::AlignVCenter,
                   maxBytes > 0 ? QStringLiteral("%1 per step").arg(formatBytes(bytes))
                                : QStringLiteral("no traffic"));
        y += line + 2;
    }
    p.setPen(QPen(HeatScale::idleColor(), HeatScale::kMinWidth + 1, Qt::DashLine));
    p.drawLine(QPointF(x + 8, y + line / 2.0), QPointF(x + 70, y + line / 2.0));
    p.setPen(QColor(0x5c, 0x6b, 0x7a));
    p.drawText(QRect(x + 86, y, barW - 86, line), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("idle"));
}

// ---------------------------------------------------------------- view

TopologyView::TopologyView(QWidget* parent)
    : QGraphicsView(parent)
    , scene_(new QGraphicsScene(this))
    , legend_(new HeatLegend(this)) {
    // A few hundred items, many added and removed on every drop: a linear
    // scan beats keeping a BSP tree up to date.
    scene_->setItemIndexMethod(QGraphicsScene::NoIndex);
    setScene(scene_);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setFocusPolicy(Qt::StrongFocus);
    setFrameShape(QFrame::NoFrame);
    // Panning is by dragging the background; scroll bars would only
    // clutter a canvas that has room around it on every side.
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Items cache nothing: the heatmap changes on every drag and the text
    // must stay sharp at any zoom.
    setCacheMode(QGraphicsView::CacheNone);
    legend_->setScale(HeatScale(), false, QStringLiteral("no scenario"));
    legend_->raise();
    connect(legend_, &HeatLegend::collapsedChanged, this, [this] {
        if (autoFit_)
            fitToView();
        placeLegend();
    });
}

double TopologyView::paneAspect() const {
    const QSize vp = viewport()->size();
    if (vp.width() < 50 || vp.height() < 50)
        return 1.6;
    return std::clamp(double(vp.width()) / vp.height(), 0.3, 6.0);
}

// Level of detail: where the full layout would be shrunk so far that its
// text is enlarged for readability (readablePx), the zones collapse into one
// row of three tiles (the last summarising the rest) and the chips get
// their rows.
LayoutMetrics TopologyView::metricsForPane(const Cluster& cluster) const {
    LayoutMetrics m;
    const QSize vp = viewport()->size();
    if (vp.width() < 50 || vp.height() < 50 || cluster.buildings.empty())
        return m;
    const QRectF b = TopologyLayout::compute(cluster, m, paneAspect()).bounds();
    if (b.isEmpty())
        return m;
    const double fit = std::min(vp.width() / b.width(), vp.height() / b.height());
    if (readablePx(kChipFontPx, fit) <= kChipFontPx * 1.25)
        return m;
    m.maxZoneRows = 1;
    m.maxZoneColumns = 3; // tiles wide enough for "3,072" at the enlarged size
    m.chipRows = 6;
    return m;
}

void TopologyView::relayoutForPane() {
    if (relayingOut_ || !autoFit_ || dragChip_ >= 0 || previewing_ || cluster_.buildings.empty())
        return;
    const TopologyLayout next =
        TopologyLayout::compute(cluster_, metricsForPane(cluster_), paneAspect());
    if (next.bounds().size() == layout_.bounds().size())
        return;
    // The same cluster, chips and heat in the arrangement for this pane.
    relayingOut_ = true;
    const std::vector<GroupChip> chips = chips_;
    const std::int64_t cellGpus = cellGpus_;
    const std::vector<std::int64_t> used = gpusUsed_;
    const std::shared_ptr<const Evaluation> evaluation = evaluation_;
    const QString note = evaluationNote_;
    const Cluster cluster = cluster_;
    setCluster(cluster);
    cellGpus_ = -1; // rebuild the chip items
    setChips(chips, cellGpus, used);
    if (evaluation)
        setEvaluation(evaluation, note);
    relayingOut_ = false;
}

TopologyView::~TopologyView() = default;

void TopologyView::drawBackground(QPainter* painter, const QRectF& rect) {
    painter->fillRect(rect, QColor(0xf8, 0xfa, 0xfc));
}

void TopologyView::setCluster(const Cluster& cluster) {
    dragChip_ = -1;
    dragTarget_ = -1;
    previewing_ = false;
    pendingChips_.reset();
    scene_->clear();
    buildings_.clear();
    uplinks_.clear();
    zones_.clear();
    links_.clear();
    labels_.clear();
    chipItems_.clear();
    overflowItems_.clear();
    chips_.clear();
    evaluation_.reset();

    cluster_ = cluster;
    topology_ = cluster.buildings.empty() ? nullptr : std::make_unique<Topology>(cluster);
    layout_ = TopologyLayout::compute(cluster, metricsForPane(cluster), paneAspect());

    for (const auto& region : layout_.regions())
        scene_->addItem(new RegionItem(region));
    for (const auto& geo : layout_.buildings()) {
        const Building& b = cluster.buildings[std::size_t(geo.index)];
        auto* item = new BuildingItem(geo, b, cluster.gpuOf(b));
        scene_->addItem(item);
        buildings_.push_back(item);
        double spine = 0;
        if (topology_) {
            const int edge = topology_->buildingUplink(geo.index);
            if (edge >= 0 && edge < int(topology_->edges().size()))
                spine = topology_->edges()[std::size_t(edge)].bandwidth_gbps;
        }
        uplinks_.push_back(new UplinkItem(geo.uplinkBar, spine, item));
        std::vector<ZoneItem*> tiles;
        const std::int64_t zoneGpus = b.zone_gpus > 0 ? b.zone_gpus : b.gpus;
        for (std::size_t t = 0; t < geo.zones.size(); ++t) {
            const auto& z = geo.zones[t];
            // GPUs in the zones this tile stands for (the last zone may be short).
            std::int64_t gpus = 0;
            for (int k = z.firstZone; k <= z.lastZone; ++k)
                gpus += std::min(zoneGpus, b.gpus - std::int64_t(k) * zoneGpus);
            const bool firstRow = z.rect.top() <= geo.zones.front().rect.top() + 1;
            const QLineF connector =
                firstRow ? layout_.zoneConnector(geo.index, z.firstZone) : QLineF();
            tiles.push_back(new ZoneItem(z, connector, gpus, item));
        }
        zones_.push_back(tiles);
    }
    links_.assign(cluster.links.size(), nullptr);
    labels_.assign(cluster.links.size(), nullptr);
    for (const auto& path : layout_.links()) {
        const Link& link = cluster.links[std::size_t(path.link)];
        auto* item = new LinkItem(path, link);
        scene_->addItem(item);
        links_[std::size_t(path.link)] = item;
        const QPointF side = labelSide(path, path.labelAnchor);
        auto* label = new LinkLabelItem(path.labelAnchor, side, link);
        // Above or below a mostly level line between two buildings: no
        // wider than the gap between them.
        if (!path.curved && std::fabs(side.y()) > std::fabs(side.x())) {
            label->setMaxWidth(std::fabs(path.to.x() - path.from.x()) - 8);
            // Up to below the two buildings' title rows.
            const double top = std::max(layout_.buildings()[std::size_t(path.a)].header.bottom(),
                                        layout_.buildings()[std::size_t(path.b)].header.bottom());
            label->setMaxHeight(path.labelAnchor.y() - top - HeatScale::kMaxWidth / 2 - 4);
        }
        scene_->addItem(label);
        label->setTextScale(zoomFactor());
        labels_[std::size_t(path.link)] = label;
    }
    // Room around the layout to pan and to centre it beside the legend.
    const double margin = std::max(layout_.bounds().width(), layout_.bounds().height());
    scene_->setSceneRect(layout_.bounds().adjusted(-margin, -margin, margin, margin));
    applyHeat();
    autoFit_ = true;
    fitToView();
}

void TopologyView::setChips(const std::vector<GroupChip>& chips, std::int64_t cellGpus,
                            const std::vector<std::int64_t>& gpusUsed) {
    const bool sameCells = cellGpus == cellGpus_;
    cellGpus_ = cellGpus;
    gpusUsed_ = gpusUsed;
    for (std::size_t i = 0; i < buildings_.size(); ++i)
        buildings_[i]->setUsedGpus(i < gpusUsed.size() ? gpusUsed[i] : -1);
    if (dragChip_ >= 0) {
        // Never delete the item under the mouse: apply after the drop.
        pendingChips_ = chips;
        return;
    }
    if (sameCells && chips == chips_ && chipItems_.size() == chips.size())
        return;
    chips_ = chips;
    rebuildChips();
}

void TopologyView::rebuildChips() {
    // Chips that survive a drop keep their item and only move: a drop
    // changes a few chips, and new items cost a layout and a first paint.
    std::map<std::tuple<int, int, int, int, int, std::int64_t>, ChipItem*> reusable;
    for (auto* item : chipItems_)
        if (item) {
            const GroupChip& c = item->chip();
            reusable.emplace(std::make_tuple(c.stage_first, c.stage_last, c.replica_first,
                                             c.replica_last, c.building, c.gpus),
                             item);
        }
    for (auto* item : overflowItems_)
        delete item;
    chipItems_.assign(chips_.size(), nullptr);
    overflowItems_.clear();

    const auto& metrics = layout_.metrics();
    // Readable at the view's scale: larger text makes wider, taller chips,
    // fewer to a row and fewer rows (the rest go into "+N more").
    chipScale_ = zoomFactor();
    const double chipPx = readablePx(kChipFontPx, chipScale_);
    const double headerPx = readablePx(11, chipScale_);
    const double h = std::max(metrics.chipRowHeight - 5, std::ceil(chipPx * 1.2) + 1);
    const double rowStep = std::max(metrics.chipRowHeight, h + 5);
    const double overflowW = ChipItem::widthFor(QStringLiteral("+999 more"), chipPx);
    for (const auto& geo : layout_.buildings()) {
        std::vector<int> mine;
        for (std::size_t i = 0; i < chips_.size(); ++i)
            if (chips_[std::size_t(i)].building == geo.index)
                mine.push_back(int(i));
        // Grouped by replica range: a grey "R0–255" heads a row of compact
        // stage chips ("S0", "S1", ...).
        // Groups in pipeline order: by the first stage they hold.
        std::map<std::pair<int, int>, int> groupStage;
        for (int i : mine) {
            const auto& c = chips_[std::size_t(i)];
            auto [it, fresh] =
                groupStage.try_emplace({c.replica_first, c.replica_last}, c.stage_first);
            if (!fresh)
                it->second = std::min(it->second, c.stage_first);
        }
        std::sort(mine.begin(), mine.end(), [&](int a, int b) {
            const auto& x = chips_[std::size_t(a)];
            const auto& y = chips_[std::size_t(b)];
            const int gx = groupStage[{x.replica_first, x.replica_last}];
            const int gy = groupStage[{y.replica_first, y.replica_last}];
            return std::tie(gx, x.replica_first, x.replica_last, x.stage_first) <
                   std::tie(gy, y.replica_first, y.replica_last, y.stage_first);
        });
        struct Slot {
            int chip = -1; // -1: a group header
            QString label;
            double width = 0;
            int row = 0;
            double x = 0;
        };
        std::vector<Slot> slots;
        for (std::size_t k = 0; k < mine.size(); ++k) {
            const GroupChip& c = chips_[std::size_t(mine[k])];
            const bool newGroup =
                k == 0 || chips_[std::size_t(mine[k - 1])].replica_first != c.replica_first ||
                chips_[std::size_t(mine[k - 1])].replica_last != c.replica_last;
            if (newGroup) {
                // The replica range and its GPUs per stage: every chip of the
                // group holds that many GPUs per stage it covers.
                const int stages = c.stage_last - c.stage_first + 1;
                // Enlarged for the scale, the replica range alone (the
                // chips' tooltips give the GPUs).
                const QString text =
                    headerPx > 11
                        ? QStringLiteral("R%1").arg(formatRange(c.replica_first, c.replica_last))
                        : QStringLiteral("R%1 · %2 GPUs/stage")
                              .arg(formatRange(c.replica_first, c.replica_last),
                                   formatCount(c.gpus / std::max(1, stages)));
                slots.push_back({-1, text, ChipGroupLabel::widthFor(text, headerPx)});
            }
            const QString label =
                QStringLiteral("S%1").arg(formatRange(c.stage_first, c.stage_last));
            slots.push_back({mine[k], label, ChipItem::widthFor(label, chipPx)});
        }
        const QRectF area = geo.chipArea;
        const int rows = std::max(1, int(std::floor((area.height() - h) / rowStep + 1e-9)) + 1);
        double x = area.left();
        int row = 0;
        for (std::size_t k = 0; k < slots.size(); ++k) {
            Slot& slot = slots[k];
            double need = slot.width;
            // A header never ends a row: it stays with its first chip.
            if (slot.chip < 0 && k + 1 < slots.size())
                need += 4 + slots[k + 1].width;
            if (slot.chip < 0 && x > area.left())
                x += 10;
            if (x > area.left() && x + need > area.right()) {
                ++row;
                x = area.left();
            }
            slot.row = row;
            slot.x = x;
            x += slot.width + (slot.chip < 0 ? 4 : 5);
        }
        // What does not fit is summarised in a last "+N more" chip.
        std::size_t cut = slots.size();
        for (std::size_t k = 0; k < slots.size(); ++k)
            if (slots[k].row >= rows) {
                cut = k;
                break;
            }
        if (cut < slots.size()) {
            while (cut > 0 &&
                   (slots[cut - 1].chip < 0 ||
                    slots[cut - 1].x + slots[cut - 1].width + 5 + overflowW > area.right() ||
                    slots[cut - 1].row >= rows))
                --cut;
        }
        for (std::size_t k = 0; k < cut; ++k) {
            const Slot& slot = slots[k];
            const QPointF pos(slot.x, area.top() + slot.row * rowStep);
            if (slot.chip < 0) {
                auto* label = new ChipGroupLabel(slot.label, pos, h, headerPx);
                scene_->addItem(label);
                overflowItems_.push_back(label);
                continue;
            }
            const GroupChip& chip = chips_[std::size_t(slot.chip)];
            const auto key = std::make_tuple(chip.stage_first, chip.stage_last, chip.replica_first,
                                             chip.replica_last, chip.building, chip.gpus);
            if (auto it = reusable.find(key); it != reusable.end() &&
                                              it->second->label() == slot.label &&
                                              it->second->fontPx() == chipPx) {
                it->second->reuse(slot.chip, pos);
                chipItems_[std::size_t(slot.chip)] = it->second;
                reusable.erase(it);
                continue;
            }
            // One colour per first stage, so the parts of a stage split over
            // buildings read as one.
            const QColor color =
                kChipPalette[std::size_t(chip.stage_first) % std::size(kChipPalette)];
            auto* item =
                new ChipItem(this, slot.chip, chip, slot.label, color, pos, h, cellGpus_, chipPx);
            scene_->addItem(item);
            chipItems_[std::size_t(slot.chip)] = item;
        }
        if (cut < slots.size()) {
            QStringList hidden;
            int count = 0;
            for (std::size_t k = cut; k < slots.size(); ++k)
                if (slots[k].chip >= 0) {
                    hidden << chipLabel(chips_[std::size_t(slots[k].chip)]);
                    ++count;
                }
            const QPointF pos = cut > 0 ? QPointF(slots[cut - 1].x + slots[cut - 1].width + 5,
                                                  area.top() + slots[cut - 1].row * rowStep)
                                        : area.topLeft();
            auto* summary = new ChipItem(count, pos, h,
                                         QStringLiteral("Not shown (zoom in, or switch off View ▸ "
                                                        "Chips per Pipeline Stage for fewer "
                                                        "chips):<br>") +
                                             hidden.join(QStringLiteral("<br>")),
                                         chipPx);
            scene_->addItem(summary);
            overflowItems_.push_back(summary);
        }
    }
    for (auto& [key, item] : reusable)
        delete item;
    applyMemoryWarnings();
}

void TopologyView::setEvaluation(std::shared_ptr<const Evaluation> evaluation,
                                 const QString& note) {
    evaluation_ = std::move(evaluation);
    evaluationNote_ = note;
    applyHeat();
    applyMemoryWarnings();
    heatPending_ = true;
    viewport()->update();
}

// Each label sits at its line's middle unless another link's label is there
// already (a link crossing the gap another's label fills): then it slides
// along its own line to the nearest point where it covers the least of the
// labels placed before it and of the buildings.
void TopologyView::separateLinkLabels() {
    std::vector<QRectF> placed;
    const auto covered = [&](const QRectF& r, bool withBuildings) {
        double area = 0;
        for (const QRectF& p : placed) {
            const QRectF i = r & p;
            area += i.width() * i.height();
        }
        if (withBuildings)
            for (const auto& b : layout_.buildings()) {
                const QRectF i = r & b.rect;
                area += i.width() * i.height();
            }
        return area;
    };
    for (const auto& path : layout_.links()) {
        LinkLabelItem* label = labels_[std::size_t(path.link)];
        if (!label)
            continue;
        const auto moveTo = [&](double t) {
            const QPointF a = path.pointAt(t);
            label->setAnchor(a, labelSide(path, a));
        };
        const auto slide = [&] {
            moveTo(0.5);
            if (covered(label->labelRect(), false) > 0) {
                double best = 0.5, least = covered(label->labelRect(), true);
                for (double t : {0.4, 0.6, 0.3, 0.7, 0.22, 0.78}) {
                    moveTo(t);
                    const double c = covered(label->labelRect(), true);
                    if (c < least - 1e-6) {
                        least = c;
                        best = t;
                    }
                }
                moveTo(best);
            }
            return covered(label->labelRect(), false) == 0;
        };
        // Nowhere clear (a small pane, zoomed far out): capacity and latency
        // alone.
        label->setCompact(false);
        if (!slide()) {
            label->setCompact(true);
            slide();
        }
        placed.push_back(label->labelRect());
    }
}

void TopologyView::applyHeat() {
    const std::size_t nb = buildings_.size();
    std::vector<std::optional<LinkHeat>> linkHeat(links_.size());
    std::vector<std::optional<LinkHeat>> uplinkHeat(nb);
    std::vector<std::vector<std::optional<LinkHeat>>> zoneHeat(nb);
    for (std::size_t b = 0; b < nb; ++b)
        zoneHeat[b].resize(zones_[b].size());
    std::vector<const LinkUsage*> usageOfLink(links_.size(), nullptr);
    std::vector<const LinkUsage*> usageOfUplink(nb, nullptr);
    double maxBytes = 0;
    double step = 0;

    if (evaluation_) {
        step = evaluation_->step_time_s;
        // Evaluated: everything without an entry is idle, not unknown.
        for (auto& h : linkHeat)
            h = LinkHeat{};
        for (auto& h : uplinkHeat)
            h = LinkHeat{};
        for (auto& v : zoneHeat)
            for (auto& h : v)
                h = LinkHeat{};
        for (const LinkUsage& u : evaluation_->links) {
            maxBytes = std::max(maxBytes, u.bytes_per_step);
            // Resolve the usage to a drawn thing through the topology's edge.
            int link = -1;
            int building = -1;
            int zone = -1;
            EdgeKind kind = u.tier == LinkTier::InterBuilding    ? EdgeKind::InterBuilding
                            : u.tier == LinkTier::BuildingUplink ? EdgeKind::BuildingUplink
                                                                 : EdgeKind::ZoneUplink;
            if (topology_ && u.edge >= 0 && u.edge < int(topology_->edges().size())) {
                const TopoEdge& e = topology_->edges()[std::size_t(u.edge)];
                kind = e.kind;
                link = e.link;
                building = e.building;
                zone = e.zone;
            } else if (kind == EdgeKind::InterBuilding) {
                for (std::size_t l = 0; l < cluster_.links.size(); ++l)
                    if (cluster_.links[l].name == u.name)
                        link = int(l);
            }
            switch (kind) {
            case EdgeKind::InterBuilding:
                if (link >= 0 && std::size_t(link) < linkHeat.size()) {
                    addHeat(*linkHeat[std::size_t(link)], u);
                    usageOfLink[std::size_t(link)] = &u;
                }
                break;
            case EdgeKind::BuildingUplink:
                if (building >= 0 && std::size_t(building) < nb) {
                    addHeat(*uplinkHeat[std::size_t(building)], u);
                    usageOfUplink[std::size_t(building)] = &u;
                }
                break;
            case EdgeKind::ZoneUplink:
                if (building >= 0 && std::size_t(building) < nb) {
                    const auto& tiles = layout_.buildings()[std::size_t(building)].zones;
                    for (std::size_t t = 0; t < tiles.size(); ++t)
                        if (zone >= tiles[t].firstZone && zone <= tiles[t].lastZone)
                            addHeat(*zoneHeat[std::size_t(building)][t], u);
                }
                break;
            }
        }
    }
    // Colour is the utilisation while the link is busy (peak): DP and PP
    // traffic comes in bursts, and the mean over a step hides a link that
    // is saturated whenever it is used.
    const HeatScale scale(maxBytes);
    for (std::size_t l = 0; l < links_.size(); ++l) {
        if (!links_[l])
            continue;
        const auto& heat = linkHeat[l];
        const QString tip = linkToolTip(int(l), heat);
        links_[l]->setHeat(heat, heat ? scale.widthFor(heat->bytes_per_step) : 0, tip);
        const QString tech = usageOfLink[l] ? QString::fromStdString(usageOfLink[l]->technology)
                                            : QString::fromStdString(cluster_.links[l].technology);
        labels_[l]->setHeat(heat, tech, tip);
    }
    for (std::size_t b = 0; b < nb; ++b) {
        const Building& building = cluster_.buildings[b];
        const auto& heat = uplinkHeat[b];
        QString rows;
        if (const LinkUsage* u = usageOfUplink[b])
            rows = QStringLiteral("<tr><td>capacity</td><td>%1</td></tr><tr><td>latency</td>"
                                  "<td>%2</td></tr>")
                       .arg(formatBandwidthGbps(u->capacity_gbps), formatLatencyMs(u->latency_ms));
        rows +=
            QStringLiteral("<tr><td>oversubscription</td><td>%1:1 building→aggregation</td></tr>")
                .arg(building.building_oversubscription);
        if (heat)
            rows += trafficRows(*heat, step);
        uplinks_[b]->setHeat(heat, heat ? scale.widthFor(heat->bytes_per_step) : 0,
                             table(QStringLiteral("%1 uplink to aggregation")
                                       .arg(QString::fromStdString(building.name)),
                                   rows));
        const auto& tiles = layout_.buildings()[b].zones;
        for (std::size_t t = 0; t < zones_[b].size(); ++t) {
            const auto& zh = zoneHeat[b][t];
            QString zrows =
                QStringLiteral("<tr><td>oversubscription</td><td>%1:1 zone→spine</td></tr>")
                    .arg(building.zone_oversubscription);
            if (topology_) {
                const int edge = topology_->zoneUplink(int(b), tiles[t].firstZone);
                if (edge >= 0 && edge < int(topology_->edges().size())) {
                    const TopoEdge& e = topology_->edges()[std::size_t(edge)];
                    zrows.prepend(QStringLiteral("<tr><td>capacity</td><td>%1 per zone</td></tr>")
                                      .arg(formatBandwidthGbps(e.bandwidth_gbps)));
                }
            }
            if (zh)
                zrows += trafficRows(*zh, step);
            const QString title =
                tiles[t].firstZone == tiles[t].lastZone
                    ? QStringLiteral("%1 zone %2 uplink")
                          .arg(QString::fromStdString(building.name))
                          .arg(tiles[t].firstZone)
                    : QStringLiteral("%1 zones %2 uplinks (summed)")
                          .arg(QString::fromStdString(building.name),
                               formatRange(tiles[t].firstZone, tiles[t].lastZone));
            zones_[b][t]->setHeat(zh, zh ? scale.widthFor(zh->bytes_per_step) : 0,
                                  table(title, zrows));
        }
    }
    separateLinkLabels();
    legend_->setScale(scale, evaluation_ != nullptr,
                      evaluationNote_.isEmpty() ? QString() : evaluationNote_);
    placeLegend();
}

QString TopologyView::linkToolTip(int l, const std::optional<LinkHeat>& heat) const {
    const Link& link = cluster_.links[std::size_t(l)];
    QString technology = QString::fromStdString(link.technology);
    double capacity = link.bandwidth_gbps;
    double latency = link.latency_ms;
    if (evaluation_) {
        for (const auto& u : evaluation_->links) {
            if (u.tier == LinkTier::InterBuilding && u.name == link.name) {
                technology = QString::fromStdString(u.technology);
                capacity = u.capacity_gbps > 0 ? u.capacity_gbps : capacity;
                latency = u.latency_ms;
            }
        }
    }
    QString rows = QStringLiteral("<tr><td>between</td><td>%1 ↔ %2</td></tr>"
                                  "<tr><td>bandwidth</td><td>%3 each way</td></tr>"
                                  "<tr><td>latency</td><td>%4 one way</td></tr>"
                                  "<tr><td>technology</td><td>%5</td></tr>")
                       .arg(QString::fromStdString(link.a), QString::fromStdString(link.b),
                            formatBandwidthGbps(capacity), formatLatencyMs(latency), technology);
    if (heat)
        rows += trafficRows(*heat, evaluation_ ? evaluation_->step_time_s : 0);
    return table(QStringLiteral("Link %1").arg(QString::fromStdString(link.name)), rows);
}

void TopologyView::applyMemoryWarnings() {
    std::vector<QString> stageProblem;
    if (evaluation_) {
        const auto& m = evaluation_->memory;
        for (std::size_t s = 0; s < m.per_stage_peak_gib.size(); ++s) {
            const double cap =
                s < m.per_stage_capacity_gib.size() ? m.per_stage_capacity_gib[s] : m.capacity_gib;
            if (cap > 0 && m.per_stage_peak_gib[s] > cap) {
                stageProblem.resize(m.per_stage_peak_gib.size());
                stageProblem[s] = QStringLiteral("stage %1 needs %2 per GPU, the GPU has %3")
                                      .arg(s)
                                      .arg(formatGib(m.per_stage_peak_gib[s]), formatGib(cap));
            }
        }
    }
    for (auto* item : chipItems_) {
        if (!item)
            continue;
        QString detail;
        const auto& c = item->chip();
        for (int s = c.stage_first; s <= c.stage_last && s < int(stageProblem.size()); ++s)
            if (!stageProblem[std::size_t(s)].isEmpty()) {
                detail = stageProblem[std::size_t(s)];
                break;
            }
        item->setMemoryWarning(!detail.isEmpty(), detail);
    }
}

ChipItem* TopologyView::chipItem(int index) const {
    return index >= 0 && index < int(chipItems_.size()) ? chipItems_[std::size_t(index)] : nullptr;
}

LinkItem* TopologyView::linkItem(int link) const {
    return link >= 0 && link < int(links_.size()) ? links_[std::size_t(link)] : nullptr;
}

UplinkItem* TopologyView::uplinkItem(int building) const {
    return building >= 0 && building < int(uplinks_.size()) ? uplinks_[std::size_t(building)]
                                                            : nullptr;
}

BuildingItem* TopologyView::buildingItem(int building) const {
    return building >= 0 && building < int(buildings_.size()) ? buildings_[std::size_t(building)]
                                                              : nullptr;
}

// ---------------------------------------------------------------- drag

void TopologyView::beginChipDrag(int chip) {
    dragChip_ = chip;
    dragTarget_ = -1;
    dragSwap_ = -1;
    resetDropStates();
    // Escape must reach the view while the mouse holds the chip. After
    // dragChip_ is set: a field left with a typed value commits it, and the
    // chips it changes wait for the drop instead of replacing this one.
    if (!previewing_)
        setFocus(Qt::MouseFocusReason);
}

int TopologyView::chipAt(QPointF scenePos) const {
    for (QGraphicsItem* item : scene_->items(scenePos)) {
        auto* chip = dynamic_cast<ChipItem*>(item);
        if (chip && chip->index() >= 0 && chip->index() != dragChip_)
            return chip->index();
    }
    return -1;
}

void TopologyView::moveChipDrag(int chip, QPointF scenePos) {
    if (chip != dragChip_)
        return;
    setDragTarget(layout_.buildingAt(scenePos), chipAt(scenePos));
}

void TopologyView::setDragTarget(int building, int swapWith) {
    if (dragChip_ < 0 || std::size_t(dragChip_) >= chips_.size())
        return;
    const GroupChip chip = chips_[std::size_t(dragChip_)];
    if (building == chip.building)
        building = -1;
    if (building < 0 || swapWith < 0 || chips_[std::size_t(swapWith)].building != building)
        swapWith = -1;
    if (building == dragTarget_ && swapWith == dragSwap_)
        return;
    if (auto* old = buildingItem(dragTarget_))
        old->setDropState(BuildingItem::DropState::None);
    if (auto* old = chipItem(dragSwap_))
        old->setSwapTarget(false);
    if (auto* old = chipItem(displaced_))
        old->setSwapTarget(false);
    displaced_ = -1;
    dragTarget_ = building;
    dragSwap_ = swapWith;
    ChipDrop drop;
    drop.chip = chip;
    drop.building = building;
    if (swapWith >= 0)
        drop.swapWith = chips_[std::size_t(swapWith)];
    Q_EMIT chipDragTargetChanged(drop);
}

void TopologyView::setDropHint(bool legal, const std::optional<GroupChip>& displaced) {
    if (dragChip_ < 0)
        return;
    if (auto* item = buildingItem(dragTarget_))
        item->setDropState(legal ? BuildingItem::DropState::Legal
                                 : BuildingItem::DropState::Illegal);
    if (auto* item = chipItem(dragSwap_))
        item->setSwapTarget(legal);
    if (auto* old = chipItem(displaced_))
        old->setSwapTarget(false);
    displaced_ = -1;
    if (legal && displaced) {
        // The displaced chip as shown: the same cells, per stage or whole.
        for (std::size_t i = 0; i < chips_.size() && displaced_ < 0; ++i)
            if (chips_[i] == *displaced)
                displaced_ = int(i);
        if (auto* item = chipItem(displaced_))
            item->setSwapTarget(true);
    }
}

void TopologyView::resetDropStates() {
    const int source = dragChip_ >= 0 && std::size_t(dragChip_) < chips_.size()
                           ? chips_[std::size_t(dragChip_)].building
                           : -1;
    for (auto* b : buildings_)
        b->setDropState(b->index() == source ? BuildingItem::DropState::Source
                                             : BuildingItem::DropState::None);
    for (auto* c : chipItems_)
        if (c)
            c->setSwapTarget(false);
    displaced_ = -1;
}

void TopologyView::finishChipDrag(int chip, QPointF scenePos, Qt::KeyboardModifiers modifiers) {
    if (chip != dragChip_)
        return;
    ChipDrop drop;
    drop.chip = chips_[std::size_t(chip)];
    drop.building = layout_.buildingAt(scenePos);
    const int swapWith = chipAt(scenePos);
    // Shift: only some of the chip's replicas move (asked below); a part
    // swaps with an equal part there when the building is full (applyDrop).
    const bool split =
        (modifiers & Qt::ShiftModifier) && drop.chip.replica_last > drop.chip.replica_first;
    if (!split && swapWith >= 0 && chips_[std::size_t(swapWith)].building == drop.building)
        drop.swapWith = chips_[std::size_t(swapWith)];
    dragChip_ = -1;
    dragTarget_ = -1;
    dragSwap_ = -1;
    resetDropStates();
    // Deliver after the scene has finished with the mouse event: the drop
    // rebuilds the chips, including the one being released.
    QMetaObject::invokeMethod(
        this,
        [this, drop, split]() mutable {
            if (pendingChips_) {
                chips_ = std::move(*pendingChips_);
                pendingChips_.reset();
                rebuildChips();
            }
            if (drop.building < 0 || drop.building == drop.chip.building) {
                Q_EMIT chipDragCancelled();
                return;
            }
            if (split) {
                const std::optional<int> n = askReplicas(drop.chip, drop.building);
                if (!n) {
                    Q_EMIT chipDragCancelled();
                    return;
                }
                drop.chip = replicasOf(drop.chip, *n);
            }
            Q_EMIT chipDropped(drop);
        },
        Qt::QueuedConnection);
}

std::optional<int> TopologyView::askReplicas(const GroupChip& chip, int building) {
    const int all = chip.replica_last - chip.replica_first + 1;
    QInputDialog dialog(this);
    dialog.setObjectName(QStringLiteral("splitChipDialog"));
    dialog.setWindowTitle(QStringLiteral("Move Part of a Chip"));
    dialog.setInputMode(QInputDialog::IntInput);
    dialog.setIntRange(1, all);
    dialog.setIntValue(std::max(1, all / 2));
    const QString target =
        building >= 0 && building < int(cluster_.buildings.size())
            ? QString::fromStdString(cluster_.buildings[std::size_t(building)].name)
            : QString();
    dialog.setLabelText(
        QStringLiteral("How many of the %1 DP replicas of S%2 · R%3 (%4 GPUs each) move to %5? "
                       "The first ones go.")
            .arg(all)
            .arg(formatRange(chip.stage_first, chip.stage_last),
                 formatRange(chip.replica_first, chip.replica_last),
                 formatCount(chip.gpus / std::max(1, all)), target));
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    return dialog.intValue();
}

void TopologyView::previewChipDrag(int chip, int building, int swapWith) {
    ChipItem* item = chipItem(chip);
    if (!item || building < 0 || building >= int(buildings_.size()))
        return;
    if (previewing_ && dragChip_ != chip)
        endChipPreview();
    previewing_ = true;
    beginChipDrag(chip);
    QPointF at;
    if (ChipItem* other = chipItem(swapWith))
        // Beside and below the target, so its green outline stays visible.
        at = other->sceneBoundingRect().bottomRight() + QPointF(44, 6);
    else {
        const QRectF target = layout_.buildings()[std::size_t(building)].chipArea;
        at = QPointF(target.center().x(), target.top() + target.height() * 0.35);
    }
    item->showDraggedTo(at);
    setDragTarget(building, swapWith);
}

void TopologyView::endChipPreview() {
    if (!previewing_)
        return;
    previewing_ = false;
    if (ChipItem* item = chipItem(dragChip_))
        item->returnHome();
    forgetChipDrag();
}

void TopologyView::forgetChipDrag() {
    dragChip_ = -1;
    dragTarget_ = -1;
    dragSwap_ = -1;
    resetDropStates();
    if (pendingChips_) {
        chips_ = std::move(*pendingChips_);
        pendingChips_.reset();
        rebuildChips();
    }
    Q_EMIT chipDragCancelled();
}

void TopologyView::cancelChipDrag() {
    if (previewing_) {
        endChipPreview();
        return;
    }
    if (dragChip_ < 0)
        return;
    if (ChipItem* item = chipItem(dragChip_)) {
        // The button is still down: the rest of the gesture (moves, the
        // release over a building) must not reach the chip.
        if (scene_->mouseGrabberItem() == item)
            item->ungrabMouse();
        item->returnHome();
        item->setCursor(Qt::OpenHandCursor);
    }
    forgetChipDrag();
}

// ---------------------------------------------------------------- zoom

double TopologyView::zoomFactor() const {
    return transform().m11();
}

// Text stays readable at the new scale (readablePx): link labels resize,
// chips are laid out again when their text size changes.
void TopologyView::applyTextScale() {
    const double s = zoomFactor();
    for (auto* label : labels_)
        if (label)
            label->setTextScale(s);
    separateLinkLabels();
    if (readablePx(kChipFontPx, s) == readablePx(kChipFontPx, chipScale_) &&
        readablePx(11, s) == readablePx(11, chipScale_))
        return;
    if (dragChip_ >= 0) {
        // The chip under the mouse stays; the chips are rebuilt at the drop.
        if (!pendingChips_)
            pendingChips_ = chips_;
        return;
    }
    rebuildChips();
}

void TopologyView::scaleBy(double factor) {
    const double target = std::clamp(zoomFactor() * factor, kMinZoom, kMaxZoom);
    const double f = target / zoomFactor();
    if (std::fabs(f - 1) < 1e-9)
        return;
    scale(f, f);
    applyTextScale();
    Q_EMIT zoomChanged(zoomFactor());
}

void TopologyView::zoomIn() {
    autoFit_ = false;
    scaleBy(1.25);
}

void TopologyView::zoomOut() {
    autoFit_ = false;
    scaleBy(1 / 1.25);
}

void TopologyView::fitToView() {
    autoFit_ = true;
    if (layout_.bounds().isEmpty())
        return;
    // Fit the layout into what the legend leaves free: beside it or above
    // it, whichever gives the larger picture.
    const QRectF b = layout_.bounds();
    const QSizeF vp = viewport()->size();
    const QSizeF lg = legend_->sizeHint();
    const double m = 16;
    const double beside =
        std::min((vp.width() - lg.width() - 3 * m) / b.width(), (vp.height() - 2 * m) / b.height());
    const double above = std::min((vp.width() - 2 * m) / b.width(),
                                  (vp.height() - lg.height() - 3 * m) / b.height());
    legendBeside_ = beside >= above;
    // A two-building cluster would otherwise be blown up to poster size.
    const double s = std::clamp(std::max(beside, above), kMinZoom, kMaxFitZoom);
    const QRectF free = legendBeside_ ? QRectF(0, 0, vp.width() - lg.width() - m, vp.height())
                                      : QRectF(0, 0, vp.width(), vp.height() - lg.height() - m);
    resetTransform();
    scale(s, s);
    centerOn(b.center() + (QPointF(vp.width() / 2, vp.height() / 2) - free.center()) / s);
    placeLegend();
    applyTextScale();
    Q_EMIT zoomChanged(zoomFactor());
}

void TopologyView::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        autoFit_ = false;
        const double steps = event->angleDelta().y() / 120.0;
        scaleBy(std::pow(1.15, steps));
        event->accept();
        return;
    }
    QGraphicsView::wheelEvent(event);
}

void TopologyView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        return;
    case Qt::Key_Minus:
        zoomOut();
        return;
    case Qt::Key_0:
        fitToView();
        return;
    case Qt::Key_Escape:
        cancelChipDrag();
        return;
    default:
        break;
    }
    QGraphicsView::keyPressEvent(event);
}

void TopologyView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    // Fold the key where it would crowd the diagram, unless the user chose.
    if (!legend_->userChose()) {
        const QSize full = legend_->fullSize();
        const QSize vp = viewport()->size();
        legend_->setCollapsed(full.height() > 0.4 * vp.height() ||
                              double(full.width()) * full.height() >
                                  0.12 * double(vp.width()) * vp.height());
    }
    relayoutForPane();
    if (autoFit_)
        fitToView();
    placeLegend();
}

void TopologyView::placeLegend() {
    legend_->resize(legend_->sizeHint());
    const QRect area = viewport()->geometry();
    if (legendBeside_)
        legend_->move(area.right() - legend_->width() - 12, area.bottom() - legend_->height() - 12);
    else
        legend_->move(area.left() + 12, area.bottom() - legend_->height() - 12);
    legend_->raise();
}

void TopologyView::paintEvent(QPaintEvent* event) {
    QGraphicsView::paintEvent(event);
    if (heatPending_) {
        heatPending_ = false;
        Q_EMIT heatmapPainted();
    }
}

} // namespace sa::views
