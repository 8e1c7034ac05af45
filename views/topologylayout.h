#pragma once
// Where everything of the topology view sits, in scene coordinates: regions
// as boxes holding a grid of building boxes, zones as tiles inside each
// building, and the path of every inter-building link. A plain value with
// no widgets, so its geometry is unit-tested without a window.
//
//   +-- region --------------------------------------------+
//   | +-- building -----------+        +-- building ----+  |
//   | | name       GPUs x GPU |--link--|                |  |
//   | | [== building uplink ==]|        |                |  |
//   | |  |    |    |    |      |        |                |  |
//   | | [z0] [z1] [z2] [z3]    |        |                |  |
//   | | chips ...              |        |                |  |
//   | +------------------------+        +----------------+  |
//   +------------------------------------------------------+

#include "model/cluster.h"

#include <QLineF>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <vector>

namespace sa::views {

struct LayoutMetrics {
    double buildingWidth = 340;
    double headerHeight = 48;    // name, GPU count and model
    double uplinkHeight = 22;    // the building's uplink bar
    double connectorHeight = 14; // zone uplinks between the bar and the tiles
    double zoneHeight = 36;
    double zoneGap = 6;
    int maxZoneColumns = 4; // wide enough tiles for "zone 12" and "3,072 GPUs"
    int maxZoneRows = 4;    // more zones than fit are summarised in the last tile
    double chipRowHeight = 24;
    int chipRows = 4;
    double padding = 10;
    double buildingGap = 150; // room for link labels between buildings
    double regionPadding = 22;
    double regionTitleHeight = 30;
    double regionGap = 130;
    double parallelLinkOffset = 18;
};

class TopologyLayout {
public:
    struct Zone {
        QRectF rect;
        int firstZone = 0; // zones this tile stands for (one, or the rest when elided)
        int lastZone = 0;
    };
    struct Building {
        int index = 0;  // into Cluster::buildings
        int region = 0; // into regions
        QRectF rect;
        QRectF header;
        QRectF uplinkBar;
        std::vector<Zone> zones;
        QRectF chipArea;
    };
    struct Region {
        QString name;
        QRectF rect;
        QRectF title;
        std::vector<int> buildings;
    };
    struct LinkPath {
        int link = 0; // into Cluster::links
        int a = 0;    // building indices
        int b = 0;
        QPointF from;    // on building a's border
        QPointF to;      // on building b's border
        QPointF control; // quadratic Bézier control point (the midpoint when straight)
        bool curved = false;
        QPointF labelAnchor; // the curve's midpoint
        QPointF pointAt(double t) const;
    };

    TopologyLayout() = default;
    // `aspect`: the width / height of the pane the layout is for; the
    // arrangement of regions and buildings closest to it wins.
    static TopologyLayout compute(const Cluster& cluster, const LayoutMetrics& metrics = {},
                                  double aspect = 1.6);

    const std::vector<Region>& regions() const { return regions_; }
    const std::vector<Building>& buildings() const { return buildings_; }
    const std::vector<LinkPath>& links() const { return links_; }
    const LayoutMetrics& metrics() const { return metrics_; }
    QRectF bounds() const { return bounds_; }

    // Building whose box contains `p`, or -1.
    int buildingAt(QPointF p) const;
    // Centre of a zone uplink's connector (bar to tile) for zone `zone`.
    QLineF zoneConnector(int building, int zone) const;

private:
    LayoutMetrics metrics_;
    std::vector<Region> regions_;
    std::vector<Building> buildings_;
    std::vector<LinkPath> links_;
    QRectF bounds_;
};

} // namespace sa::views
