#include "optotalsmodel.h"

#include <algorithm>
#include <map>

namespace opscope {

OpTotalsModel::OpTotalsModel(QObject *parent) : QAbstractTableModel(parent) {}

void OpTotalsModel::setRuns(const std::vector<std::shared_ptr<const trace::Trace>> &runs)
{
    beginResetModel();
    m_runNames.clear();
    std::map<QString, std::vector<double>> totals;
    m_runTotal.assign(runs.size(), 0.0);
    for (std::size_t r = 0; r < runs.size(); ++r) {
        m_runNames.push_back(QString::fromStdString(runs[r]->name));
        for (const trace::Lane &l : runs[r]->lanes)
            for (const trace::Span &s : l.spans) {
                auto &v = totals[QString::fromStdString(runs[r]->strings[s.op])];
                v.resize(runs.size(), 0.0);
                v[r] += (s.end - s.start) * 1e3;
                m_runTotal[r] += (s.end - s.start) * 1e3;
            }
    }
    std::vector<std::pair<QString, std::vector<double>>> rows(totals.begin(), totals.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto &a, const auto &b) { return a.second[0] > b.second[0]; });
    m_ops.clear();
    m_ms.clear();
    for (auto &[op, ms] : rows) {
        ms.resize(runs.size(), 0.0);
        m_ops.push_back(op);
        m_ms.push_back(ms);
    }
    endResetModel();
}

int OpTotalsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_ops.size());
}

int OpTotalsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : 1 + int(m_runNames.size());
}

QVariant OpTotalsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_ops.size()))
        return {};
    if (role == Qt::TextAlignmentRole && index.column() > 0)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    if (index.column() == 0)
        return m_ops[std::size_t(index.row())];
    const std::size_t run = std::size_t(index.column() - 1);
    const double ms = m_ms[std::size_t(index.row())][run];
    const double share = m_runTotal[run] > 0 ? 100.0 * ms / m_runTotal[run] : 0.0;
    return QStringLiteral("%1 ms  (%2%)").arg(ms, 0, 'f', 3).arg(share, 0, 'f', 0);
}

QVariant OpTotalsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == 0 ? tr("Op") : m_runNames[std::size_t(section - 1)];
}

} // namespace opscope
