#pragma once
// Every link and uplink of the latest evaluation as a table: the numbers
// behind the heatmap, sortable.

#include "cost/evaluation.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <memory>

namespace sa::views {

class LinkTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        Tier,
        Capacity,
        Latency,
        Technology,
        BytesPerStep,
        Busy,
        Utilization,
        PeakUtilization,
        Dims,
        ColumnCount
    };
    // Raw numbers for sorting (bytes, seconds, fractions).
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit LinkTableModel(QObject* parent = nullptr);

    void setEvaluation(std::shared_ptr<const Evaluation> evaluation);
    std::shared_ptr<const Evaluation> evaluation() const { return evaluation_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Evaluation> evaluation_;
};

// The Links tab's order: inter-building links above the zone and building
// uplinks whichever column sorts and in either direction (the links that
// cross buildings are what the tab is read for), then by the column; the
// Tier column sorts by tier alone.
class LinkSortProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit LinkSortProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

} // namespace sa::views
