#include "topologylayout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace sa::views {

namespace {

// Where the ray from the rectangle's centre towards `towards` leaves it.
QPointF borderPoint(const QRectF& r, QPointF towards) {
    const QPointF c = r.center();
    const double dx = towards.x() - c.x();
    const double dy = towards.y() - c.y();
    if (std::fabs(dx) < 1e-9 && std::fabs(dy) < 1e-9)
        return c;
    const double tx = std::fabs(dx) > 1e-9 ? (r.width() / 2) / std::fabs(dx) : 1e300;
    const double ty = std::fabs(dy) > 1e-9 ? (r.height() / 2) / std::fabs(dy) : 1e300;
    const double t = std::min(tx, ty);
    return {c.x() + dx * t, c.y() + dy * t};
}

QPointF bezier(QPointF a, QPointF c, QPointF b, double t) {
    const double u = 1 - t;
    return u * u * a + 2 * u * t * c + t * t * b;
}

} // namespace

QPointF TopologyLayout::LinkPath::pointAt(double t) const {
    return bezier(from, control, to, t);
}

TopologyLayout TopologyLayout::compute(const Cluster& cluster, const LayoutMetrics& m,
                                       double targetAspect) {
    TopologyLayout layout;
    layout.metrics_ = m;
    if (!(targetAspect > 0.1 && targetAspect < 10))
        targetAspect = 1.6;
    const int n = static_cast<int>(cluster.buildings.size());
    if (n == 0)
        return layout;

    // Regions in order of first appearance, so the file's order reads left
    // to right.
    std::map<std::string, int> regionIndex;
    for (int i = 0; i < n; ++i) {
        const std::string& name = cluster.buildings[std::size_t(i)].region;
        auto [it, inserted] = regionIndex.try_emplace(name, int(layout.regions_.size()));
        if (inserted) {
            Region r;
            r.name = name.empty() ? QStringLiteral("(no region)") : QString::fromStdString(name);
            layout.regions_.push_back(r);
        }
        layout.regions_[std::size_t(it->second)].buildings.push_back(i);
    }

    // Every building box has the same size so the grid stays regular.
    int zoneRows = 1;
    for (const auto& b : cluster.buildings) {
        const int zones = static_cast<int>(std::max<std::int64_t>(1, b.zones()));
        const int cols = std::min(zones, m.maxZoneColumns);
        zoneRows = std::max(zoneRows, std::min(m.maxZoneRows, (zones + cols - 1) / cols));
    }
    const double W = m.buildingWidth;
    const double zonesHeight = zoneRows * m.zoneHeight + (zoneRows - 1) * m.zoneGap;
    const double chipsHeight = m.chipRows * m.chipRowHeight;
    const double H = m.padding + m.headerHeight + m.uplinkHeight + m.connectorHeight + zonesHeight +
                     m.padding + chipsHeight + m.padding;

    // Region sizes for a cap on building columns per region.
    auto regionSizesFor = [&](int columnCap) {
        std::vector<QSizeF> sizes;
        for (const auto& r : layout.regions_) {
            const int count = static_cast<int>(r.buildings.size());
            const int cols = std::min(count, columnCap);
            const int rows = (count + cols - 1) / cols;
            sizes.emplace_back(2 * m.regionPadding + cols * W + (cols - 1) * m.buildingGap,
                               m.regionTitleHeight + m.regionPadding + rows * H +
                                   (rows - 1) * m.buildingGap + m.regionPadding);
        }
        return sizes;
    };
    // Regions flow in rows that wrap at maxRowWidth; odd rows run right to
    // left (a snake) so consecutive regions stay neighbours. Returns the
    // canvas size and, when asked, the origin of each region.
    auto flow = [&](const std::vector<QSizeF>& sizes, double maxRowWidth,
                    std::vector<QPointF>* origins, std::vector<bool>* mirrored = nullptr) {
        std::vector<std::vector<std::size_t>> rows(1);
        double x = 0;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            if (x > 0 && x + sizes[i].width() > maxRowWidth + 1e-6) {
                rows.emplace_back();
                x = 0;
            }
            rows.back().push_back(i);
            x += sizes[i].width() + m.regionGap;
        }
        if (origins)
            origins->assign(sizes.size(), QPointF());
        if (mirrored)
            mirrored->assign(sizes.size(), false);
        double y = 0;
        double width = 0;
        for (std::size_t r = 0; r < rows.size(); ++r) {
            double rowWidth = 0;
            double rowHeight = 0;
            for (std::size_t k = 0; k < rows[r].size(); ++k) {
                rowWidth += sizes[rows[r][k]].width() + (k ? m.regionGap : 0);
                rowHeight = std::max(rowHeight, sizes[rows[r][k]].height());
            }
            double cx = r % 2 == 0 ? 0 : rowWidth;
            for (std::size_t i : rows[r]) {
                if (r % 2 == 0) {
                    if (origins)
                        (*origins)[i] = QPointF(cx, y);
                    cx += sizes[i].width() + m.regionGap;
                } else {
                    cx -= sizes[i].width();
                    if (origins)
                        (*origins)[i] = QPointF(cx, y);
                    if (mirrored)
                        (*mirrored)[i] = true;
                    cx -= m.regionGap;
                }
            }
            width = std::max(width, rowWidth);
            y += rowHeight + (r + 1 < rows.size() ? m.regionGap : 0);
        }
        return QSizeF(width, y);
    };
    // Pick the arrangement closest to the pane's aspect without wasting
    // much area: try every cap on columns per region and every number of
    // regions per row.
    int bestCap = 1;
    double bestRowWidth = 0;
    double bestScore = 1e300;
    int largest = 0;
    for (const auto& r : layout.regions_)
        largest = std::max(largest, int(r.buildings.size()));
    double buildingArea = double(n) * W * H;
    for (int cap = 1; cap <= largest; ++cap) {
        const auto sizes = regionSizesFor(cap);
        for (std::size_t k = 1; k <= sizes.size(); ++k) {
            double rowWidth = 0;
            for (std::size_t i = 0; i < k; ++i)
                rowWidth += sizes[i].width() + (i ? m.regionGap : 0);
            const QSizeF canvas = flow(sizes, rowWidth, nullptr);
            const double aspect = canvas.width() / canvas.height();
            const double score = std::fabs(std::log(aspect / targetAspect)) +
                                 0.5 * std::log(canvas.width() * canvas.height() / buildingArea);
            if (score < bestScore - 1e-9) {
                bestScore = score;
                bestCap = cap;
                bestRowWidth = rowWidth;
            }
        }
    }
    const std::vector<QSizeF> regionSizes = regionSizesFor(bestCap);
    std::vector<QPointF> origins;
    std::vector<bool> mirrored;
    flow(regionSizes, bestRowWidth, &origins, &mirrored);

    layout.buildings_.resize(std::size_t(n));
    for (std::size_t ri = 0; ri < layout.regions_.size(); ++ri) {
        Region& region = layout.regions_[ri];
        const QSizeF size = regionSizes[ri];
        const double x = origins[ri].x();
        const double y = origins[ri].y();
        region.rect = QRectF(QPointF(x, y), size);
        region.title =
            QRectF(x + m.regionPadding, y, size.width() - 2 * m.regionPadding, m.regionTitleHeight);
        const int cols = std::min(int(region.buildings.size()), bestCap);
        for (std::size_t k = 0; k < region.buildings.size(); ++k) {
            // Rows alternate direction (a snake), so buildings that follow
            // each other in the file stay neighbours and a chain of links
            // never cuts across a row.
            const int row = int(k) / cols;
            // A region in a right-to-left row of regions starts its own
            // snake from the right too.
            const bool leftToRight = (row % 2 == 0) != mirrored[ri];
            const int col = leftToRight ? int(k) % cols : cols - 1 - int(k) % cols;
            const int bi = region.buildings[k];
            Building& b = layout.buildings_[std::size_t(bi)];
            b.index = bi;
            b.region = int(ri);
            const double bx = x + m.regionPadding + col * (W + m.buildingGap);
            const double by = y + m.regionTitleHeight + m.regionPadding + row * (H + m.buildingGap);
            b.rect = QRectF(bx, by, W, H);
            const double inner = W - 2 * m.padding;
            double cy = by + m.padding;
            b.header = QRectF(bx + m.padding, cy, inner, m.headerHeight);
            cy += m.headerHeight;
            b.uplinkBar = QRectF(bx + m.padding, cy, inner, m.uplinkHeight);
            cy += m.uplinkHeight + m.connectorHeight;

            const auto& cb = cluster.buildings[std::size_t(bi)];
            const int zones = static_cast<int>(std::max<std::int64_t>(1, cb.zones()));
            const int zcols = std::min(zones, m.maxZoneColumns);
            const int capacity = zcols * m.maxZoneRows;
            const int tiles = std::min(zones, capacity);
            const double tileW = (inner - (zcols - 1) * m.zoneGap) / zcols;
            for (int t = 0; t < tiles; ++t) {
                Zone z;
                z.rect = QRectF(bx + m.padding + (t % zcols) * (tileW + m.zoneGap),
                                cy + (t / zcols) * (m.zoneHeight + m.zoneGap), tileW, m.zoneHeight);
                z.firstZone = t;
                z.lastZone = (t == tiles - 1) ? zones - 1 : t;
                b.zones.push_back(z);
            }
            cy += zonesHeight + m.padding;
            b.chipArea = QRectF(bx + m.padding, cy, inner, chipsHeight);
        }
    }

    for (const auto& r : layout.regions_)
        layout.bounds_ |= r.rect;

    // Links: straight where the line is clear, otherwise a curve bent around
    // the buildings in between. Parallel links between one pair fan out.
    auto hitsOther = [&](const LinkPath& p) {
        int hits = 0;
        for (int s = 1; s < 64; ++s) {
            const QPointF q = p.pointAt(s / 64.0);
            for (const auto& b : layout.buildings_)
                if (b.index != p.a && b.index != p.b && b.rect.adjusted(-6, -6, 6, 6).contains(q))
                    ++hits;
        }
        return hits;
    };
    std::map<std::pair<int, int>, int> pairCount;
    for (std::size_t li = 0; li < cluster.links.size(); ++li) {
        const auto& link = cluster.links[li];
        const int a = cluster.buildingIndex(link.a);
        const int b = cluster.buildingIndex(link.b);
        if (a < 0 || b < 0 || a == b)
            continue;
        const int parallel = pairCount[{std::min(a, b), std::max(a, b)}]++;
        const QRectF ra = layout.buildings_[std::size_t(a)].rect;
        const QRectF rb = layout.buildings_[std::size_t(b)].rect;
        const QPointF ca = ra.center();
        const QPointF cb = rb.center();
        const QPointF mid = (ca + cb) / 2;
        QPointF normal(-(cb.y() - ca.y()), cb.x() - ca.x());
        const double len = std::hypot(normal.x(), normal.y());
        normal = len > 0 ? normal / len : QPointF(0, 1);

        auto make = [&](double bend) {
            LinkPath p;
            p.link = int(li);
            p.a = a;
            p.b = b;
            p.curved = std::fabs(bend) > 1e-9;
            p.control = mid + normal * bend;
            p.from = borderPoint(ra, p.curved ? p.control : cb);
            p.to = borderPoint(rb, p.curved ? p.control : ca);
            p.labelAnchor = p.pointAt(0.5);
            return p;
        };
        // Parallel links alternate sides: 0, +1, -1, +2, ...
        const int side = (parallel % 2 == 1) ? 1 : -1;
        const double fan =
            parallel == 0 ? 0 : side * ((parallel + 1) / 2) * 2 * m.parallelLinkOffset;
        LinkPath best = make(fan);
        int bestHits = hitsOther(best);
        for (int k = 1; k <= 8 && bestHits > 0; ++k) {
            for (int sign : {1, -1}) {
                LinkPath candidate = make(fan + sign * k * 0.5 * H);
                const int hits = hitsOther(candidate);
                if (hits < bestHits) {
                    best = candidate;
                    bestHits = hits;
                }
                if (bestHits == 0)
                    break;
            }
        }
        layout.links_.push_back(best);
        for (int s = 0; s <= 16; ++s)
            layout.bounds_ |= QRectF(best.pointAt(s / 16.0), QSizeF(1, 1));
    }
    layout.bounds_.adjust(-20, -20, 20, 20);
    return layout;
}

int TopologyLayout::buildingAt(QPointF p) const {
    for (const auto& b : buildings_)
        if (b.rect.contains(p))
            return b.index;
    return -1;
}

QLineF TopologyLayout::zoneConnector(int building, int zone) const {
    if (building < 0 || building >= int(buildings_.size()))
        return {};
    const Building& b = buildings_[std::size_t(building)];
    for (const auto& z : b.zones)
        if (zone >= z.firstZone && zone <= z.lastZone)
            return QLineF(z.rect.center().x(), b.uplinkBar.bottom(), z.rect.center().x(),
                          z.rect.top());
    return {};
}

} // namespace sa::views
