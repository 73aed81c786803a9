#pragma once
// The passes panel's table: the pipeline to run (each pass toggled on/off, reorderable) and, after
// a run, what each pass did (changed, nodes before → after, time, pattern matches). The pass shown
// in the pass stepper is marked.

#include "passes/pipeline.h"

#include <QAbstractTableModel>
#include <optional>
#include <vector>

namespace opscope {

class PassListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        PassColumn,
        ChangedColumn,
        NodesColumn,
        TimeColumn,
        MatchesColumn,
        ColumnCount
    };

    explicit PassListModel(QObject *parent = nullptr);

    void setPipeline(const std::vector<std::string> &passes);
    // Results of a run over the enabled passes, in order.
    void setResult(const passes::PipelineResult &result);
    void clearResult();
    std::vector<std::string> enabledPasses() const;
    bool hasResult() const { return m_hasResult; }
    void moveUp(int row);
    void moveDown(int row);
    // The row of the pass shown by the stepper (-1: none).
    void setCurrentRow(int row);
    int currentRow() const { return m_current; }
    // The record index (into PipelineResult::passes) of a row, or -1.
    int recordOf(int row) const;
    int rowOfRecord(int record) const;

    // The pass's documentation (its header comment with the ASCII diagram), for the panel below.
    static constexpr int DocumentationRole = Qt::UserRole + 1;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        std::string name;
        bool enabled = true;
        int record = -1;
        std::optional<passes::PassRecord> result; // without its snapshot (the window keeps those)
    };
    std::vector<Row> m_rows;
    bool m_hasResult = false;
    int m_current = -1;
};

} // namespace opscope
