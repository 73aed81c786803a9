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
        // A GPU's time is its own record's (stream lanes), not its launches' too; the CUDA API
        // calls are the host's, not an op's, and waits are no op's anywhere (core's opSeconds
        // leaves them out alike: a host lane that overlapping calls split in two had no label).
        const std::vector<bool> queuedOnly = trace::queuedOnlyLanes(*runs[r]);
        for (std::size_t i = 0; i < runs[r]->lanes.size(); ++i) {
            const trace::Lane &l = runs[r]->lanes[i];
            if (queuedOnly[i] || (trace::isHostLane(l.device) && !l.label.empty()))
                continue;
            for (const trace::Span &s : l.spans) {
                if (s.category == trace::kIdleCategory)
                    continue;
                auto &v = totals[QString::fromStdString(runs[r]->strings[s.op])];
                v.resize(runs.size(), 0.0);
                v[r] += (s.end - s.start) * 1e3;
                m_runTotal[r] += (s.end - s.start) * 1e3;
            }
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
    // Cells stay narrow (the unit is in the header) so every run's column fits beside the
    // timeline; the share of the run is in the tooltip.
    if (role == Qt::ToolTipRole)
        return tr("%1: %2 ms in %3, %4 % of its op time")
            .arg(m_ops[std::size_t(index.row())])
            .arg(ms, 0, 'f', 3)
            .arg(m_runNames[run])
            .arg(share, 0, 'f', 1);
    return QStringLiteral("%1").arg(ms, 0, 'f', ms < 100 ? 3 : 1);
}

QVariant OpTotalsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return {};
    if (section == 0)
        return tr("Op");
    const QString name = m_runNames[std::size_t(section - 1)];
    if (role == Qt::ToolTipRole)
        return tr("%1: milliseconds per op type").arg(name);
    // "serial, 2 threads" → two lines: the header, not the run's name, sets no column's width.
    QString shown = name;
    shown.replace(QStringLiteral(", "), QStringLiteral("\n"));
    return shown + QStringLiteral("\nms");
}

} // namespace opscope
