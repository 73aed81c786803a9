#include "inspectormodel.h"

#include <QFont>

namespace opscope {

namespace {
// Internal ids: 0 for sections, section index + 1 for their rows.
constexpr quintptr kSection = 0;
} // namespace

InspectorModel::InspectorModel(QObject *parent) : QAbstractItemModel(parent) {}

void InspectorModel::setSections(std::vector<PropertySection> sections)
{
    beginResetModel();
    m_sections = std::move(sections);
    endResetModel();
}

QModelIndex InspectorModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid())
        return row < int(m_sections.size()) ? createIndex(row, column, kSection) : QModelIndex();
    if (parent.internalId() != kSection || parent.column() != 0)
        return {};
    const auto &rows = m_sections[std::size_t(parent.row())].rows;
    return row < int(rows.size()) ? createIndex(row, column, quintptr(parent.row()) + 1) : QModelIndex();
}

QModelIndex InspectorModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == kSection)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kSection);
}

int InspectorModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return int(m_sections.size());
    if (parent.internalId() == kSection && parent.column() == 0)
        return int(m_sections[std::size_t(parent.row())].rows.size());
    return 0;
}

int InspectorModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant InspectorModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid())
        return {};
    if (index.internalId() == kSection) {
        const PropertySection &s = m_sections[std::size_t(index.row())];
        if (role == Qt::DisplayRole && index.column() == PropertyColumn)
            return QString::fromStdString(s.title);
        if (role == Qt::FontRole) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    const PropertyRow &r = m_sections[std::size_t(index.internalId() - 1)].rows[std::size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return QString::fromStdString(index.column() == PropertyColumn ? r.property : r.value);
    case Qt::ToolTipRole: // the schema's documentation, else the whole text the column may elide
        return QString::fromStdString(!r.tooltip.empty()                ? r.tooltip
                                      : index.column() == PropertyColumn ? r.property
                                                                         : r.value);
    default: return {};
    }
}

QVariant InspectorModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == PropertyColumn ? tr("Property") : tr("Value");
}

} // namespace opscope
