#pragma once
// Per-op totals of profiled runs side by side: one row per op type, per run its total time and
// share of the run (sortable). Adapts traces only.

#include "trace/trace.h"

#include <QAbstractTableModel>
#include <memory>
#include <vector>

namespace opscope {

class OpTotalsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    explicit OpTotalsModel(QObject *parent = nullptr);
    void setRuns(const std::vector<std::shared_ptr<const trace::Trace>> &runs);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<QString> m_runNames;
    std::vector<QString> m_ops;
    std::vector<std::vector<double>> m_ms; // [op][run]
    std::vector<double> m_runTotal;        // busy ms per run
};

} // namespace opscope
