#pragma once
// A two-level tree over core's ModelSummary (sections → rows, two columns: property, value):
// the "Model" page of the inspector. Adapts plain data only; no logic of its own.

#include "ir/summary.h"

#include <QAbstractItemModel>
#include <QString>
#include <vector>

namespace opscope {

class ModelSummaryModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column
    {
        PropertyColumn,
        ValueColumn,
        ColumnCount
    };
    enum Role
    {
        SortValueRole = Qt::UserRole + 1, // numbers as numbers, for sorting
    };

    explicit ModelSummaryModel(QObject *parent = nullptr);

    void setSummary(const ModelSummary &summary, const std::vector<std::string> &warnings = {});
    void clear();

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        QString property;
        QString value;
        QVariant sortValue;
    };
    struct Section
    {
        QString title;
        std::vector<Row> rows;
    };
    std::vector<Section> m_sections;
};

} // namespace opscope
