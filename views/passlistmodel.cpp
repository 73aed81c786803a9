#include "passlistmodel.h"

#include "categorycolors.h"
#include "passes/passdocs.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace opscope {

PassListModel::PassListModel(QObject *parent) : QAbstractTableModel(parent) {}

void PassListModel::setPipeline(const std::vector<std::string> &passes)
{
    beginResetModel();
    m_rows.clear();
    for (const std::string &p : passes)
        m_rows.push_back({p, true, -1, std::nullopt});
    m_hasResult = false;
    m_current = -1;
    endResetModel();
}

void PassListModel::setResult(const passes::PipelineResult &result)
{
    beginResetModel();
    std::size_t next = 0;
    for (Row &row : m_rows) {
        row.record = -1;
        row.result.reset();
        if (!row.enabled || next >= result.passes.size())
            continue;
        if (result.passes[next].name != row.name)
            continue;
        row.record = int(next);
        row.result = result.passes[next];
        row.result->snapshot.reset();
        ++next;
    }
    // Passes the pipeline appended (the export lowering) get rows of their own.
    for (; next < result.passes.size(); ++next) {
        Row row{result.passes[next].name, true, int(next), result.passes[next]};
        row.result->snapshot.reset();
        m_rows.push_back(std::move(row));
    }
    m_hasResult = true;
    endResetModel();
}

void PassListModel::clearResult()
{
    beginResetModel();
    for (Row &r : m_rows) {
        r.result.reset();
        r.record = -1;
    }
    m_hasResult = false;
    m_current = -1;
    endResetModel();
}

std::vector<std::string> PassListModel::enabledPasses() const
{
    std::vector<std::string> out;
    for (const Row &r : m_rows)
        if (r.enabled)
            out.push_back(r.name);
    return out;
}

void PassListModel::moveUp(int row)
{
    if (row <= 0 || row >= int(m_rows.size()))
        return;
    beginMoveRows({}, row, row, {}, row - 1);
    std::swap(m_rows[std::size_t(row)], m_rows[std::size_t(row - 1)]);
    endMoveRows();
}

void PassListModel::moveDown(int row)
{
    if (row < 0 || row + 1 >= int(m_rows.size()))
        return;
    beginMoveRows({}, row, row, {}, row + 2);
    std::swap(m_rows[std::size_t(row)], m_rows[std::size_t(row + 1)]);
    endMoveRows();
}

void PassListModel::setCurrentRow(int row)
{
    const int old = m_current;
    m_current = row;
    for (int r : {old, row})
        if (r >= 0 && r < int(m_rows.size()))
            emit dataChanged(index(r, 0), index(r, ColumnCount - 1));
}

int PassListModel::recordOf(int row) const
{
    return row >= 0 && row < int(m_rows.size()) ? m_rows[std::size_t(row)].record : -1;
}

int PassListModel::rowOfRecord(int record) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].record == record)
            return int(i);
    return -1;
}

int PassListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PassListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PassListModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_rows.size()))
        return {};
    const Row &r = m_rows[std::size_t(index.row())];
    if (role == Qt::CheckStateRole && index.column() == PassColumn)
        return r.enabled ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::BackgroundRole && index.row() == m_current)
        return QBrush(canvasTheme().dark ? QColor(0x2d, 0x4a, 0x7a) : QColor(0xd6, 0xe6, 0xff));
    if (role == Qt::ForegroundRole && (!r.enabled || (r.result && !r.result->changed)))
        return QBrush(QColor(0x90, 0x90, 0x90));
    if (role == Qt::FontRole && r.result && r.result->changed && index.column() == PassColumn) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::TextAlignmentRole && index.column() >= NodesColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        // The pass's own one-line description (its header's first sentence), and why it was
        // rolled back when it was; the full name too, since the column may elide it.
        QString tip = QStringLiteral("<b>%1</b><br>%2")
                          .arg(QString::fromStdString(r.name).toHtmlEscaped(),
                               QString::fromStdString(passes::passSummary(r.name)).toHtmlEscaped());
        if (r.result && !r.result->failure.empty())
            tip += QStringLiteral("<br><br>") +
                   tr("Rolled back: %1").arg(QString::fromStdString(r.result->failure).toHtmlEscaped());
        return tip;
    }
    if (role == DocumentationRole)
        return QString::fromStdString(std::string(passes::passDocumentation(r.name)));
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case PassColumn: return QString::fromStdString(r.name);
    case ChangedColumn:
        if (!r.result)
            return {};
        return !r.result->failure.empty() ? tr("rolled back") : r.result->changed ? tr("yes") : tr("no");
    case NodesColumn:
        return r.result ? QStringLiteral("%1 → %2").arg(r.result->nodesBefore).arg(r.result->nodesAfter)
                        : QVariant();
    case TimeColumn: return r.result ? QString::number(r.result->ms, 'f', 2) : QVariant();
    case MatchesColumn: return r.result ? QVariant(int(r.result->changes.matches.size())) : QVariant();
    default: return {};
    }
}

bool PassListModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!index.isValid() || role != Qt::CheckStateRole || index.column() != PassColumn)
        return false;
    m_rows[std::size_t(index.row())].enabled = value.toInt() == Qt::Checked;
    emit dataChanged(this->index(index.row(), 0), this->index(index.row(), ColumnCount - 1));
    return true;
}

Qt::ItemFlags PassListModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == PassColumn)
        f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant PassListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case PassColumn: return tr("Pass");
    case ChangedColumn: return tr("Changed");
    case NodesColumn: return tr("Nodes");
    case TimeColumn: return tr("ms");
    case MatchesColumn: return tr("Matches");
    default: return {};
    }
}

} // namespace opscope
