#pragma once
// A two-level tree (section → property, value) over core's PropertySection lists: the inspector's
// node, initializer and tensor pages. Adapts plain data only.

#include "inspect/inspection.h"

#include <QAbstractItemModel>
#include <vector>

namespace opscope {

class InspectorModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column
    {
        PropertyColumn,
        ValueColumn,
        ColumnCount
    };

    explicit InspectorModel(QObject *parent = nullptr);

    void setSections(std::vector<PropertySection> sections);
    void clear() { setSections({}); }
    const std::vector<PropertySection> &sections() const { return m_sections; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<PropertySection> m_sections;
};

} // namespace opscope
