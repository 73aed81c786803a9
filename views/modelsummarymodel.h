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
        ElideModeRole,                    // Qt::TextElideMode for the property column's text
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

    // Names of one list cut to the path segments ('/') that tell them apart, keeping each one's
    // own last segment: "model/conv2d_3/Conv2D_weights_fused_bn" among other convolutions' reads
    // "conv2d_3/Conv2D_weights_fused_bn"; dropped runs inside a name read "…". Elided from the
    // right, the part that differs stays in view (elided from the left, every tf2onnx weight read
    // "…onv2D_weights_fused_bn"; from the middle, every layer of a BERT read the same).
    static std::vector<QString> distinguishingNames(const std::vector<QString> &names);

private:
    struct Row
    {
        QString property;
        QString value;
        QVariant sortValue;
        QString shown; // the property as displayed, where it differs (tooltip: the whole)
    };
    struct Section
    {
        QString title;
        std::vector<Row> rows;
    };
    std::vector<Section> m_sections;
};

} // namespace opscope
