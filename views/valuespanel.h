#pragma once
// The inspector's Values tab: the values of the selected weights and constants. Small tensors
// (shapes, Reshape targets, scalars, Constant values) are printed in full; large ones are a
// scrollable table through two chosen axes with the others fixed, like a debugger's array view,
// with statistics, NaN/Inf counts and a histogram above.

#include "ir/tensor.h"

#include <QAbstractTableModel>
#include <QWidget>
#include <atomic>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class QPlainTextEdit;
class QSpinBox;
class QStackedWidget;
class QTableView;
class QHBoxLayout;

namespace opscope {

class TensorSlice;
struct TensorStats;

// Thin model over core's TensorSlice: cells are formatted on demand, so a 10⁷-element weight
// costs nothing until scrolled to.
class TensorTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    explicit TensorTableModel(QObject *parent = nullptr);
    ~TensorTableModel() override;
    void setSlice(std::optional<TensorSlice> slice);
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::unique_ptr<TensorSlice> m_slice;
};

class ValuesPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ValuesPanel(QWidget *parent = nullptr);
    ~ValuesPanel() override; // stops a statistics job still reading

    // The tensors of the current selection (a node's weights, a clicked initializer), by name.
    void setTensors(std::vector<Tensor> tensors);
    // Constants, then values a run computed (marked in the chooser, and shown first).
    void setTensors(std::vector<Tensor> constants, std::vector<Tensor> computed);
    void showTensor(int index);

    // For tests: what is shown.
    QString summaryText() const;
    QString fullText() const;   // small tensors; empty when the table is shown
    QString probeNoteText() const; // what the last probe said (or how far it got)
    TensorTableModel *table() const { return m_model; }
    void setAxes(int rowAxis, int colAxis, std::vector<std::int64_t> fixed);
    bool statisticsPending() const { return m_statsPending; }
    // The "run once" row under the chooser: shown when the selection has values only a run
    // computes (activations); `note` says what the last run did or why it cannot.
    void setProbeState(bool available, bool running, const QString &note);

signals:
    void probeRequested(); // the user asked for the selected node's activations

protected:
    void showEvent(QShowEvent *event) override;

private:
    void showStatistics(const TensorStats &s);
    void startStatistics();
    void rebuildAxes();
    void updateSlice();

    std::vector<Tensor> m_tensors;
    int m_current = -1;
    QString m_heading; // name, shape, count: shown while the statistics are computed
    // Statistics of a tensor above kInlineStatsElements are read in the background: the weight
    // may be a mapped 1 GiB file. A newer selection cancels the old job and drops its answer.
    std::shared_ptr<std::atomic<bool>> m_statsCancel;
    int m_statsGeneration = 0;
    bool m_statsPending = false;
    QComboBox *m_chooser;
    QWidget *m_probeRow;
    QPushButton *m_probe;
    QLabel *m_probeNote;
    QLabel *m_summary;
    QWidget *m_histogram;
    QWidget *m_axes;
    QHBoxLayout *m_axesLayout;
    QComboBox *m_rowAxis = nullptr, *m_colAxis = nullptr;
    std::vector<QSpinBox *> m_fixed;
    QStackedWidget *m_stack;
    QPlainTextEdit *m_text;
    QTableView *m_view;
    TensorTableModel *m_model;
};

} // namespace opscope
