#include "topologyitems.h"

#include "heatscale.h"
#include "placementedits.h"
#include "topologyview.h"
#include "units.h"

#include <QApplication>
#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QHash>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace sa::views {

namespace {

// Fonts and text widths are asked for on every paint and every chip
// layout: computed once (items live on the GUI thread only).
QFont pixelFont(double px, bool bold = false) {
    static QHash<int, QFont> cache;
    const int key = int(std::lround(px)) * 2 + (bold ? 1 : 0);
    auto it = cache.find(key);
    if (it == cache.end()) {
        QFont f = QApplication::font();
        f.setPixelSize(int(std::lround(px)));
        f.setBold(bold);
        it = cache.insert(key, f);
    }
    return *it;
}

double textWidth(const QString& text, double px, bool bold) {
    static QHash<QString, double> cache[2];
    auto& c = cache[bold ? 1 : 0];
    const QString key = QString::number(px) + QLatin1Char('|') + text;
    auto it = c.find(key);
    if (it == c.end())
        it = c.insert(key, QFontMetricsF(pixelFont(px, bold)).horizontalAdvance(text));
    return *it;
}

const QColor kInk(0x1f, 0x29, 0x33);
const QColor kMuted(0x5c, 0x6b, 0x7a);
const QColor kBorder(0x8a, 0x99, 0xab);

double lodOf(const QPainter* painter, const QStyleOptionGraphicsItem* option) {
    return option ? option->levelOfDetailFromTransform(painter->worldTransform()) : 1.0;
}

// Black or white text, whichever reads better on `fill`.
QColor textOn(const QColor& fill) {
    const double luminance = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
    return luminance > 150 ? kInk : Qt::white;
}

} // namespace

double readablePx(double px, double scale) {
    if (!(scale > 0))
        return px;
    // Whole pixels (pixelFont rounds), never below the minimum on screen.
    return std::max(px, std::ceil(kMinScreenTextPx / scale - 1e-9));
}

// ---------------------------------------------------------------- regions

RegionItem::RegionItem(const TopologyLayout::Region& region)
    : region_(region) {
    setZValue(0);
    // Static items keep a pixmap of themselves: a heatmap update repaints
    // links and uplinks, not every box and label.
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

QRectF RegionItem::boundingRect() const {
    return region_.rect.adjusted(-1, -1, 1, 1);
}

void RegionItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(QColor(0xc5, 0xcf, 0xdb), 1.5));
    painter->setBrush(QColor(0xea, 0xef, 0xf5));
    painter->drawRoundedRect(region_.rect, 14, 14);
    painter->setPen(kMuted);
    painter->setFont(pixelFont(readablePx(15, lodOf(painter, option)), true));
    const QFontMetricsF fm(painter->font());
    painter->drawText(region_.title, Qt::AlignLeft | Qt::AlignVCenter,
                      fm.elidedText(QStringLiteral("Region %1").arg(region_.name), Qt::ElideRight,
                                    region_.title.width()));
}

// ---------------------------------------------------------------- uplinks

UplinkItem::UplinkItem(QRectF rect, double capacityGbps, QGraphicsItem* parent)
    : QGraphicsItem(parent)
    , rect_(rect)
    , capacityGbps_(capacityGbps) {
    setAcceptHoverEvents(true);
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

QRectF UplinkItem::boundingRect() const {
    return rect_.adjusted(-2, -2, 2, 2);
}

void UplinkItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    QColor fill(0xdf, 0xe6, 0xee);
    if (heat_)
        fill = heat_->bytes_per_step > 0 ? HeatScale::colorFor(heat_->peak_utilization)
                                         : QColor(0xe4, 0xe8, 0xed);
    // Thicker bar for more bytes: the bar's height carries the width scale.
    const double h = heat_ ? std::clamp(width_ + 6, 10.0, rect_.height()) : rect_.height();
    const QRectF bar(rect_.left(), rect_.center().y() - h / 2, rect_.width(), h);
    painter->setPen(QPen(fill.darker(125), 1));
    painter->setBrush(fill);
    painter->drawRoundedRect(bar, 4, 4);
    const QString capacity = QStringLiteral("uplink %1").arg(formatBandwidthGbps(capacityGbps_));
    QStringList shorter; // the traffic, ever shorter
    if (heat_ && heat_->bytes_per_step > 0) {
        const QString bytes = formatBytes(heat_->bytes_per_step);
        const QString peak = formatPercent(heat_->peak_utilization);
        shorter << QStringLiteral("%1/step  ·  peak %2").arg(bytes, peak)
                << QStringLiteral("%1 · %2").arg(bytes, peak) << peak;
    }
    painter->setFont(pixelFont(readablePx(11, lodOf(painter, option))));
    // Text sits on the bar when the bar is tall enough, else on the grey track.
    painter->setPen(h >= 14 ? textOn(fill) : kInk);
    const QFontMetricsF fm(painter->font());
    // Capacity and traffic; short of room, the traffic (the capacity is in
    // the tooltip).
    const double room = rect_.width() - 8;
    QString text = shorter.isEmpty() ? capacity : capacity + QStringLiteral("  ·  ") + shorter[0];
    for (const QString& s : shorter)
        if (fm.horizontalAdvance(text) > room)
            text = s;
    painter->drawText(rect_, Qt::AlignCenter | Qt::TextDontClip,
                      fm.elidedText(text, Qt::ElideRight, room));
}

void UplinkItem::setHeat(std::optional<LinkHeat> heat, double width, const QString& toolTip) {
    if (toolTip != this->toolTip())
        setToolTip(toolTip);
    if (heat == heat_ && width == width_)
        return; // repainting the same thing costs a frame on big clusters
    heat_ = std::move(heat);
    width_ = width;
    update();
}

// ---------------------------------------------------------------- zones

ZoneItem::ZoneItem(const TopologyLayout::Zone& zone, QLineF connector, std::int64_t gpus,
                   QGraphicsItem* parent)
    : QGraphicsItem(parent)
    , zone_(zone)
    , connector_(connector)
    , gpus_(gpus) {
    setAcceptHoverEvents(true);
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

QRectF ZoneItem::boundingRect() const {
    QRectF r = zone_.rect;
    if (!connector_.isNull())
        r |= QRectF(connector_.p1(), connector_.p2()).normalized().adjusted(-8, -1, 8, 1);
    return r.adjusted(-2, -2, 2, 2);
}

void ZoneItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    const bool busy = heat_ && heat_->bytes_per_step > 0;
    const QColor heatColor = busy ? HeatScale::colorFor(heat_->peak_utilization) : kBorder;
    if (!connector_.isNull()) {
        painter->setPen(QPen(busy ? heatColor : QColor(0xb8, 0xc2, 0xce),
                             busy ? std::max(2.0, width_ * 0.6) : 1.5, Qt::SolidLine, Qt::FlatCap));
        painter->drawLine(connector_);
    }
    painter->setPen(QPen(busy ? heatColor : QColor(0xc3, 0xcc, 0xd6), busy ? 1.5 : 1));
    painter->setBrush(QColor(0xf3, 0xf6, 0xf9));
    painter->drawRoundedRect(zone_.rect, 4, 4);
    if (busy) {
        // The uplink strip along the tile's top edge.
        const double h = std::clamp(width_ * 0.5, 3.0, 7.0);
        QRectF strip(zone_.rect.left(), zone_.rect.top(), zone_.rect.width(), h);
        painter->setPen(Qt::NoPen);
        painter->setBrush(heatColor);
        painter->drawRoundedRect(strip, 2, 2);
    }
    // Text below the strip, whatever its thickness.
    const QRectF text = zone_.rect.adjusted(4, 7, -4, -2);
    const QString name =
        zone_.firstZone == zone_.lastZone
            ? QStringLiteral("zone %1").arg(zone_.firstZone)
            : QStringLiteral("zones %1").arg(formatRange(zone_.firstZone, zone_.lastZone));
    // Zoomed out, the zone's name would be too small to read: the tile
    // keeps only its GPU count, as large as the tile allows (the name is in
    // the tooltip).
    const double lod = lodOf(painter, option);
    const double namePx = readablePx(9.5, lod);
    const double countPx = readablePx(11, lod);
    const QString count = formatCount(gpus_);
    if (QFontMetricsF(pixelFont(namePx)).height() +
            QFontMetricsF(pixelFont(countPx, true)).height() >
        text.height() + 3) {
        // No room for two readable lines: the GPU count alone, as large as
        // the tile allows, or nothing when even that does not fit (the
        // tooltip and the building's header have it).
        const double px = std::max(countPx, std::min(17.0, text.height() - 2));
        const QFontMetricsF big(pixelFont(px, true));
        const QRectF wide = zone_.rect.adjusted(1, 5, -1, -1);
        // A tile standing for several zones says how many (its GPUs are in
        // the tooltip): a sum there would read as one zone's size.
        QString shown = count;
        if (zone_.lastZone > zone_.firstZone) {
            const int n = zone_.lastZone - zone_.firstZone + 1;
            shown = QStringLiteral("+%1 zones").arg(n);
            if (big.horizontalAdvance(shown) > wide.width())
                shown = QStringLiteral("+%1").arg(n);
        }
        if (big.horizontalAdvance(shown) > wide.width() || big.height() > wide.height() + 6)
            return;
        painter->setPen(kInk);
        painter->setFont(pixelFont(px, true));
        painter->drawText(wide, Qt::AlignCenter | Qt::TextDontClip, shown);
        return;
    }
    painter->setPen(kMuted);
    painter->setFont(pixelFont(namePx));
    QFontMetricsF fm(painter->font());
    painter->drawText(text, Qt::AlignHCenter | Qt::AlignTop,
                      fm.elidedText(name, Qt::ElideRight, text.width()));
    painter->setPen(kInk);
    painter->setFont(pixelFont(countPx, true));
    fm = QFontMetricsF(painter->font());
    painter->drawText(text, Qt::AlignHCenter | Qt::AlignBottom,
                      fm.elidedText(count, Qt::ElideRight, text.width()));
}

void ZoneItem::setHeat(std::optional<LinkHeat> heat, double width, const QString& toolTip) {
    if (toolTip != this->toolTip())
        setToolTip(toolTip);
    if (heat == heat_ && width == width_)
        return;
    heat_ = std::move(heat);
    width_ = width;
    update();
}

// ---------------------------------------------------------------- buildings

BuildingItem::BuildingItem(const TopologyLayout::Building& geometry, const Building& building,
                           const GpuModel* gpu)
    : geometry_(geometry)
    , name_(QString::fromStdString(building.name))
    , gpus_(building.gpus) {
    setZValue(2);
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    gpuLine_ = QStringLiteral("%1 · %2 per host · NIC %3")
                   .arg(QString::fromStdString(building.gpu_model))
                   .arg(building.gpus_per_host)
                   .arg(formatBandwidthGbps(building.scale_out_gbps));
    // "11 zones: 10 of 3,072 GPUs and one of 2,048", "4 zones of 2,048 GPUs", "one zone".
    const std::int64_t zones = building.zones();
    const std::int64_t zoneGpus = building.zone_gpus > 0 ? building.zone_gpus : building.gpus;
    const std::int64_t last = building.gpus - (zones - 1) * zoneGpus;
    QString zoneText;
    if (zones <= 1)
        zoneText = QStringLiteral("one zone");
    else if (last == zoneGpus)
        zoneText = QStringLiteral("%1 zones of %2 GPUs").arg(zones).arg(formatCount(zoneGpus));
    else
        zoneText = QStringLiteral("%1 zones: %2 of %3 GPUs and one of %4")
                       .arg(zones)
                       .arg(zones - 1)
                       .arg(formatCount(zoneGpus), formatCount(last));
    QString tip = QStringLiteral("<b>%1</b> (region %2)<br>%3 × %4<br>%5 GPUs per host, NVLink "
                                 "%6 and NIC %7 per GPU<br>%8; oversubscription "
                                 "zone→spine %9:1, building→aggregation %10:1")
                      .arg(name_, QString::fromStdString(building.region),
                           formatCount(building.gpus), QString::fromStdString(building.gpu_model))
                      .arg(building.gpus_per_host)
                      .arg(formatBandwidthGbps(building.scale_up_gbps),
                           formatBandwidthGbps(building.scale_out_gbps), zoneText)
                      .arg(building.zone_oversubscription)
                      .arg(building.building_oversubscription);
    if (gpu)
        tip += QStringLiteral("<br>%1: %2 TFLOP/s bf16, %3 GiB HBM")
                   .arg(QString::fromStdString(gpu->name))
                   .arg(gpu->peak_tflops_bf16)
                   .arg(gpu->memory_gib);
    setToolTip(tip);
}

QRectF BuildingItem::boundingRect() const {
    return geometry_.rect.adjusted(-3, -3, 3, 3);
}

void BuildingItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    QPen pen(kBorder, 1.5);
    QColor fill = Qt::white;
    switch (dropState_) {
    case DropState::None:
        break;
    case DropState::Source:
        pen = QPen(kMuted, 2, Qt::DashLine);
        break;
    case DropState::Legal:
        pen = QPen(QColor(0x2f, 0x9e, 0x44), 4);
        fill = QColor(0xeb, 0xfb, 0xee);
        break;
    case DropState::Illegal:
        pen = QPen(QColor(0xe0, 0x31, 0x31), 4);
        fill = QColor(0xff, 0xf0, 0xf0);
        break;
    }
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(geometry_.rect, 8, 8);

    const QRectF h = geometry_.header;
    const double lod = lodOf(painter, option);
    const double namePx = readablePx(17, lod);
    const double countPx = readablePx(13, lod);
    painter->setPen(kInk);
    const QRectF top(h.left(), h.top(), h.width(), 24);
    painter->setFont(pixelFont(countPx, true));
    QFontMetricsF fm(painter->font());
    const QString count = countLabel(gpus_, used_, [&](const QString& text) {
        return fm.horizontalAdvance(text) <= h.width() * 0.6;
    });
    const double countWidth = fm.horizontalAdvance(count);
    painter->drawText(top, Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip, count);
    painter->setFont(pixelFont(namePx, true));
    fm = QFontMetricsF(painter->font());
    painter->drawText(top.adjusted(0, 0, -countWidth - 8, 0),
                      Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip,
                      fm.elidedText(name_, Qt::ElideRight, top.width() - countWidth - 8));
    // The GPU line where a readable size fits its row (else in the tooltip).
    const QRectF second(h.left(), h.top() + 24, h.width(), 18);
    painter->setPen(kMuted);
    painter->setFont(pixelFont(readablePx(11.5, lod)));
    fm = QFontMetricsF(painter->font());
    if (fm.height() <= second.height() + 4)
        painter->drawText(second, Qt::AlignLeft | Qt::AlignVCenter,
                          fm.elidedText(gpuLine_, Qt::ElideRight, h.width()));
}

QString BuildingItem::countLabel(std::int64_t gpus, std::int64_t used,
                                 const std::function<bool(const QString&)>& fits) {
    QStringList options;
    if (used >= 0 && used != gpus)
        options = {QStringLiteral("%1 / %2 GPUs").arg(formatCount(used), formatCount(gpus)),
                   QStringLiteral("%1 / %2").arg(formatCount(used), formatCount(gpus)),
                   QStringLiteral("%1 used").arg(formatCount(used))};
    else
        options = {QStringLiteral("%1 GPUs").arg(formatCount(gpus)), formatCount(gpus)};
    for (const QString& option : options)
        if (fits(option))
            return option;
    return options.back();
}

void BuildingItem::setDropState(DropState state) {
    if (state == dropState_)
        return;
    dropState_ = state;
    update();
}

void BuildingItem::setUsedGpus(std::int64_t used) {
    if (used == used_)
        return;
    used_ = used;
    update();
}

// ---------------------------------------------------------------- links

LinkItem::LinkItem(const TopologyLayout::LinkPath& path, const Link& link)
    : path_(path)
    , backgroundShare_(link.bandwidth_gbps > 0
                           ? std::clamp(link.background_gbps / link.bandwidth_gbps, 0.0, 1.0)
                           : 0.0) {
    QPainterPath p(path.from);
    p.quadTo(path.control, path.to);
    setPath(p);
    setZValue(1);
    setAcceptHoverEvents(true);
    setHeat(std::nullopt, HeatScale::kMinWidth, QString());
}

QPainterPath LinkItem::shape() const {
    // A wide hover target: thin lines are hard to hit.
    QPainterPathStroker stroker;
    stroker.setWidth(std::max(18.0, pen().widthF() + 8));
    return stroker.createStroke(path());
}

void LinkItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
    QGraphicsPathItem::paint(painter, option, widget);
    if (backgroundShare_ <= 0)
        return;
    // The line stands for the capacity: its first part, as long as the
    // background's share, in grey; the rest is what the job gets.
    const QPainterPath& p = path();
    QPainterPath bg(p.pointAtPercent(0));
    constexpr int kSteps = 24;
    for (int i = 1; i <= kSteps; ++i)
        bg.lineTo(p.pointAtPercent(p.percentAtLength(p.length() * backgroundShare_ * i / kSteps)));
    QPen grey(QColor(0x86, 0x8e, 0x96), std::max(pen().widthF(), HeatScale::kMinWidth + 2.0));
    grey.setCapStyle(Qt::FlatCap);
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(grey);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(bg);
    // A light stripe down its middle: grey background, not an idle link.
    QPen stripe(QColor(255, 255, 255, 200), std::max(1.0, grey.widthF() / 4));
    stripe.setCapStyle(Qt::FlatCap);
    stripe.setStyle(Qt::DashLine);
    painter->setPen(stripe);
    painter->drawPath(bg);
}

void LinkItem::setHeat(std::optional<LinkHeat> heat, double width, const QString& toolTip) {
    QPen pen;
    pen.setCapStyle(Qt::RoundCap);
    if (heat && heat->bytes_per_step > 0) {
        pen.setColor(HeatScale::colorFor(heat->peak_utilization));
        pen.setWidthF(width);
    } else {
        pen.setColor(HeatScale::idleColor());
        pen.setWidthF(HeatScale::kMinWidth + 1);
        if (heat)
            pen.setStyle(Qt::DashLine); // evaluated and idle
    }
    setPen(pen);
    setToolTip(toolTip);
}

LinkLabelItem::LinkLabelItem(QPointF anchor, QPointF side, const Link& link)
    : anchor_(anchor)
    , side_(side)
    , accent_(HeatScale::idleColor()) {
    setZValue(3);
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    setAcceptHoverEvents(true);
    line1_ = QStringLiteral("%1 · %2").arg(formatBandwidthGbps(link.bandwidth_gbps),
                                           formatLatencyMs(link.latency_ms));
    if (link.background_gbps > 0)
        line1_ += QStringLiteral(" · %1 background").arg(formatBandwidthGbps(link.background_gbps));
    relayout();
}

void LinkLabelItem::setTextScale(double scale) {
    if (readablePx(12, scale) == readablePx(12, scale_) &&
        readablePx(11, scale) == readablePx(11, scale_)) {
        scale_ = scale;
        return;
    }
    scale_ = scale;
    relayout();
    update();
}

void LinkLabelItem::setAnchor(QPointF anchor, QPointF side) {
    if (anchor == anchor_ && side == side_)
        return;
    anchor_ = anchor;
    side_ = side;
    relayout();
    update();
}

void LinkLabelItem::setCompact(bool compact) {
    if (compact == compact_)
        return;
    compact_ = compact;
    relayout();
    update();
}

void LinkLabelItem::setMaxWidth(double width) {
    if (width == maxWidth_)
        return;
    maxWidth_ = width;
    relayout();
    update();
}

void LinkLabelItem::setMaxHeight(double height) {
    if (height == maxHeight_)
        return;
    maxHeight_ = height;
    relayout();
    update();
}

void LinkLabelItem::relayout() {
    prepareGeometryChange();
    const QFontMetricsF bold(pixelFont(readablePx(12, scale_), true));
    const QFontMetricsF plain(pixelFont(readablePx(11, scale_)));
    // Three lines (capacity and latency, traffic, busy time and dimensions);
    // a line wider than the room beside the link (the gap between two
    // buildings) splits into its parts, a line each.
    auto widthOf = [&](const Row& r) { return (r.bold ? bold : plain).horizontalAdvance(r.text); };
    rows_.clear();
    int line3Rows = 0;
    for (const auto& [text, isBold, third] :
         {std::tuple{line1_, true, false}, std::tuple{line2_, false, false},
          std::tuple{line3_, false, true}}) {
        if (text.isEmpty() || (compact_ && !isBold))
            continue;
        const Row whole{text, isBold};
        QStringList parts{text};
        if (widthOf(whole) + 14 > maxWidth_)
            parts = text.split(QStringLiteral(" · "));
        for (const QString& part : parts)
            rows_.push_back({part, isBold});
        if (third)
            line3Rows = int(parts.size());
    }
    auto widest = [&] {
        double w = 0;
        for (const Row& r : rows_)
            w = std::max(w, widthOf(r));
        return w + 14;
    };
    double h = 2;
    for (Row& r : rows_) {
        r.height = std::max(r.bold ? 17.0 : 16.0, (r.bold ? bold : plain).height());
        h += r.height;
    }
    // A box wider than the gap lies over the buildings on both sides: short
    // of height below their titles, the busy time and dimensions go first
    // (they stay in the tooltip and the Links tab).
    if (widest() > maxWidth_ && h > maxHeight_ && line3Rows > 0 && int(rows_.size()) > line3Rows)
        for (int i = 0; i < line3Rows; ++i) {
            h -= rows_.back().height;
            rows_.pop_back();
        }
    const double w = widest();
    // Centre beside the line: half the box's extent along `side`, half the
    // widest line and a gap.
    const double extent = std::fabs(side_.x()) * w / 2 + std::fabs(side_.y()) * h / 2;
    const QPointF c = anchor_ + side_ * (extent + HeatScale::kMaxWidth / 2 + 4);
    rect_ = QRectF(c.x() - w / 2, c.y() - h / 2, w, h);
}

QStringList LinkLabelItem::lines() const {
    QStringList out;
    for (const Row& r : rows_)
        out << r.text;
    return out;
}

QRectF LinkLabelItem::boundingRect() const {
    return rect_.adjusted(-2, -2, 2, 2);
}

void LinkLabelItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(accent_, 1.5));
    painter->setBrush(QColor(255, 255, 255, 235));
    painter->drawRoundedRect(rect_, 6, 6);
    double y = rect_.top() + 1;
    for (const Row& r : rows_) {
        painter->setPen(r.bold ? kInk : kMuted);
        painter->setFont(r.bold ? pixelFont(readablePx(12, scale_), true)
                                : pixelFont(readablePx(11, scale_)));
        painter->drawText(QRectF(rect_.left(), y, rect_.width(), r.height), Qt::AlignCenter,
                          r.text);
        y += r.height;
    }
}

void LinkLabelItem::setHeat(std::optional<LinkHeat> heat, const QString&, const QString& toolTip) {
    const QString oldLine = line2_;
    const QString oldLine3 = line3_;
    const QColor oldAccent = accent_;
    line3_.clear();
    if (heat && heat->bytes_per_step > 0) {
        line2_ = QStringLiteral("%1/step · peak %2")
                     .arg(formatBytes(heat->bytes_per_step), formatPercent(heat->peak_utilization));
        QStringList dims;
        for (Dim d : heat->dims)
            dims << QString::fromLatin1(toString(d)).toUpper();
        line3_ = QStringLiteral("busy %1").arg(formatSeconds(heat->busy_s));
        if (!dims.isEmpty())
            line3_ += QStringLiteral(" · ") + dims.join(QStringLiteral(", "));
        accent_ = HeatScale::colorFor(heat->peak_utilization);
    } else if (heat) {
        line2_ = QStringLiteral("idle");
        accent_ = HeatScale::idleColor();
    } else {
        line2_.clear();
        accent_ = HeatScale::idleColor();
    }
    if (toolTip != this->toolTip())
        setToolTip(toolTip);
    if (line2_ == oldLine && line3_ == oldLine3 && accent_ == oldAccent)
        return;
    relayout();
    update();
}

// ---------------------------------------------------------------- chips

ChipItem::ChipItem(TopologyView* view, int index, const GroupChip& chip, const QString& label,
                   QColor color, QPointF pos, double height, std::int64_t cellGpus, double fontPx)
    : view_(view)
    , index_(index)
    , chip_(chip)
    , color_(color)
    , label_(label)
    , fullLabel_(chipLabel(chip))
    , home_(pos)
    , cellGpus_(cellGpus)
    , fontPx_(fontPx) {
    size_ = QSizeF(widthFor(label_, fontPx_), height);
    fullSize_ = QSizeF(widthFor(fullLabel_, fontPx_), height);
    setPos(pos);
    setZValue(4);
    setAcceptHoverEvents(true);
    setCursor(Qt::OpenHandCursor);
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    const std::int64_t cells = std::int64_t(chip.stage_last - chip.stage_first + 1) *
                               (chip.replica_last - chip.replica_first + 1);
    baseToolTip_ = QStringLiteral("<b>Pipeline stages %1 × DP replicas %2</b><br>%3 GPUs: %4 "
                                  "model-parallel groups of %5<br><i>Drag to another building "
                                  "to move these groups there, or onto a chip there to swap "
                                  "the two; Shift on release moves only some of its "
                                  "replicas.</i>")
                       .arg(formatRange(chip.stage_first, chip.stage_last),
                            formatRange(chip.replica_first, chip.replica_last),
                            formatCount(chip.gpus), formatCount(cells), formatCount(cellGpus));
    updateToolTip();
}

ChipItem::ChipItem(int hidden, QPointF pos, double height, const QString& toolTip, double fontPx)
    : color_(QColor(0xe9, 0xec, 0xef))
    , label_(QStringLiteral("+%1 more").arg(hidden))
    , home_(pos)
    , fontPx_(fontPx) {
    size_ = QSizeF(widthFor(label_, fontPx_), height);
    fullSize_ = size_;
    setPos(pos);
    setZValue(4);
    setToolTip(toolTip);
}

double ChipItem::widthFor(const QString& label, double fontPx) {
    return textWidth(label, fontPx, true) + 14;
}

QRectF ChipItem::boundingRect() const {
    return QRectF(QPointF(0, 0), dragging_ ? fullSize_ : size_).adjusted(-2, -2, 6, 6);
}

void ChipItem::setDragging(bool dragging) {
    if (dragging == dragging_)
        return;
    prepareGeometryChange();
    dragging_ = dragging;
    setZValue(dragging ? 10 : 4);
    update();
}

void ChipItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    const QRectF r(QPointF(0, 0), dragging_ ? fullSize_ : size_);
    if (dragging_) {
        // A soft shadow lifts the chip off the page while it moves.
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0, 0, 0, 50));
        painter->drawRoundedRect(r.translated(3, 4), 6, 6);
    }
    QPen pen(color_.darker(150), 1.2);
    if (warn_)
        pen = QPen(QColor(0xe0, 0x31, 0x31), 2.2, Qt::DashLine);
    if (swapTarget_)
        pen = QPen(QColor(0x2f, 0x9e, 0x44), 3);
    painter->setPen(pen);
    painter->setBrush(color_);
    painter->drawRoundedRect(r, 6, 6);
    painter->setPen(textOn(color_));
    painter->setFont(pixelFont(fontPx_, true));
    painter->drawText(r, Qt::AlignCenter | Qt::TextDontClip, dragging_ ? fullLabel_ : label_);
}

void ChipItem::reuse(int index, QPointF home) {
    index_ = index;
    home_ = home;
    if (!dragging_ && pos() != home)
        setPos(home);
}

void ChipItem::setMemoryWarning(bool warn, const QString& detail) {
    if (warn == warn_ && detail == warnDetail_)
        return;
    warn_ = warn;
    warnDetail_ = detail;
    updateToolTip();
    update();
}

void ChipItem::setSwapTarget(bool on) {
    if (on == swapTarget_)
        return;
    swapTarget_ = on;
    update();
}

void ChipItem::updateToolTip() {
    if (index_ < 0)
        return;
    setToolTip(warn_ ? baseToolTip_ + QStringLiteral("<br><font color=\"#c92a2a\">⚠ %1</font>")
                                          .arg(warnDetail_.toHtmlEscaped())
                     : baseToolTip_);
}

void ChipItem::showDraggedTo(QPointF scenePos) {
    setDragging(true);
    setPos(scenePos - QPointF(fullSize_.width() / 2, fullSize_.height() / 2));
}

void ChipItem::returnHome() {
    setDragging(false);
    setPos(home_);
}

void ChipItem::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    if (index_ < 0 || event->button() != Qt::LeftButton) {
        event->ignore();
        return;
    }
    event->accept();
    grabOffset_ = event->pos();
    setDragging(true);
    setCursor(Qt::ClosedHandCursor);
    view_->beginChipDrag(index_);
}

void ChipItem::mouseMoveEvent(QGraphicsSceneMouseEvent* event) {
    if (!dragging_)
        return;
    setPos(event->scenePos() - grabOffset_);
    view_->moveChipDrag(index_, event->scenePos());
}

void ChipItem::mouseReleaseEvent(QGraphicsSceneMouseEvent* event) {
    if (!dragging_)
        return;
    setCursor(Qt::OpenHandCursor);
    const QPointF at = event->scenePos();
    returnHome();
    // May delete this item (the plan changes, chips are rebuilt): last.
    view_->finishChipDrag(index_, at, event->modifiers());
}

ChipGroupLabel::ChipGroupLabel(const QString& text, QPointF pos, double height, double fontPx)
    : text_(text)
    , fontPx_(fontPx)
    , size_(widthFor(text, fontPx), height) {
    setPos(pos);
    setZValue(4);
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

double ChipGroupLabel::widthFor(const QString& text, double fontPx) {
    return textWidth(text, fontPx, true) + 4;
}

QRectF ChipGroupLabel::boundingRect() const {
    return QRectF(QPointF(0, 0), size_);
}

void ChipGroupLabel::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setPen(kMuted);
    painter->setFont(pixelFont(fontPx_, true));
    painter->drawText(boundingRect(), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, text_);
}

} // namespace sa::views
